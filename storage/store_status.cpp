// Status from the journal: last event per unit wins; the unit files are the truth for "committed".
#include "storage/store_status.hpp"

#include <set>

#include "storage/plan_records.hpp"
#include "storage/store.hpp"
#include "storage/store_lock.hpp"
#include "storage/unit_standing.hpp"

namespace linsweep {

int StoreStatus::committed() const {
  int n = 0;
  for (const auto& [k, c] : by_kind) n += c.committed;
  return n;
}

double StoreStatus::units_per_hour() const {
  const double span = last_event - first_event;
  return span > 0 ? committed() * 3600.0 / span : 0;
}

StoreStatus summarize_store(const Store& store) {
  StoreStatus st;
  auto kind_of = [](const std::string& id) {
    const auto dash = id.rfind('-');
    return dash == std::string::npos ? id : id.substr(0, dash);
  };
  const auto ids = store.committed_units();
  const std::set<std::string> committed(ids.begin(), ids.end());
  std::map<std::string, const JournalEvent*> last;
  std::map<std::string, int> failures;
  std::map<std::string, double> durations;
  std::map<std::string, std::int64_t> tokens;
  const auto events = store.journal_events();
  for (const auto& e : events) {
    if (st.first_event == 0 || e.time < st.first_event) st.first_event = e.time;
    st.last_event = std::max(st.last_event, e.time);
    last[e.unit] = &e;
    if (e.event == "failed") failures[e.unit]++;
    if (e.event == "committed") {
      durations[e.unit] = e.duration;
      tokens[e.unit] = e.tokens;
    }
  }
  const std::map<std::string, UnitStanding> standings = unit_standings(store);
  for (const auto& id : ids) {
    auto& c = st.by_kind[kind_of(id)];
    const auto s = standings.find(id);
    if (s != standings.end() && !s->second.current) {
      c.superseded++;
      continue;
    }
    c.committed++;
    c.seconds += durations.count(id) ? durations[id] : 0;
    c.tokens += tokens.count(id) ? tokens[id] : 0;
  }
  std::set<std::string> planned;  // what the latest plannings ask for
  for (const auto& [slot, id] : latest_slots(read_plan_records(store.layout().plans_dir()))) planned.insert(id);
  for (const auto& [unit, e] : last) {
    if (committed.count(unit)) continue;
    auto& c = st.by_kind[kind_of(unit)];
    if (e->event == "failed") {
      c.failed++;
      st.failures.push_back({unit, e->host, e->error, e->rank, failures[unit]});
    } else {
      c.unfinished++;
      st.unfinished.push_back(unit);
    }
  }
  // Each unit in one column: a started, failed or interrupted unit is not also pending.
  for (const auto& id : planned)
    if (!committed.count(id) && !last.count(id)) st.by_kind[kind_of(id)].pending++;
  st.live_writer = live_writer(store.layout().dir());
  return st;
}

}  // namespace linsweep
