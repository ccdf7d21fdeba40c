// `linsweep status`: committed, failed and unfinished units of a store, failures, throughput.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "cli/commands/commands.hpp"
#include "common/errors.hpp"
#include "orchestrator/submit/slurm_jobs.hpp"
#include "storage/store.hpp"
#include "storage/store_status.hpp"

namespace linsweep {
namespace {

struct StatusArgs {
  std::string store;
  bool json = false;
};

// The scheduler's view of the store's Slurm jobs; a scheduler that cannot be asked is a
// note, not a failure (the store's own progress is still right).
nlohmann::json jobs_or_note(const std::string& store, std::string* note) {
  try {
    return slurm_jobs_status(store);
  } catch (const SlurmError& e) {
    *note = e.what();
    return nlohmann::json::array();
  }
}

// A result row some experiment flagged as no measurement (its `flag` column: an empty routing
// list, an undefined correlation or AUC, a gate that routes nothing; docs/methods.md).
struct FlaggedRow {
  std::string table, where, flag;
};

// Every row of the store's current tables with a non-empty `flag`, named by its key cells.
std::vector<FlaggedRow> flagged_rows(const Store& store) {
  std::vector<FlaggedRow> out;
  for (const auto& [name, t] : store.read_tables()) {
    const int flag = t.column_index("flag");
    if (flag < 0) continue;
    for (const Row& r : t.rows) {
      const auto* text = std::get_if<std::string>(&r[static_cast<std::size_t>(flag)]);
      if (text == nullptr || text->empty()) continue;
      std::string where;
      for (const char* c : {"model", "corpus", "source", "target", "layer", "gate", "expert"}) {
        const int i = t.column_index(c);
        if (i < 0) continue;
        std::visit(
            [&](const auto& v) {
              using V = std::decay_t<decltype(v)>;
              if constexpr (std::is_same_v<V, std::string>)
                where += (where.empty() ? "" : " ") + std::string(c) + "=" + v;
              else
                where += (where.empty() ? "" : " ") + std::string(c) + "=" + std::to_string(v);
            },
            r[static_cast<std::size_t>(i)]);
      }
      out.push_back({name, where, *text});
    }
  }
  return out;
}

int run_status(const StatusArgs& a) {
  const Store store = Store::open_read(a.store);
  const StoreStatus st = summarize_store(store);
  std::string note;
  const nlohmann::json jobs = jobs_or_note(a.store, &note);
  const std::vector<FlaggedRow> flagged = flagged_rows(store);
  if (a.json) {
    nlohmann::json j = {{"store", a.store},
                        {"committed", st.committed()},
                        {"units_per_hour", st.units_per_hour()},
                        {"by_kind", nlohmann::json::object()},
                        {"failures", nlohmann::json::array()}};
    for (const auto& [k, c] : st.by_kind)
      j["by_kind"][k] = {{"committed", c.committed},   {"superseded", c.superseded},
                         {"pending", c.pending},       {"failed", c.failed},
                         {"unfinished", c.unfinished}, {"seconds", c.seconds},
                         {"tokens", c.tokens},         {"tokens_per_second", c.tokens_per_second()}};
    // The `units` table of every committed unit, superseded ones included (`current` says which).
    const Table units = store.read_table("units", Store::Scope::kAll);
    j["units"] = nlohmann::json::array();
    for (const auto& row : units.rows) {
      nlohmann::json u;
      for (std::size_t i = 0; i < units.columns.size(); ++i)
        std::visit([&](const auto& v) { u[units.columns[i].name] = v; }, row[i]);
      j["units"].push_back(u);
    }
    for (const auto& f : st.failures)
      j["failures"].push_back(
          {{"unit", f.unit}, {"host", f.host}, {"rank", f.rank}, {"attempts", f.attempts}, {"error", f.error}});
    // While a run holds the store, its unfinished units are the ones it is running.
    j["live_run"] = st.live_writer ? nlohmann::json(*st.live_writer) : nlohmann::json(nullptr);
    j["running"] = st.live_writer ? nlohmann::json(st.unfinished) : nlohmann::json::array();
    j["flagged"] = nlohmann::json::array();
    for (const auto& f : flagged) j["flagged"].push_back({{"table", f.table}, {"row", f.where}, {"flag", f.flag}});
    j["slurm_jobs"] = jobs;
    if (!note.empty()) j["slurm_note"] = note;
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("store %s\n", a.store.c_str());
  if (st.live_writer) {
    std::printf("  live run: %s; running %zu unit%s\n", st.live_writer->c_str(), st.unfinished.size(),
                st.unfinished.size() == 1 ? "" : "s");
    for (const auto& id : st.unfinished) std::printf("    running: %s\n", id.c_str());
  }
  std::printf("  %-12s %9s %10s %7s %7s %10s %10s %10s\n", "experiment", "committed", "superseded", "pending", "failed",
              "unfinished", "seconds", "tok/s");
  for (const auto& [k, c] : st.by_kind)
    std::printf("  %-12s %9d %10d %7d %7d %10d %10.1f %10.0f\n", k.c_str(), c.committed, c.superseded, c.pending,
                c.failed, c.unfinished, c.seconds, c.tokens_per_second());
  std::printf("  %d units committed, %.0f units/hour over the journal\n", st.committed(), st.units_per_hour());
  for (const auto& f : st.failures)
    std::printf("  failed: %s (%d attempts, %s rank %d): %s\n", f.unit.c_str(), f.attempts, f.host.c_str(), f.rank,
                f.error.c_str());
  for (const auto& f : flagged) std::printf("  flagged: %s %s: %s\n", f.table.c_str(), f.where.c_str(), f.flag.c_str());
  if (!jobs.empty())
    std::printf("slurm jobs\n  %-10s %-12s %-18s %8s  %s\n", "job", "state", "reason", "restarts", "units");
  for (const auto& j : jobs) {
    const std::string units = j["all_pending"].get<bool>()
                                  ? std::string("every pending unit")
                                  : std::to_string(j["units_committed"].get<std::size_t>()) + "/" +
                                        std::to_string(j["units"].get<std::size_t>()) + " committed";
    std::printf("  %-10s %-12s %-18s %8lld  %s\n", j["job_id"].get<std::string>().c_str(),
                j["state"].get<std::string>().c_str(),
                j["reason"].get<std::string>().empty() ? "-" : j["reason"].get<std::string>().c_str(),
                static_cast<long long>(j["restarts"].get<std::int64_t>()), units.c_str());
  }
  if (!note.empty()) std::printf("slurm: %s\n", note.c_str());
  return 0;
}

}  // namespace

void add_status_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<StatusArgs>();
  CLI::App* cmd = root.add_subcommand(
      "status",
      "Committed, pending, failed and unfinished units of a store by experiment (each unit counted once), failures "
      "with their messages, and throughput (from the journal); whether a run writes the store now, and which units "
      "it is running; for stores submitted to Slurm, every recorded job with the scheduler's state (squeue, "
      "scontrol, sacct) and its units; every result row flagged as no measurement (an empty routing list, an "
      "undefined r or AUC, a gate routing none or all) with the reason.");
  add_store_argument(cmd, &args->store);
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->footer("Example: linsweep status runs/demo/store --json");
  cmd->callback([args, action] { *action = [args] { return run_status(*args); }; });
}

}  // namespace linsweep
