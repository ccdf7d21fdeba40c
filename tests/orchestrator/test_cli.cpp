// The real `linsweep` binary: results on the fixtures, and exit code 2 with one line naming
// the file for every kind of bad input.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>
#include <vector>

#include "common/blas_kernels.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using linsweep::test::ScratchDir;
namespace test = linsweep::test;

namespace {

struct Run {
  int code = -1;
  bool crashed = false;
  std::string out, err;
};

Run run(const std::string& args) {
  ScratchDir io;
  const std::string cmd = "timeout 120 " + std::string(test::linsweep_binary()) + " " + args + " >" + (io / "out") +
                          " 2>" + (io / "err") + " </dev/null";
  const int status = std::system(cmd.c_str());
  Run r;
  r.crashed = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) >= 124);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = test::read_text(io / "out");
  r.err = test::read_text(io / "err");
  return r;
}

std::string q(const std::string& s) { return "'" + s + "'"; }

// Rewrites the JSON header of a safetensors file through `edit`, keeping the data.
void edit_header(const std::string& path, const std::function<void(nlohmann::json&)>& edit) {
  std::string bytes = test::read_text(path);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  auto header = nlohmann::json::parse(bytes.substr(8, n));
  edit(header);
  std::string text = header.dump();
  std::string len(8, '\0');
  for (int i = 0; i < 8; ++i) len[static_cast<std::size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  test::write_text(path, len + text + bytes.substr(8 + n));
}

}  // namespace

TEST_CASE("eval, tokenize and inspect give the reference results", "[reference]") {
  const std::string model = test::model_dir("tiny-gpt2");
  Run r = run("eval --model " + q(model) + " --corpus " + q(test::tokens_file("tiny-gpt2")) +
              " --start 0 --tokens 256 --context 32 --json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["tokens_scored"] == 248);
  CHECK(j["ppl"].get<double>() == Catch::Approx(test::golden()["tiny-gpt2"]["ppl"].get<double>()).epsilon(1e-5));
  CHECK(j["nll_sum"].get<double>() ==
        Catch::Approx(test::golden()["tiny-gpt2"]["nll_sum"].get<double>()).epsilon(1e-5));

  r = run("tokenize --model " + q(model) + " --in " + q(test::data_dir() + "/tokenizer/edge.txt") + " --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out) ==
        nlohmann::json::parse(test::read_text(test::data_dir() + "/tokenizer/edge.k767.json")));

  r = run("inspect --json " + q(test::model_dir("tiny-neox")));
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["architecture"] == "gpt_neox");
  CHECK(j["residual"] == "parallel");
  CHECK(j["vocab_size"] == 1088);
  CHECK(j["rotary_dims"] == 4);
  CHECK(j["tokenizer"]["merges"] == 767);

  for (const char* cmd : {"", "eval ", "tokenize ", "inspect "}) {
    INFO(cmd);
    Run h = run(std::string(cmd) + "--help");
    CHECK(h.code == 0);
    CHECK(h.out.find("Usage") != std::string::npos);
  }
}

TEST_CASE("bad_: every bad input exits 2 with one line naming the file and the problem") {
  ScratchDir dir;
  const std::string good_corpus = test::tokens_file("tiny-gpt2");
  struct Case {
    const char* name;
    std::function<std::string(const std::string& d)> setup;  // returns the arguments
    const char* message;                                     // must appear in the line
  };
  // A broken copy of the tiny GPT-2 model, evaluated on the fixture stream.
  auto broken_model = [&](const std::string& d, const std::function<void(const std::string&)>& damage) {
    test::copy_model("tiny-gpt2", d + "/m");
    damage(d + "/m");
    return "eval --model " + q(d + "/m") + " --corpus " + q(good_corpus) + " --context 32 --tokens 256";
  };
  auto text_corpus = [&](const std::string& d, const std::string& content, const std::string& extra = "") {
    test::write_text(d + "/corpus.txt", content);
    return "eval --model " + q(test::model_dir("tiny-gpt2")) + " --corpus " + q(d + "/corpus.txt") + " --format text " +
           extra;
  };
  auto config = [](const std::string& m, const std::function<void(nlohmann::json&)>& f) {
    auto j = nlohmann::json::parse(test::read_text(m + "/config.json"));
    f(j);
    test::write_text(m + "/config.json", j.dump());
  };
  const Case cases[] = {
      {"bad_truncated_weights",
       [&](auto d) {
         return broken_model(d, [](auto m) { std::filesystem::resize_file(m + "/model.safetensors", 6); });
       },
       "model.safetensors: truncated"},
      {"bad_header_past_end",
       [&](auto d) {
         return broken_model(d, [](auto m) { std::filesystem::resize_file(m + "/model.safetensors", 2000); });
       },
       "runs past the end of the file"},
      {"bad_offsets_overlap",
       [&](auto d) {
         return broken_model(d, [](auto m) {
           edit_header(m + "/model.safetensors",
                       [](auto& h) { h["ln_f.bias"]["data_offsets"] = h["ln_f.weight"]["data_offsets"]; });
         });
       },
       "overlap"},
      {"bad_offsets_outside",
       [&](auto d) {
         return broken_model(d, [](auto m) {
           edit_header(m + "/model.safetensors", [](auto& h) {
             h["ln_f.bias"]["data_offsets"] = {1u << 30, (1u << 30) + 256};
           });
         });
       },
       "outside the data section"},
      {"bad_unknown_dtype",
       [&](auto d) {
         return broken_model(d, [](auto m) {
           edit_header(m + "/model.safetensors", [](auto& h) { h["ln_f.bias"]["dtype"] = "F12"; });
         });
       },
       "unknown dtype 'F12'"},
      {"bad_unsupported_weight_dtype",
       [&](auto d) {
         return broken_model(d, [](auto m) {
           edit_header(m + "/model.safetensors", [](auto& h) { h["ln_f.bias"]["dtype"] = "I32"; });
         });
       },
       "weights must be F32, F16 or BF16"},
      {"bad_shape_vs_config",
       [&](auto d) { return broken_model(d, [&](auto m) { config(m, [](auto& j) { j["vocab_size"] = 1000; }); }); },
       "but config.json implies [1000, 64]"},
      {"bad_missing_tensor",
       [&](auto d) {
         return broken_model(
             d, [](auto m) { edit_header(m + "/model.safetensors", [](auto& h) { h.erase("h.1.ln_2.bias"); }); });
       },
       "tensor 'h.1.ln_2.bias' is missing"},
      {"bad_missing_config",
       [&](auto d) { return broken_model(d, [](auto m) { std::filesystem::remove(m + "/config.json"); }); },
       "config.json: missing"},
      {"bad_invalid_config",
       [&](auto d) {
         return broken_model(d, [](auto m) { test::write_text(m + "/config.json", "{\"n_embd\": 64,"); });
       },
       "config.json: invalid JSON"},
      {"bad_architecture",
       [&](auto d) { return broken_model(d, [&](auto m) { config(m, [](auto& j) { j["model_type"] = "mamba"; }); }); },
       "unsupported architecture 'mamba' (known: "},
      {"bad_pickle_only",
       [&](auto d) {
         return broken_model(d, [](auto m) {
           std::filesystem::remove(m + "/model.safetensors");
           test::write_text(m + "/pytorch_model.bin", "PK\x03\x04");
         });
       },
       "pickle checkpoints are not read"},
      {"bad_utf8_corpus", [&](auto d) { return text_corpus(d, "fine text then \xc3\x28 broken"); },
       "corpus.txt: invalid UTF-8 at byte 15"},
      {"bad_empty_corpus", [&](auto d) { return text_corpus(d, ""); }, "corpus.txt: corpus is empty"},
      {"bad_split_past_end",
       [&](auto d) { return text_corpus(d, "a short text", "--start 5 --tokens 100 --context 4"); },
       "runs past the end of the stream"},
      {"bad_context_too_long",
       [&](auto d) {
         return "eval --model " + q(test::model_dir("tiny-gpt2")) + " --corpus " + q(good_corpus) + " --context 512";
       },
       "longer than the model's 256 positions"},
      {"bad_format",
       [&](auto d) {
         return "eval --model " + q(test::model_dir("tiny-gpt2")) + " --corpus " + q(good_corpus) + " --format csv";
       },
       "corpus format 'csv' is unknown"},
      {"bad_missing_corpus",
       [&](auto d) { return "eval --model " + q(test::model_dir("tiny-gpt2")) + " --corpus " + q(d + "/nope.txt"); },
       "nope.txt: cannot open"},
      {"bad_npy",
       [&](auto d) {
         test::write_text(d + "/x.npy", "not numpy at all");
         return "eval --model " + q(test::model_dir("tiny-gpt2")) + " --corpus " + q(d + "/x.npy");
       },
       "x.npy: not a .npy file"},
      {"bad_npy_ids_past_vocab",
       [&](auto d) {
         // A hand-made .npy: int32 ids 1..7 then 5000, past the model's 1024.
         std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (8,), }";
         while ((10 + header.size() + 1) % 64 != 0) header += ' ';
         header += '\n';
         std::string data;
         for (int id : {1, 2, 3, 4, 5, 6, 7, 5000})
           for (int k = 0; k < 4; ++k) data += static_cast<char>((id >> (8 * k)) & 0xFF);
         test::write_text(d + "/ids.npy", std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) +
                                              '\0' + header + data);
         return "eval --model " + q(test::model_dir("tiny-gpt2")) + " --corpus " + q(d + "/ids.npy") + " --context 4";
       },
       "outside the model's vocabulary"},
      {"bad_usage_missing_option", [&](auto d) { return std::string("eval --corpus x"); }, "--model is required"},
      {"bad_usage_unknown_command", [&](auto d) { return std::string("frobnicate"); }, "unknown command 'frobnicate'"},
      {"bad_tokenize_utf8",
       [&](auto d) {
         test::write_text(d + "/in.txt", "\xff");
         return "tokenize --model " + q(test::model_dir("tiny-gpt2")) + " --in " + q(d + "/in.txt");
       },
       "in.txt: invalid UTF-8 at byte 0"},
      {"bad_tokenizer_files",
       [&](auto d) {
         std::filesystem::create_directories(d + "/tok");
         test::write_text(d + "/in.txt", "x");
         return "tokenize --model " + q(d + "/tok") + " --in " + q(d + "/in.txt");
       },
       "no tokenizer (tokenizer.json, tokenizer.model, or vocab.json + merges.txt)"},
      {"bad_inspect_dir", [&](auto d) { return "inspect " + q(d + "/absent"); }, "absent: does not exist"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    ScratchDir d;
    const std::string args = c.setup(d.path());
    const Run r = run(args);
    INFO(r.err);
    CHECK(!r.crashed);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
}

// Display columns of a UTF-8 line (every code point counts one).
static std::size_t columns_of(const std::string& line) {
  return static_cast<std::size_t>(
      std::count_if(line.begin(), line.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

TEST_CASE("CLI conventions: short help, --version, usage lines, 100 columns, an example per command", "[conventions]") {
  const Run bare = run("");
  REQUIRE(bare.code == 0);
  CHECK(bare.out == run("--help").out);
  CHECK(bare.out.find("\nUsage: linsweep [OPTIONS] SUBCOMMAND\n") != std::string::npos);
  // The subcommands, from the short help's list (continuation lines are indented further).
  std::vector<std::string> commands;
  const auto list = bare.out.find("Subcommands:\n");
  REQUIRE(list != std::string::npos);
  std::istringstream lines(bare.out.substr(list + 13));
  for (std::string line; std::getline(lines, line);)
    if (line.size() > 2 && line.rfind("  ", 0) == 0 && line[2] != ' ')
      commands.push_back(line.substr(2, line.find(' ', 2) - 2));
  CHECK(commands.size() >= 14);
  for (const char* c : {"query", "plan", "run", "resume", "submit", "eval", "experiments"})
    CHECK(std::find(commands.begin(), commands.end(), c) != commands.end());

  const Run v = run("--version");
  REQUIRE(v.code == 0);
  CHECK(v.out.rfind("linsweep ", 0) == 0);
  CHECK(v.out.find("\nLibTorch ") != std::string::npos);
  CHECK(v.out.find("\nHDF5 ") != std::string::npos);
  CHECK(v.out.find("MPI") != std::string::npos);
  CHECK(std::count(v.out.begin(), v.out.end(), '\n') == 5);
  // The kernels OpenBLAS runs use the CPU's widest vectors unless the caller chose others:
  // `linsweep` names a family where OpenBLAS's own choice falls back (common/blas_kernels.hpp).
  const auto blas = v.out.find("; OpenBLAS ");
  REQUIRE(blas != std::string::npos);
  const std::string core = v.out.substr(blas + 11, v.out.find_first_of(";\n", blas + 11) - (blas + 11));
  INFO("OpenBLAS " << core);
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr)
    CHECK_FALSE(linsweep::better_openblas_core(core, linsweep::cpu_vector_isa()));

  commands.insert(commands.begin(), "");
  for (const auto& cmd : commands) {
    INFO("linsweep " << cmd << " --help");
    const Run h = run(cmd + " --help");
    CHECK(h.code == 0);
    CHECK(h.err.empty());
    CHECK(h.out.find(test::linsweep_binary()) == std::string::npos);
    std::istringstream text(h.out);
    std::string last, usage;
    for (std::string line; std::getline(text, line);) {
      INFO(line);
      CHECK(columns_of(line) <= 100);
      if (!line.empty()) last = line;
      if (usage.empty() && line.rfind("Usage:", 0) == 0) usage = line;
    }
    CHECK(usage.rfind("Usage: linsweep " + (cmd.empty() ? "" : cmd + " "), 0) == 0);
    CHECK(last.rfind("Example: linsweep " + cmd, 0) == 0);
  }
}

// The sample store written by test_storage "[.sample]" (ctest fixture), copied before use.
static std::string sample_store_copy(const ScratchDir& dir) {
  const char* src = std::getenv("LINSWEEP_SAMPLE_STORE");
  REQUIRE(src != nullptr);
  std::filesystem::copy(src, dir / "store", std::filesystem::copy_options::recursive);
  return dir / "store";
}

TEST_CASE("overrides change the spec from the command line, validated as if written in it", "[overrides]") {
  const std::string spec = std::string(test::source_path()) + "/examples/fixture.yaml";
  Run r = run("plan " + q(spec) + " context=64 'experiments.fit.lambda=[0.5]' --show-spec");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("context: 64\n") != std::string::npos);
  CHECK(r.out.find("fit: {lambda: [0.5]}") != std::string::npos);

  auto units = [&](const std::string& overrides) {
    const Run p = run("plan " + q(spec) + " " + overrides + " --json");
    REQUIRE(p.code == 0);
    return nlohmann::json::parse(p.out)["units"];
  };
  const auto all = units("");
  const auto no_all_linear = units("~experiments.all_linear");
  CHECK(no_all_linear.size() < all.size());
  for (const auto& u : no_all_linear) CHECK(u["kind"] != "all_linear");
  const auto clusters = units("'+experiments.clusters={k: 4}'");
  CHECK(std::any_of(clusters.begin(), clusters.end(), [](const auto& u) { return u["kind"] == "clusters"; }));
  CHECK(units("'models[1].name=renamed'").dump().find("renamed") != std::string::npos);
  const auto two_models = units("'~models[1]'");
  CHECK(two_models.size() < all.size());
  for (const auto& u : two_models) CHECK(u["model"] != "tiny-neox");

  struct Bad {
    std::string override_text, message;
  };
  const Bad bad[] = {
      {"'experiments.fit.lambda=[-1]'",
       "override 'experiments.fit.lambda=[-1]': experiments.fit.lambda: -1 is out of range"},
      {"contxt=64", "'contxt' is not in the spec (did you mean 'context'?); write +contxt=... to add it"},
      {"+context=3", "'context' is in the spec already"},
      {"'models[9].path=/x'", "'models[9]' is not in the spec"},
      {"'context=[1'", "the value is not YAML"},
      {"'models[1].path=/data/pythia-410m'", "override 'models[1].path=/data/pythia-410m': models[1].path: "},
      {"context=1", "override 'context=1': context: "},
      {"'~experiments.nosuch'", "'experiments.nosuch' is not in the spec"},
      {"'~models'", "override '~models': models: expected a non-empty list"},
      {"context", "fixture.yaml: override 'context': expected key.path=value"},
      {"context=16,32", "fixture.yaml: override 'context=16,32': a list of values sweeps the key: add -m"},
      {"-m runtime.batch=1,2", "fixture.yaml: override 'runtime.batch=choice(1,2)': only context, layers"},
  };
  for (const auto& b : bad) {
    INFO(b.override_text);
    r = run("plan " + q(spec) + " " + b.override_text);
    CHECK(r.code == 2);
    CHECK(r.err.find(b.message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }

  // The store records the overrides: resume plans the same units and finds them done.
  ScratchDir dir;
  const std::string store = dir / "store";
  r = run("run " + q(spec) + " --store " + q(store) +
          " 'models=[{name: tiny-gpt2, path: ../tests/data/models/tiny-gpt2}]' 'layers=[0]' '~experiments.all_linear' "
          "--quiet");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(test::read_text(store + "/run.json"))["overrides"].size() == 3);
  const std::string frozen = test::read_text(store + "/spec.yaml");  // the resolved spec, as --show-spec prints it
  CHECK(frozen.find("with overrides: models=") != std::string::npos);
  CHECK(frozen.find("all_linear:") == std::string::npos);
  CHECK(frozen.find("tiny-neox") == std::string::npos);
  r = run("resume " + q(store));
  REQUIRE(r.code == 0);
  CHECK((r.out + r.err).find("4 units: 4 already done, 0 run now") != std::string::npos);
}

TEST_CASE("[store] query, tables, plot and rebuild on a store", "[store]") {
  ScratchDir dir;
  const std::string store = sample_store_copy(dir);
  Run r = run("query " + q(store) +
              " all_linear --where layer=100..200 --where corpus=corpus-2 --columns model,layer --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out) == nlohmann::json::parse(R"([{"model":"model-2","layer":200}])"));
  r = run("query " + q(store) + " fits --format csv --sort -layer --columns layer");
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("layer\n201\n200\n", 0) == 0);  // RFC 4180: numbers bare, names unquoted
  r = run("query " + q(store) + " gates --format md --columns gate");
  CHECK(r.out.find("| gate |") == 0);
  // Without a table: the registry's tables, one per line, each also named by `query --help`.
  r = run("query " + q(store));
  REQUIRE(r.code == 0);
  const std::string help = run("query --help").out;
  std::istringstream tables(r.out);
  int listed = 0;
  auto named = [&](const std::string& t) {  // as a whole word of the list: "(t," " t," " t)"
    for (auto at = help.find(t); at != std::string::npos; at = help.find(t, at + 1)) {
      const char before = at > 0 ? help[at - 1] : ' ', after = at + t.size() < help.size() ? help[at + t.size()] : ' ';
      if ((before == ' ' || before == '(' || before == '\n') && (after == ',' || after == ')')) return true;
    }
    return false;
  };
  for (std::string t; std::getline(tables, t); ++listed) {
    INFO(t);
    CHECK(named(t));
  }
  CHECK(listed >= 15);

  r = run("tables " + q(store) + " --out " + q(dir / "report") + " --json");
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["tables"][0]["name"] == "all_linear_extremes");
  CHECK(std::filesystem::exists(dir / "report/tables.tex"));
  CHECK(test::read_text(dir / "report/csv/all_linear_extremes.csv").find("\"cheapest layer\"") != std::string::npos);

  r = run("plot " + q(store) + " --out " + q(dir / "fig") + " --json");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  // Per model: all_linear, gate_share and cost_vs_share (4 models); per corpus: Fig. 1 (4
  // corpora). No sample gate row is chosen (no Fig. 2, 5 or gate_delta), the sample rows carry no
  // parameter count (no Fig. 3), and the sample store's shard belongs to no capture unit (no
  // histogram).
  CHECK(j["files"].size() == 16);
  CHECK(test::read_text(dir / "fig/all_linear_model-1.svg").find("<svg") == 0);

  r = run("report " + q(store) + " --out " + q(dir / "site") + " --json");
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["figures"] == 16);
  // The report's tables are `tables`' plus the findings summary that opens the page.
  CHECK(j["tables"] ==
        nlohmann::json::parse(run("tables " + q(store) + " --out " + q(dir / "t2") + " --json").out)["tables"].size() +
            1);
  const std::string html = test::read_text(dir / "site/index.html");
  CHECK(html.find("<main>\n<section id=\"findings\">") != std::string::npos);
  CHECK(html.find("<section id=\"findings\">") < html.find("<nav id=\"contents\">"));
  CHECK(std::filesystem::exists(dir / "site/csv/findings.csv"));
  CHECK(html.find("href=\"csv/all_linear_extremes.csv\"") != std::string::npos);
  CHECK(std::filesystem::exists(dir / "site/csv/all_linear_extremes.csv"));
  CHECK(std::filesystem::exists(dir / "site/figures/all_linear_model-1.svg"));

  r = run("query " + q(store) + " fits --consolidated --json --columns unit");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).size() == 4);
  test::write_text(store + "/store.h5", "corrupted");
  r = run("rebuild " + q(store));
  CHECK(r.code == 0);
  CHECK(r.out.find("from 2 committed units") != std::string::npos);
  CHECK(run("query " + q(store) + " fits --consolidated").code == 0);
}

TEST_CASE("[store] bad stores exit 2 with one line naming the file", "[store]") {
  struct Case {
    const char* name;
    std::function<void(const std::string&)> damage;
    std::string args;
    const char* message;
  };
  const Case cases[] = {
      {"bad_truncated_unit", [](const std::string& s) { std::filesystem::resize_file(s + "/units/unit-1.h5", 300); },
       "query STORE fits", "unit-1.h5: not a linsweep unit file (truncated or corrupted"},
      {"bad_corrupted_unit",
       [](const std::string& s) {
         std::string b = test::read_text(s + "/units/unit-2.h5");
         for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>(b[i] ^ 0x33);
         test::write_text(s + "/units/unit-2.h5", b);
       },
       "tables STORE", "unit-2.h5: not a linsweep unit file (no seal"},
      {"bad_newer_schema",
       [](const std::string& s) {
         test::write_text(s + "/store.json", R"({"format":"linsweep-store","schema_version":7})");
       },
       "query STORE fits", "newer than this build"},
      {"bad_not_a_store", [](const std::string& s) { std::filesystem::remove(s + "/store.json"); }, "plot STORE",
       "not a linsweep store"},
      {"bad_consolidated", [](const std::string& s) { test::write_text(s + "/store.h5", "HDF? no"); },
       "query STORE fits --consolidated",
       "store.h5: not an HDF5 file (truncated or corrupted?); run `linsweep rebuild"},
      {"bad_unknown_table", [](const std::string&) {}, "query STORE tabel", "unknown table 'tabel'"},
      {"bad_where", [](const std::string&) {}, "query STORE fits --where layer", "expected col=value"},
      {"bad_where_number", [](const std::string&) {}, "query STORE fits --where layer=abc", "'abc' is not a number"},
      {"bad_format", [](const std::string&) {}, "query STORE fits --format xml", "--format 'xml' is unknown"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    ScratchDir dir;
    const std::string store = sample_store_copy(dir);
    c.damage(store);
    std::string args = c.args;
    args.replace(args.find("STORE"), 5, q(store));
    const Run r = run(args);
    INFO(r.err);
    CHECK(!r.crashed);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(c.message) != std::string::npos);
  }
}
