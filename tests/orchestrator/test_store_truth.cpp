// One current result per slot, gc, dry runs, refused no-op flags and provenance, through the
// real binary on the fixture models.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "support/catch.hpp"
#include "support/cli_run.hpp"

using linsweep::test::CliRun;
using linsweep::test::quoted;
using linsweep::test::run_cli;
using linsweep::test::ScratchDir;
namespace test = linsweep::test;
namespace fs = std::filesystem;

namespace {

// fit + all_linear on every layer of `models` over one corpus, into `store`.
std::string write_spec(const ScratchDir& dir, const std::string& name, const std::vector<std::string>& models,
                       int bootstrap) {
  std::string text = "store: " + (dir / "store") + "\ncontext: 32\nmodels:\n";
  for (const auto& m : models) text += "  - {name: " + m + ", path: " + test::model_dir(m) + "}\n";
  text += "corpora:\n  - {name: stream-a, path: " + test::tokens_file("tiny-gpt2") +
          ", format: npy}\n"
          "splits:\n  fit: {start: 0, tokens: 512}\n  eval: {start: 512, tokens: 512}\n"
          "experiments:\n  fit: {lambda: [0.1]}\n  all_linear: {bootstrap: " +
          std::to_string(bootstrap) + ", seed: 0}\nruntime: {threads: 1}\n";
  const std::string path = dir / name;
  test::write_text(path, text);
  return path;
}

nlohmann::json query(const std::string& store, const std::string& table, const std::string& extra = "") {
  const CliRun r = run_cli("query " + quoted(store) + " " + table + " --json " + extra);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

std::size_t layers_of(const std::string& model) {
  const auto c = nlohmann::json::parse(test::read_text(test::model_dir(model) + "/config.json"));
  return c.contains("n_layer") ? c["n_layer"].get<std::size_t>() : c["num_hidden_layers"].get<std::size_t>();
}

std::size_t unit_files(const std::string& store) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(store + "/units")) {
    const std::string f = e.path().filename().string();
    n += f[0] != '.' && f.size() > 3 && f.ends_with(".h5") && !f.ends_with(".arrays.h5");
  }
  return n;
}

void run_ok(const std::string& args) {
  const CliRun r = run_cli(args, 300);
  INFO(args << "\n" << r.err);
  REQUIRE(r.code == 0);
}

}  // namespace

TEST_CASE("slots: a changed parameter supersedes, an added model keeps, a revert restores", "[truth]") {
  ScratchDir dir;
  const std::string store = dir / "store";
  const std::size_t layers = layers_of("tiny-gpt2");
  const std::string spec500 = write_spec(dir, "b500.yaml", {"tiny-gpt2"}, 50);
  run_ok("run " + quoted(spec500) + " --quiet");
  const nlohmann::json first = query(store, "all_linear", "--columns layer,ci_low,ci_high");
  REQUIRE(first.size() == layers);

  // A changed parameter: every layer once, from the new run; the old rows only with --all.
  run_ok("run " + quoted(spec500) + " experiments.all_linear.bootstrap=20 --quiet");
  const nlohmann::json changed = query(store, "all_linear", "--columns layer,ci_low,unit");
  CHECK(changed.size() == layers);
  const nlohmann::json all = query(store, "all_linear", "--all --columns layer,current,planned_by");
  CHECK(all.size() == 2 * layers);
  std::size_t superseded = 0;
  for (const auto& row : all) superseded += row["current"] == 0;
  CHECK(superseded == layers);
  std::set<std::string> all_linear_units;  // one unit covers every layer of a model and corpus
  for (const auto& row : changed) all_linear_units.insert(row["unit"].get<std::string>());
  nlohmann::json status = nlohmann::json::parse(run_cli("status " + quoted(store) + " --json").out);
  CHECK(status["by_kind"]["all_linear"]["committed"] == all_linear_units.size());
  CHECK(status["by_kind"]["all_linear"]["superseded"] == all_linear_units.size());
  CHECK(status["by_kind"]["all_linear"]["pending"] == 0);
  CHECK(status["units"].size() == unit_files(store));

  // Going back to the first spec: nothing runs, its rows are current again.
  const CliRun back = run_cli("run " + quoted(spec500), 300);
  REQUIRE(back.code == 0);
  CHECK(back.err.find("0 run now") != std::string::npos);
  CHECK(query(store, "all_linear", "--columns layer,ci_low,ci_high") == first);

  // A second spec that adds a model: the first model's results stay current.
  const std::string two = write_spec(dir, "two.yaml", {"tiny-gpt2", "tiny-neox"}, 50);
  run_ok("run " + quoted(two) + " --quiet");
  const nlohmann::json both = query(store, "all_linear", "--columns model,layer,ci_low,ci_high");
  CHECK(both.size() == layers + layers_of("tiny-neox"));
  nlohmann::json gpt2 = nlohmann::json::array();
  for (const auto& row : both)
    if (row["model"] == "tiny-gpt2")
      gpt2.push_back({{"layer", row["layer"]}, {"ci_low", row["ci_low"]}, {"ci_high", row["ci_high"]}});
  CHECK(gpt2 == first);

  // The consolidated file holds the current units only, and the `units` table beside them.
  CHECK(query(store, "all_linear", "--consolidated --columns unit").size() == both.size());
  CHECK(query(store, "units", "--consolidated --where kind=all_linear").size() == 2);  // a unit per model
}

TEST_CASE("gc deletes superseded units and what they own, never a current one", "[truth]") {
  ScratchDir dir;
  const std::string store = dir / "store";
  const std::string spec = write_spec(dir, "s.yaml", {"tiny-gpt2"}, 50);
  run_ok("run " + quoted(spec) + " --quiet");
  run_ok("run " + quoted(spec) + " experiments.fit.lambda=[1.0] --quiet");  // fits, stats stay; all_linear reruns
  const nlohmann::json current = query(store, "all_linear");
  const std::size_t files = unit_files(store);

  CliRun r = run_cli("gc " + quoted(store) + " --dry-run --json");
  REQUIRE(r.code == 0);
  const nlohmann::json plan = nlohmann::json::parse(r.out);
  REQUIRE(!plan["units"].empty());
  CHECK(plan["bytes"].get<std::uint64_t>() > 0);
  CHECK(unit_files(store) == files);  // a dry run deletes nothing

  r = run_cli("gc " + quoted(store) + " --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["units"].size() == plan["units"].size());
  CHECK(unit_files(store) == files - plan["units"].size());
  for (const auto& u : plan["units"]) {
    CHECK_FALSE(fs::exists(store + "/units/" + u["unit"].get<std::string>() + ".h5"));
    CHECK_FALSE(fs::exists(store + "/logs/" + u["unit"].get<std::string>() + ".log"));
  }
  CHECK(query(store, "all_linear") == current);
  CHECK(query(store, "all_linear", "--all").size() == current.size());
  r = run_cli("gc " + quoted(store) + " --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["units"].empty());
  r = run_cli("resume " + quoted(store));
  CHECK(r.code == 0);
  CHECK(r.err.find("0 run now") != std::string::npos);
}

TEST_CASE("gc killed at any moment leaves a store that query, resume and gc accept", "[truth]") {
  ScratchDir dir;
  const std::string store = dir / "store";
  const std::string spec = write_spec(dir, "s.yaml", {"tiny-gpt2", "tiny-neox"}, 50);
  run_ok("run " + quoted(spec) + " --quiet");
  const nlohmann::json base_rows = query(store, "all_linear");
  for (int trial = 0; trial < 6; ++trial) {
    INFO("trial " << trial);
    // Supersede every fit and all_linear unit, then kill gc after trial × 2 ms.
    run_ok("run " + quoted(spec) + " experiments.fit.lambda=[" + std::to_string(0.2 + 0.1 * trial) + "] --quiet");
    const nlohmann::json want = query(store, "all_linear");
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::execl(test::linsweep_binary(), test::linsweep_binary(), "gc", store.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * trial));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(query(store, "all_linear") == want);  // a reader sees the current units, whole
    CliRun r = run_cli("resume " + quoted(store) + " --quiet");
    CHECK(r.code == 0);
    CHECK(query(store, "all_linear") == want);
    r = run_cli("gc " + quoted(store) + " --json");
    CHECK(r.code == 0);
    CHECK(query(store, "all_linear", "--all").size() == want.size());  // nothing superseded is left
  }
  CHECK(base_rows.size() == query(store, "all_linear").size());
}

TEST_CASE("dry runs run nothing; flags without effect are refused", "[truth]") {
  ScratchDir dir;
  const std::string store = dir / "store";
  const std::string spec = write_spec(dir, "s.yaml", {"tiny-gpt2"}, 50);
  CliRun r = run_cli("run " + quoted(spec) + " --dry-run");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("pending") != std::string::npos);
  CHECK_FALSE(fs::exists(store));
  run_ok("run " + quoted(spec) + " experiments.all_linear.bootstrap=20 --quiet");
  const std::string journal = test::read_text(store + "/journal.jsonl");
  r = run_cli("resume " + quoted(store) + " experiments.all_linear.bootstrap=30 --dry-run --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["counts"]["rerun"].get<int>() > 0);
  CHECK(test::read_text(store + "/journal.jsonl") == journal);  // nothing ran
  for (const std::string& args :
       {"resume " + quoted(store) + " --json", "resume " + quoted(store) + " --split model",
        "resume " + quoted(store) + " --submit --threads 2", "run " + quoted(spec) + " --dry-run --threads 2",
        "submit " + quoted(spec) + " --max-concurrent 2"}) {
    INFO(args);
    r = run_cli(args);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK(test::read_text(store + "/journal.jsonl") == journal);
}

TEST_CASE("every unit records what computed it, where and when", "[truth]") {
  ScratchDir dir;
  const std::string store = dir / "store";
  const std::string spec = write_spec(dir, "s.yaml", {"tiny-gpt2"}, 20);
  const double before = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  run_ok("run " + quoted(spec) + " --quiet");
  const CliRun v = run_cli("--version");
  REQUIRE(v.code == 0);
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  const nlohmann::json units = query(store, "units");
  REQUIRE(units.size() == unit_files(store));
  std::set<std::string> kinds;
  for (const auto& u : units) {
    kinds.insert(u["kind"].get<std::string>());
    CHECK(v.out.find(u["version"].get<std::string>()) != std::string::npos);
    CHECK(u["host"] == host);
    CHECK(u["group_ranks"] == 1);
    CHECK(u["current"] == 1);
    CHECK(u["planned_by"] == 1);
    CHECK(u["started"].get<double>() >= before - 1);
    CHECK(u["finished"].get<double>() >= u["started"].get<double>());
    CHECK(nlohmann::json::parse(u["params"].get<std::string>())["slot"] == u["slot"]);
  }
  CHECK(kinds == std::set<std::string>{"stats", "fit", "all_linear"});
}
