// A store's recorded Slurm jobs and the scheduler's view of them.
#include "orchestrator/submit/slurm_jobs.hpp"

#include <nlohmann/json.hpp>
#include <set>

#include "storage/store.hpp"

namespace linsweep {

RecordedJobs recorded_jobs(const std::string& store_dir) {
  RecordedJobs r;
  r.records = read_job_records(store_dir);
  if (r.records.empty()) return r;
  r.scheduled = scheduled_jobs(r.records);
  std::vector<std::string> ids;
  for (const auto& s : r.scheduled) ids.push_back(s.id);
  r.states = query_jobs(ids);
  return r;
}

nlohmann::json slurm_jobs_status(const std::string& store_dir) {
  nlohmann::json out = nlohmann::json::array();
  const RecordedJobs jobs = recorded_jobs(store_dir);
  if (jobs.records.empty()) return out;
  const Store store = Store::open_read(store_dir);
  const auto committed_list = store.committed_units();
  const std::set<std::string> committed(committed_list.begin(), committed_list.end());
  for (const auto& s : jobs.scheduled) {
    const JobInfo& j = jobs.states.at(s.id);
    std::size_t done = 0;
    for (const auto& u : s.units) done += committed.count(u);
    out.push_back({{"job_id", s.id},
                   {"name", s.record->name},
                   {"state", j.state},
                   {"reason", j.reason},
                   {"restarts", j.restarts},
                   {"source", j.source},
                   {"alive", j.alive()},
                   {"units", s.units.size()},
                   {"units_committed", done},
                   {"all_pending", s.units.empty()},
                   {"dependencies", s.record->after},
                   {"script", s.record->script},
                   {"array_job", s.record->tasks.empty() ? "" : s.record->job_id}});
  }
  return out;
}

}  // namespace linsweep
