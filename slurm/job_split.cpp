// Splitting pending units into jobs: whole, per model, or by dependency depth into job arrays.
#include "slurm/job_split.hpp"

#include <algorithm>
#include <map>

#include "common/errors.hpp"

namespace linsweep {
namespace {

std::size_t units_per_task(const std::string& split) {
  long long k = 0;
  try {
    std::size_t used = 0;
    k = std::stoll(split.substr(6), &used);
    if (used != split.size() - 6) k = 0;
  } catch (const std::exception&) {
    k = 0;
  }
  if (k < 1) throw InputError("--split: '" + split + "' needs a positive unit count (units:K)");
  return static_cast<std::size_t>(k);
}

// Depth of every unit among `units` (see split_units); the order is a dependency order, so a
// unit's dependencies inside have their depth already.
std::vector<std::size_t> depths(const std::vector<SplitUnit>& units) {
  std::map<std::string, std::size_t> index;
  std::vector<std::size_t> depth(units.size(), 0);
  for (std::size_t i = 0; i < units.size(); ++i) {
    for (const auto& d : units[i].deps)
      if (auto it = index.find(d); it != index.end()) depth[i] = std::max(depth[i], depth[it->second] + 1);
    index[units[i].id] = i;
  }
  return depth;
}

// Fills each job's `after` from the units' dependencies on units of other jobs.
void link(const std::vector<SplitUnit>& units, std::vector<SplitJob>* jobs) {
  std::map<std::string, std::size_t> job_of;
  for (std::size_t j = 0; j < jobs->size(); ++j)
    for (const auto& task : (*jobs)[j].tasks)
      for (std::size_t u : task) job_of[units[u].id] = j;
  for (std::size_t j = 0; j < jobs->size(); ++j)
    for (const auto& task : (*jobs)[j].tasks)
      for (std::size_t u : task)
        for (const auto& d : units[u].deps)
          if (auto it = job_of.find(d); it != job_of.end() && it->second != j) (*jobs)[j].after.insert(it->second);
}

}  // namespace

std::vector<SplitJob> split_units(const std::vector<SplitUnit>& units, const std::string& split) {
  std::vector<SplitJob> jobs;
  if (split == "none") {
    jobs.push_back({{{}}, false, {}});
    for (std::size_t i = 0; i < units.size(); ++i) jobs[0].tasks[0].push_back(i);
  } else if (split == "model") {
    std::map<std::string, std::size_t> slot;
    for (std::size_t i = 0; i < units.size(); ++i) {
      auto [it, fresh] = slot.emplace(units[i].model, jobs.size());
      if (fresh) jobs.push_back({{{}}, false, {}});
      jobs[it->second].tasks[0].push_back(i);
    }
  } else if (split.rfind("units:", 0) == 0) {
    const std::size_t k = units_per_task(split);
    const std::vector<std::size_t> depth = depths(units);
    const std::size_t deepest = units.empty() ? 0 : *std::max_element(depth.begin(), depth.end());
    for (std::size_t d = 0; d <= deepest && !units.empty(); ++d) {
      SplitJob job;
      for (std::size_t i = 0; i < units.size(); ++i) {
        if (depth[i] != d) continue;
        if (job.tasks.empty() || job.tasks.back().size() == k) job.tasks.emplace_back();
        job.tasks.back().push_back(i);
      }
      job.array = job.tasks.size() > 1;
      jobs.push_back(std::move(job));
    }
  } else {
    throw InputError("--split: '" + split + "' is not none, model or units:K");
  }
  link(units, &jobs);
  return jobs;
}

}  // namespace linsweep
