// The Slurm time limit as a per-unit admission check.
#include "orchestrator/run/deadline_guard.hpp"

#include <chrono>
#include <cstdlib>

#include "common/errors.hpp"
#include "orchestrator/plan/plan.hpp"
#include "storage/store.hpp"

namespace linsweep {

DeadlineGuard::DeadlineGuard(const Store& store, const Plan& plan) {
  const char* env = std::getenv("LINSWEEP_DEADLINE");
  if (env == nullptr || *env == '\0') return;
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  if (end == env || *end != '\0' || !(v > 0))
    throw InputError(std::string("LINSWEEP_DEADLINE: '") + env + "' is not a unix time");
  deadline_ = v;
  std::map<std::string, std::string> kind_of;
  for (const auto& u : plan.units) kind_of[u.id] = u.kind;
  for (const auto& e : store.journal_events())
    if (e.event == "committed" && e.duration > 0)
      if (auto it = kind_of.find(e.unit); it != kind_of.end()) record(it->second, e.duration);
}

bool DeadlineGuard::fits(const std::string& kind) const {
  if (deadline_ <= 0) return true;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto it = sums_.find(kind);
  const double estimate = it == sums_.end() ? 0.0 : it->second.first / it->second.second;
  return now + estimate < deadline_;
}

void DeadlineGuard::record(const std::string& kind, double seconds) {
  auto& [sum, n] = sums_[kind];
  sum += seconds;
  n += 1;
}

}  // namespace linsweep
