// The report's provenance from run.json, spec.yaml, the journal and the `units` table.
#include "presentation/provenance.hpp"

#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kRecordBytes = 1 << 20;  // run.json, as `resume` reads it
constexpr std::size_t kSpecBytes = 4 << 20;    // the spec's own limit

void read_run_record(const Store& store, Provenance* p) {
  const std::string path = store.layout().run_record();
  if (!is_regular_file(path)) return;
  try {
    const nlohmann::json j = read_json_file(path, kRecordBytes);
    if (j.is_object() && j.contains("spec") && j["spec"].is_string()) p->spec_path = j["spec"].get<std::string>();
    if (j.is_object() && j.contains("overrides") && j["overrides"].is_array())
      for (const auto& o : j["overrides"])
        if (o.is_string()) p->overrides.push_back(o.get<std::string>());
  } catch (const Error&) {
    // An unreadable record leaves the spec path unknown; the report says so.
  }
}

std::vector<Provenance::Host> journal_hosts(const Store& store) {
  std::map<std::string, Provenance::Host> by_host;
  for (const auto& e : store.journal_events()) {
    if (e.event != "committed") continue;
    Provenance::Host& h = by_host[e.host];
    h.host = e.host;
    h.committed++;
    if (h.first == 0 || e.time < h.first) h.first = e.time;
    h.last = std::max(h.last, e.time);
  }
  std::vector<Provenance::Host> out;
  for (auto& [name, h] : by_host) out.push_back(std::move(h));
  return out;
}

std::optional<Table> units_table(const Store& store, const std::map<std::string, Table>& tables) {
  if (auto it = tables.find("units"); it != tables.end() && !it->second.rows.empty()) return it->second;
  if (find_table_schema("units") == nullptr || !is_regular_file(store.consolidated_path())) return std::nullopt;
  try {
    Table t = read_consolidated_table(store.consolidated_path(), "units");
    if (!t.rows.empty()) return t;
  } catch (const StorageError&) {
    // A missing or stale store.h5: the journal's hosts and times still stand.
  }
  return std::nullopt;
}

// "a" or "a and b" of the non-empty names, or `none`.
std::string joined(const std::set<std::string>& names, const std::string& none) {
  std::string out;
  for (const auto& n : names)
    if (!n.empty()) out += (out.empty() ? "" : " and ") + n;
  return out.empty() ? none : out;
}

// Per model (the second part of a unit's slot "<kind>/<model>/…"), the compute and activation
// dtypes of its current units; units written before the columns carry none.
std::vector<std::string> precision_of(const Table& units) {
  const int slot = units.column_index("slot"), current = units.column_index("current");
  const int dtype = units.column_index("dtype"), act = units.column_index("activation_dtype");
  if (slot < 0 || dtype < 0 || act < 0) return {};
  std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> by_model;
  for (const Row& r : units.rows) {
    if (current >= 0 && std::get<std::int64_t>(r[static_cast<std::size_t>(current)]) != 1) continue;
    const std::string& s = std::get<std::string>(r[static_cast<std::size_t>(slot)]);
    const auto a = s.find('/'), b = s.find('/', a + 1);
    if (a == std::string::npos) continue;
    auto& [compute, shards] = by_model[s.substr(a + 1, b == std::string::npos ? std::string::npos : b - a - 1)];
    compute.insert(std::get<std::string>(r[static_cast<std::size_t>(dtype)]));
    shards.insert(std::get<std::string>(r[static_cast<std::size_t>(act)]));
  }
  std::vector<std::string> out;
  for (const auto& [model, p] : by_model)
    out.push_back(model + ": " + joined(p.first, "unrecorded") + " compute, " + joined(p.second, "no") +
                  " activation shards");
  return out;
}

}  // namespace

Provenance read_provenance(const Store& store, const std::map<std::string, Table>& tables) {
  Provenance p;
  p.store = store.dir();
  read_run_record(store, &p);
  if (is_regular_file(store.spec_path())) p.spec_text = read_file(store.spec_path(), kSpecBytes);
  p.plans = read_plan_records(store.layout().plans_dir());
  p.status = summarize_store(store);
  p.hosts = journal_hosts(store);
  p.units = units_table(store, tables);
  if (p.units) p.precision = precision_of(*p.units);
  return p;
}

std::string utc_time(double seconds) {
  if (seconds <= 0) return "";
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace linsweep
