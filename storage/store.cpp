// Store directory management and atomic commits.
#include "storage/store.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <system_error>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/path_confinement.hpp"
#include "storage/hdf5.hpp"
#include "storage/plan_records.hpp"
#include "storage/setting_columns.hpp"
#include "storage/table_io.hpp"
#include "storage/unit_standing.hpp"
#include "storage/units_table.hpp"

namespace linsweep {
namespace {

// `e` with the path of the file being written in front, unless it is there already.
DiskFullError disk_full_at(const std::string& path, const DiskFullError& e) {
  return DiskFullError(message_at(path, e.what()));
}

// Removes files named .tmp-* under `dir` (recursively when `recurse`): what writers killed
// mid-write left behind. Only a writer that excludes every other writer may call it.
void remove_temporaries(const std::string& dir, bool recurse) {
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_symlink(ec)) continue;
    if (name.rfind(".tmp-", 0) == 0 && it->is_regular_file(ec))
      stale.push_back(it->path());
    else if (recurse && it->is_directory(ec))
      remove_temporaries(it->path().string(), true);
  }
  for (const auto& f : stale) std::filesystem::remove(f, ec);
}

void make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    throw StorageError(path + ": cannot create directory: " + std::strerror(errno));
}

// Unit ids become file names: only [A-Za-z0-9._-], not starting with '.'. `file`, when
// given, is the file the id was read from (a stray file in units/), named in the message.
void check_unit_id(const std::string& id, const std::string& file = "") {
  constexpr std::string_view kArrays = ".arrays";  // the suffix of a unit's arrays file
  bool ok = !id.empty() && id.size() <= 200 && id[0] != '.' &&
            !(id.size() >= kArrays.size() && id.compare(id.size() - kArrays.size(), kArrays.size(), kArrays) == 0);
  for (char c : id) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  if (ok) return;
  if (!file.empty())
    throw StorageError(
        printable(file) + ": not a unit file of this store (unit ids are letters, digits, '.', '-' and '_')",
        ExitCode::kBadInput);
  throw StorageError("unit id '" + printable(id) + "' is not a safe file name", ExitCode::kBadInput);
}

}  // namespace

void require_store_confined(const std::string& dir) {
  std::vector<std::string> entries = {
      "lock", "store.json",  "spec.yaml",   "journal.jsonl", "run.json", "store.h5", "store.h5.lock", "units",
      "logs", "activations", "checkpoints", "models",        "slurm",    "report",   "figures",       "plans"};
  // One level further where workers create per-unit directories (activations/<id>/<split>/...).
  for (const char* sub : {"activations", "checkpoints", "models"}) {
    std::error_code ec;
    if (std::filesystem::is_symlink(dir + "/" + sub, ec)) continue;  // reported below
    for (std::filesystem::directory_iterator it(dir + "/" + sub, ec), end; !ec && it != end; it.increment(ec))
      entries.push_back(std::string(sub) + "/" + it->path().filename().string());
  }
  require_real_entries(dir, entries);
}

void make_output_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec) return;
  const bool user_error = ec == std::errc::not_a_directory || ec == std::errc::file_exists;
  throw StorageError(dir + ": cannot create directory: " + ec.message(),
                     user_error ? ExitCode::kBadInput : ExitCode::kUnitsFailed);
}

Store Store::open_read(const std::string& dir) {
  Store s(dir);
  s.check_marker();
  return s;
}

Store Store::open_write(const std::string& dir, const std::string& spec_text, bool shared) {
  Store s(dir);
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !is_directory(dir))
    throw StorageError(dir + ": not a directory, so not a store", ExitCode::kBadInput);
  std::filesystem::create_directories(dir, ec);
  if (ec) throw StorageError(dir + ": cannot create the store directory: " + ec.message());
  require_store_confined(dir);  // before the lock: `lock` itself may be a planted link
  s.lock_ = std::make_unique<StoreLock>(dir, shared);
  if (is_regular_file(s.layout_.marker())) {
    s.check_marker();
  } else {
    atomic_write_text(
        s.layout_.marker(),
        nlohmann::json({{"format", "linsweep-store"}, {"schema_version", kStoreSchemaVersion}}).dump() + "\n");
  }
  if (!spec_text.empty() && !is_regular_file(s.spec_path())) atomic_write_text(s.spec_path(), spec_text);
  make_dir(s.layout_.units_dir());
  make_dir(s.layout_.logs_dir());
  s.journal_ = std::make_unique<JournalWriter>(s.layout_.journal());
  // Temporary files of writers that died mid-write (staged units, store.h5, run.json, activation
  // shards); only the exclusive lock holder may remove them (a shared holder's peers may be
  // writing right now). report/ and figures/ are left alone: `tables` and `plot` write there
  // without the lock.
  if (!shared) {
    remove_temporaries(s.layout_.units_dir(), false);
    remove_temporaries(dir, false);
    remove_temporaries(s.layout_.activations_dir(), true);
    s.remove_orphan_arrays();
    s.reconcile_journal();
  }
  return s;
}

void Store::remove_orphan_arrays() {
  // A writer killed between renaming a unit's arrays file and its unit file leaves the arrays
  // alone: not committed, and rewritten whole when the unit runs again.
  std::error_code ec;
  for (std::filesystem::directory_iterator it(layout_.units_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (n.size() <= 10 || n[0] == '.' || n.compare(n.size() - 10, 10, ".arrays.h5") != 0) continue;
    const std::string id = n.substr(0, n.size() - 10);
    if (!is_regular_file(layout_.unit_file(id))) std::filesystem::remove(it->path(), ec);
  }
}

void Store::reconcile_journal() {
  std::set<std::string> journaled;
  for (const auto& e : journal_events()) {
    if (e.event == "committed") journaled.insert(e.unit);
    if (e.event == "removed") journaled.erase(e.unit);
  }
  const std::vector<std::string> files = committed_units();
  for (const auto& id : files) {
    if (journaled.count(id)) continue;
    // Not fsynced, like every committed line: the unit file is what is committed, and a line
    // lost in a crash is written again by the next writer.
    journal_->append({.event = "committed", .unit = id, .recovered = true}, false);
    reconciliation_.recovered.push_back(id);
  }
  const std::set<std::string> present(files.begin(), files.end());
  for (const auto& id : journaled)
    if (!present.count(id)) reconciliation_.missing.push_back(id);
}

void Store::check_marker() const {
  const std::string marker = layout_.marker();
  if (!is_regular_file(marker))
    throw StorageError(dir_ + ": not a linsweep store (no store.json)", ExitCode::kBadInput);
  nlohmann::json j;
  try {
    j = read_json_file(marker, 1 << 20);
  } catch (const InputError& e) {
    throw StorageError(e.what(), ExitCode::kBadInput);
  }
  if (!j.is_object() || j.value("format", "") != "linsweep-store" || !j.contains("schema_version") ||
      !j["schema_version"].is_number_integer())
    throw StorageError(marker + ": not a linsweep store marker", ExitCode::kBadInput);
  const int v = j["schema_version"].get<int>();
  if (v > kStoreSchemaVersion)
    throw StorageError(marker + ": store schema version " + std::to_string(v) + " is newer than this build's " +
                           std::to_string(kStoreSchemaVersion) + "; use a newer linsweep",
                       ExitCode::kBadInput);
}

std::optional<std::string> Store::recovered_stale_lock() const { return lock_ ? lock_->stale_holder() : std::nullopt; }

void Store::commit(const UnitResult& unit, double duration_seconds, int rank, std::int64_t tokens) {
  if (!writable()) throw StorageError(dir_ + ": store is open read-only");
  check_unit_id(unit.unit_id);
  if (!unit.arrays.empty())
    atomic_replace(layout_.unit_arrays_file(unit.unit_id),
                   [&](const std::string& tmp) { write_unit_arrays_file(tmp, unit); });
  atomic_replace(layout_.unit_file(unit.unit_id), [&](const std::string& tmp) { write_unit_main_file(tmp, unit); });
  journal({.event = "committed", .unit = unit.unit_id, .rank = rank, .duration = duration_seconds, .tokens = tokens});
  remove_unit_checkpoints(unit.unit_id);
}

void Store::remove_unit_checkpoints(const std::string& unit_id) {
  // A committed unit never resumes: its training checkpoints only take space now.
  std::error_code ec;
  std::filesystem::remove_all(layout_.unit_checkpoints(unit_id), ec);
}

std::string Store::staging_path(const std::string& unit_id, int rank) const {
  check_unit_id(unit_id);
  return layout_.staged_unit(unit_id, rank);
}

std::string Store::stage(const UnitResult& unit, int rank) const {
  const std::string path = staging_path(unit.unit_id, rank);
  const std::string arrays = unit_arrays_path(path);
  try {
    write_unit_file(path, unit);
    if (!unit.arrays.empty()) sync_file(arrays);
    sync_file(path);
  } catch (const DiskFullError& e) {
    std::remove(path.c_str());  // a partial file only takes the space that is missing
    std::remove(arrays.c_str());
    throw disk_full_at(path, e);
  } catch (...) {
    std::remove(path.c_str());
    std::remove(arrays.c_str());
    throw;
  }
  return path;
}

void Store::commit_staged(const std::string& staged, const std::string& unit_id, double duration_seconds, int rank,
                          std::int64_t tokens, const std::string& host) {
  if (!writable()) throw StorageError(dir_ + ": store is open read-only");
  check_unit_id(unit_id);
  const UnitHeader u =
      read_unit_header(staged);  // stage() fsynced it; the header check catches a wrong or truncated file
  if (u.unit_id != unit_id) throw StorageError(staged + ": holds unit " + u.unit_id + ", not " + unit_id);
  if (u.arrays > 0) {  // the arrays first: a unit file never names arrays that are not there
    const std::string staged_arrays = unit_arrays_path(staged), final_arrays = layout_.unit_arrays_file(unit_id);
    if (std::rename(staged_arrays.c_str(), final_arrays.c_str()) != 0)
      throw_write_error(final_arrays + ": rename failed", errno);
  }
  const std::string final_path = layout_.unit_file(unit_id);
  if (std::rename(staged.c_str(), final_path.c_str()) != 0) throw_write_error(final_path + ": rename failed", errno);
  sync_directory(layout_.units_dir());
  journal({.event = "committed",
           .unit = unit_id,
           .host = host,
           .rank = rank,
           .duration = duration_seconds,
           .tokens = tokens});
  remove_unit_checkpoints(unit_id);
}

void Store::journal(const JournalEvent& event) {
  // Unit files decide what is committed; the journal is the audit trail. A commit has already
  // fsynced the file and the directory, so its journal line need not add a third flush.
  const bool durable = event.event == "failed" || event.event == "interrupted" || event.event == "removed";
  if (journal_)
    journal_->append(event, durable);
  else
    append_journal(layout_.journal(), event, durable);
}

std::string Store::unit_log_path(const std::string& unit_id) const {
  check_unit_id(unit_id);
  return layout_.unit_log(unit_id);
}

void Store::append_unit_log(const std::string& unit_id, const std::string& line) {
  if (!writable()) throw StorageError(dir_ + ": store is open read-only");
  const std::string path = unit_log_path(unit_id);
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
  const std::string text = std::string(stamp) + " " + line + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw_write_error(path + ": cannot open the unit log", errno);
  const int err = write_all(fd, text);
  ::close(fd);
  if (err != 0) throw_write_error(path + ": unit log write failed", err);
}

std::vector<JournalEvent> Store::journal_events() const { return read_journal(layout_.journal()); }

std::vector<std::string> Store::committed_units() const {
  std::vector<std::string> ids;
  DIR* d = ::opendir(layout_.units_dir().c_str());
  if (d == nullptr) return ids;
  while (const dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.empty() || n[0] == '.' || n.size() <= 3 || n.compare(n.size() - 3, 3, ".h5") != 0) continue;
    if (n.size() > 10 && n.compare(n.size() - 10, 10, ".arrays.h5") == 0) continue;  // a unit's arrays
    ids.push_back(n.substr(0, n.size() - 3));
  }
  ::closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool Store::is_committed(const std::string& unit_id) const { return is_regular_file(layout_.unit_file(unit_id)); }

UnitResult Store::read_unit(const std::string& unit_id) const {
  check_unit_id(unit_id, layout_.unit_file(unit_id));
  return read_unit_file(layout_.unit_file(unit_id));
}

std::string Store::read_unit_params(const std::string& unit_id) const {
  check_unit_id(unit_id, layout_.unit_file(unit_id));
  return read_unit_params_file(layout_.unit_file(unit_id));
}

std::int64_t Store::record_plan(PlanRecord record) {
  return append_plan_record(layout_.plans_dir(), std::move(record));
}

namespace {

UnitRow unit_row(const UnitResult& u, const UnitStanding& s) {
  const UnitProvenance& p = u.provenance;
  const bool known = !p.version.empty();  // schema-1 units carry no provenance
  return {.unit = u.unit_id,
          .kind = u.kind,
          .slot = s.slot,
          .params = u.params,
          .version = p.version,
          .host = p.host,
          .rank = known ? p.rank : -1,
          .group_ranks = known ? p.group_ranks : -1,
          .communicator = p.communicator,
          .started = known ? p.started : std::nan(""),
          .finished = known ? p.finished : std::nan(""),
          .current = s.current ? 1 : 0,
          .planned_by = s.planned_by,
          .dtype = p.dtype,
          .activation_dtype = p.activation_dtype,
          .peak_host_mib = p.peak_host_mib,
          .peak_device_mib = p.peak_device_mib};
}

}  // namespace

std::map<std::string, Table> Store::read_tables(Scope scope) const {
  const bool all = scope == Scope::kAll;
  auto with_store_columns = [all](Table t) {
    t.columns.push_back(Column{.name = "unit", .type = ColumnType::kString});
    if (all) {
      t.columns.push_back({"current", ColumnType::kInt});
      t.columns.push_back({"planned_by", ColumnType::kInt});
    }
    return t;
  };
  std::map<std::string, Table> out;
  for (const auto& schema : table_schemas())
    if (schema.name != units_table().name()) out.emplace(schema.name, with_store_columns(schema));
  Table units = units_table().schema();
  std::map<std::string, nlohmann::json> settings;  // unit id -> its setting, for units with one
  const std::map<std::string, UnitStanding> standings = unit_standings(*this);
  for (const auto& id : committed_units()) {
    const auto st = standings.find(id);
    if (st == standings.end()) continue;  // committed after the standings were read
    if (!all && !st->second.current) continue;
    check_unit_id(id, layout_.unit_file(id));
    UnitResult u;
    try {
      u = read_unit_tables(layout_.unit_file(id));  // never the arrays files
    } catch (const StorageError&) {
      if (!is_regular_file(layout_.unit_file(id))) continue;  // removed by a gc since it was listed
      throw;
    }
    units.rows.push_back(units_table().row(unit_row(u, st->second)));
    if (nlohmann::json s = setting_of(u.params); !s.empty()) settings.emplace(id, std::move(s));
    for (const auto& t : u.tables) {
      if (t.name == units.name) continue;  // the store's own table, never a unit's
      auto it = out.find(t.name);
      if (it == out.end())  // a table this build has no schema for: as the file declares it
        it = out.emplace(t.name, with_store_columns(Table{t.name, t.columns, {}})).first;
      Table& dest = it->second;
      if (dest.columns.size() != t.columns.size() + (all ? 3 : 1))
        throw StorageError(layout_.unit_file(id) + ": table '" + t.name + "' has other columns than in other units",
                           ExitCode::kBadInput);
      for (auto row : t.rows) {
        row.emplace_back(id);
        if (all) {
          row.emplace_back(std::int64_t{st->second.current ? 1 : 0});
          row.emplace_back(st->second.planned_by);
        }
        dest.rows.push_back(std::move(row));
      }
    }
  }
  out[units.name] = std::move(units);
  add_setting_columns(out, settings);
  return out;
}

Table Store::read_table(const std::string& name, Scope scope) const {
  std::map<std::string, Table> tables = read_tables(scope);
  auto it = tables.find(name);
  if (it == tables.end()) empty_table(name);  // an unknown name fails with the list of known tables
  return std::move(it->second);
}

std::size_t Store::rebuild_consolidated(bool force) {
  if (!writable() && !force) throw StorageError(dir_ + ": rebuilding the consolidated file needs the store's lock");
  // Writers sharing the store (split jobs) rebuild in turn, each reading the units inside the
  // lock, so that a slower rebuild never replaces a newer one with fewer units.
  const std::string lock_path = layout_.consolidated_lock();
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) throw StorageError(lock_path + ": cannot open: " + std::strerror(errno));
  struct Unlock {
    int fd;
    ~Unlock() { ::flock(fd, LOCK_UN), ::close(fd); }
  } unlock{lock_fd};
  while (::flock(lock_fd, LOCK_EX) != 0)
    if (errno != EINTR) throw StorageError(lock_path + ": cannot lock: " + std::strerror(errno));
  const std::map<std::string, Table> tables = read_tables();  // the current units, and their `units` rows
  const std::size_t units = tables.at(units_table().name()).rows.size();
  atomic_replace(consolidated_path(), [&](const std::string& tmp) {
    silence_hdf5_errors();
    H5Id file = H5_FILE(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    write_int_attribute(file, "schema_version", kStoreSchemaVersion);
    write_int_attribute(file, "units", static_cast<long long>(units));
    write_string_attribute(file, "format", "linsweep-store");
    H5Id group = H5_GROUP(H5Gcreate2(file, "tables", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    for (const auto& [name, t] : tables) write_table(group, t);
    group.reset();
    file.close("H5Fclose(store.h5)");
  });
  return units;
}

Table read_consolidated_table(const std::string& path, const std::string& name) {
  silence_hdf5_errors();
  Table schema = empty_table(name);
  if (schema.column_index("unit") < 0)
    schema.columns.push_back(Column{.name = "unit", .type = ColumnType::kString});  // not `units`
  try {
    if (!is_regular_file(path)) throw StorageError("missing; run `linsweep rebuild STORE`");
    H5Id file;
    try {
      file = open_hdf5_read(path);
    } catch (const StorageError& e) {
      throw StorageError(std::string(e.what()) + "; run `linsweep rebuild STORE`");
    }
    const long long v = read_int_attribute(file, "schema_version");
    if (v > kStoreSchemaVersion)
      throw StorageError("schema version " + std::to_string(v) + " is newer than this build's " +
                         std::to_string(kStoreSchemaVersion));
    H5Id group = H5_GROUP(H5Gopen2(file, "tables", H5P_DEFAULT));
    if (H5Lexists(group, name.c_str(), H5P_DEFAULT) > 0)  // the columns a sweep's settings added
      for (const Column& c : stored_schema(group, name).columns)
        if (schema.column_index(c.name) < 0)
          schema.columns.push_back(Column{.name = c.name, .type = c.type, .required = false});
    return read_table(group, schema);
  } catch (const Error& e) {
    throw StorageError(path + ": " + e.what(), ExitCode::kBadInput);
  }
}

}  // namespace linsweep
