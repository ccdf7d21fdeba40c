// Current and superseded units from the plan records.
#include "storage/unit_standing.hpp"

#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "storage/plan_records.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

// The slot in a unit's provenance ({"slot", "params", ...}), or "" when it has none.
std::string slot_of(const std::string& provenance) {
  const nlohmann::json j = nlohmann::json::parse(provenance, nullptr, false);
  if (j.is_object() && j.contains("slot") && j["slot"].is_string()) return j["slot"].get<std::string>();
  return "";
}

}  // namespace

std::map<std::string, UnitStanding> unit_standings(const Store& store) {
  const std::vector<std::string> committed = store.committed_units();
  const std::set<std::string> present(committed.begin(), committed.end());
  const std::vector<PlanRecord> records = read_plan_records(store.layout().plans_dir());
  std::map<std::string, UnitStanding> out;
  std::map<std::string, std::int64_t> latest_for_slot;  // slot -> seq of the latest record listing it
  for (const auto& r : records)
    for (const auto& [slot, id] : r.slots) {
      latest_for_slot[slot] = r.seq;
      if (!present.count(id)) continue;
      UnitStanding& s = out[id];
      s.slot = slot;
      s.planned_by = r.seq;
    }
  for (const auto& id : committed) {
    if (out.count(id)) continue;
    std::string slot = slot_of(store.read_unit_params(id));
    out[id].slot = slot.empty() ? "unit:" + id : slot;
  }
  // Commit order, for slots that no record lists: the last "committed" line wins.
  std::map<std::string, std::size_t> committed_at;
  const auto events = store.journal_events();
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].event == "committed") committed_at[events[i].unit] = i + 1;
  // slot -> its current unit; may be uncommitted: then none is
  const std::map<std::string, std::string> current_of = latest_slots(records);
  std::map<std::string, std::string> newest;  // slot -> most recently committed unit, for unlisted slots
  for (const auto& [id, s] : out) {
    if (latest_for_slot.count(s.slot)) continue;
    auto it = newest.find(s.slot);
    if (it == newest.end() || committed_at[id] > committed_at[it->second] ||
        (committed_at[id] == committed_at[it->second] && id > it->second))
      newest[s.slot] = id;
  }
  for (auto& [id, s] : out) {
    const auto listed = current_of.find(s.slot);
    s.current = listed != current_of.end() ? listed->second == id : newest[s.slot] == id;
  }
  return out;
}

}  // namespace linsweep
