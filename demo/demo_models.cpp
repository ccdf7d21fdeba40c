// The demo's models: selection, pretraining in parallel, held-out perplexity.
#include "demo/demo_models.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/signal_recorder.hpp"
#include "engine/runtime.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxHeldoutBytes = 1u << 20;  // heldout.json

std::string progress_line(const std::vector<std::unique_ptr<ModelJob>>& jobs, double elapsed) {
  double total = 0, done = 0;
  std::size_t finished = 0, to_train = 0;
  std::string running;
  for (const auto& j : jobs) {
    if (j->cached) continue;
    ++to_train;
    const double steps = static_cast<double>(j->recipe.training.steps);
    total += steps * j->recipe.cost_per_token();
    done += static_cast<double>(j->step.load()) * j->recipe.cost_per_token();
    if (j->finished) ++finished;
    if (j->running)
      running += fmt::format(" · {} {}/{} loss {:.2f}", j->recipe.name, j->step.load(), j->recipe.training.steps,
                             j->loss.load());
  }
  const double f = total > 0 ? done / total : 1;
  std::string eta = f > 0.02 ? duration_text(elapsed * (1 - f) / f) : "?";
  return fmt::format("pretraining [{}/{} models, {:.0f}%]{} · ETA {}", finished, to_train, 100 * f, running, eta);
}

}  // namespace

// The demo models `spec_text` names: each `models:` entry's path, relative to the demo
// directory, that is models/<recipe name>. Only these are pretrained, so a spec of one model
// trains one. Throws InputError naming `spec_path` when the text is not YAML with a models list.
std::set<std::string> models_named(const std::string& spec_path, const std::string& spec_text) {
  std::set<std::string> named;
  try {
    const YAML::Node models = YAML::Load(spec_text)["models"];
    if (!models.IsSequence()) throw InputError(spec_path + ": no models list");
    for (const YAML::Node& m : models) {
      const std::filesystem::path path = std::filesystem::path(m["path"].as<std::string>("")).lexically_normal();
      if (path.parent_path() == "models") named.insert(path.filename().string());
    }
  } catch (const YAML::Exception& e) {
    throw InputError(spec_path + ": " + e.what());
  }
  return named;
}

bool train_models(std::vector<std::unique_ptr<ModelJob>>& jobs, const Windows& train, const Paths& p, int workers,
                  int cpus, bool quiet) {
  std::vector<ModelJob*> queue;
  for (auto& j : jobs)
    if (!j->cached) queue.push_back(j.get());
  if (queue.empty()) return true;
  // Longest first, so that the last model to finish is a short one.
  std::stable_sort(queue.begin(), queue.end(), [](const ModelJob* a, const ModelJob* b) {
    return a->recipe.cost_per_token() * a->recipe.training.steps >
           b->recipe.cost_per_token() * b->recipe.training.steps;
  });
  const int n = std::max(1, std::min<int>(workers, static_cast<int>(queue.size())));
  configure_threads(std::max(1, cpus / n));
  const SignalRecorder signals({SIGINT, SIGTERM});  // models checkpoint at their next step
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto stop = [&] { return SignalRecorder::received() != 0 || failed.load(); };
  std::atomic<int> active{n};
  auto work = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= queue.size() || stop()) break;
      ModelJob& job = *queue[i];
      job.running = true;
      const double t0 = now_seconds();
      try {
        job.outcome = pretrain_model(
            job.recipe.config, train, job.recipe.training, p.tokenizer, job.checkpoints, job.dir, job.fingerprint,
            [&job](const PretrainStatus& s) {
              job.step = s.step;
              job.loss = s.loss;
            },
            stop);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
      job.seconds = now_seconds() - t0;
      job.finished = job.outcome.completed;
      job.running = false;
    }
    --active;
  };
  const double start = now_seconds();
  std::vector<std::thread> pool;
  for (int t = 0; t < n; ++t) pool.emplace_back(work);
  const bool live = !quiet && ::isatty(STDERR_FILENO) == 1;
  double last_log = start;
  while (active.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    const double t = now_seconds();
    if (live) {
      std::fprintf(stderr, "\r\033[K%s", progress_line(jobs, t - start).c_str());
      std::fflush(stderr);
    } else if (!quiet && t - last_log >= 15) {
      std::fprintf(stderr, "%s\n", progress_line(jobs, t - start).c_str());
      last_log = t;
    }
  }
  for (auto& t : pool) t.join();
  if (live) std::fprintf(stderr, "\r\033[K");
  if (error) std::rethrow_exception(error);
  for (const ModelJob* j : queue)
    if (!j->finished) return false;
  return true;
}

std::vector<Heldout> heldout_of(const ModelJob& job, const std::vector<std::pair<std::string, Windows>>& heldout,
                                std::int64_t tokens) {
  const std::string path = job.dir + "/heldout.json";
  if (is_regular_file(path)) {
    try {
      const nlohmann::json j = read_json_file(path, kMaxHeldoutBytes);
      if (j.value("fingerprint", nlohmann::json()) == job.fingerprint && j.value("tokens", 0) == tokens) {
        std::vector<Heldout> out;
        for (const auto& r : j.at("corpora")) out.push_back({r.at("corpus"), r.at("ppl"), r.at("unigram_ppl")});
        if (out.size() == heldout.size()) return out;
      }
    } catch (const std::exception&) {
      // damaged or from another version: evaluate again
    }
  }
  std::vector<Heldout> out;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [name, w] : heldout) {
    out.push_back({name, model_ppl(job.dir, w), unigram_ppl(w)});
    rows.push_back({{"corpus", name}, {"ppl", out.back().ppl}, {"unigram_ppl", out.back().unigram}});
  }
  atomic_write_text(
      path, nlohmann::json({{"fingerprint", job.fingerprint}, {"tokens", tokens}, {"corpora", rows}}).dump(2) + "\n");
  return out;
}

}  // namespace linsweep
