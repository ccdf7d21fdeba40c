// `linsweep eval`: perplexity of a model on a split of a corpus.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "common/errors.hpp"
#include "common/hf_cache.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/corpus/windows.hpp"
#include "engine/eval/evaluator.hpp"
#include "engine/model/load_model.hpp"
#include "engine/runtime.hpp"

namespace linsweep {
namespace {

struct EvalArgs {
  std::string model, revision, corpus, format, device = "auto", dtype = "float32";
  std::int64_t start = 0, tokens = -1, context = 0, batch = 8;
  std::int64_t warmup = -1;  // -1: one batch on a GPU, none on the CPU
  int threads = 0;
  bool json = false, per_token = false;
};

int run_eval(EvalArgs a) {
  a.model = resolve_model_dir(a.model, "", a.revision);  // a hub id: its snapshot in the HF cache
  configure_threads(a.threads);
  const auto t0 = std::chrono::steady_clock::now();
  ModelOptions mo;
  mo.device = a.device;
  mo.dtype = a.dtype;
  LoadedModel lm = load_model(a.model, mo);
  const CorpusFormat format = a.format.empty() ? guess_corpus_format(a.corpus) : parse_corpus_format(a.format);
  const auto stream = read_model_token_stream(a.corpus, format, a.model, lm.config().eos_token_id);
  const std::int64_t context = a.context > 0 ? a.context : std::min<std::int64_t>(lm.config().max_context(), 1024);
  if (context > lm.config().max_context())
    throw InputError("--context " + std::to_string(context) + " is longer than " + context_limit(lm.config()) + " (" +
                     a.model + "/config.json)");
  Split split{a.start, a.tokens >= 0 ? a.tokens : static_cast<std::int64_t>(stream.size()) - a.start};
  const Windows windows = make_windows(stream, split, context, a.corpus);

  EvalOptions eo;
  eo.batch = a.batch;
  eo.keep_token_nll = a.per_token;
  if (isatty(STDERR_FILENO) && !a.json) {
    eo.progress = [](std::int64_t done, std::int64_t total) {
      std::fprintf(stderr, "\reval: %lld/%lld windows", static_cast<long long>(done), static_cast<long long>(total));
      if (done == total) std::fprintf(stderr, "\n");
    };
  }
  // A GPU's first batch also loads kernels and sizes its memory pools: warm-up batches run
  // before the clock starts, so that tokens/s is the steady rate (total_seconds has both).
  const std::int64_t warmup = a.warmup >= 0 ? a.warmup : (lm.device == "cpu" ? 0 : 1);
  const auto tw = std::chrono::steady_clock::now();
  if (warmup > 0 && windows.count > 0) {
    EvalOptions plain;
    plain.batch = a.batch;
    evaluate(*lm.model, windows.slice(0, std::min(windows.count, warmup * a.batch)), plain);
  }
  const auto t1 = std::chrono::steady_clock::now();
  const EvalResult r = evaluate(*lm.model, windows, eo);
  const auto t2 = std::chrono::steady_clock::now();
  const double eval_s = std::chrono::duration<double>(t2 - t1).count();
  const double total_s = std::chrono::duration<double>(t2 - t0).count();
  const double tok_per_s = eval_s > 0 ? static_cast<double>(windows.count * context) / eval_s : 0;

  if (a.json) {
    nlohmann::json j = {{"model", a.model},
                        {"corpus", a.corpus},
                        {"format", corpus_format_name(format)},
                        {"start", split.start},
                        {"tokens", windows.count * context},
                        {"context", context},
                        {"windows", r.windows},
                        {"tokens_scored", r.tokens_scored},
                        {"nll_sum", r.nll_sum},
                        {"ppl", r.ppl()},
                        {"device", lm.device},
                        {"dtype", a.dtype},
                        {"threads", default_thread_count()},
                        {"batch", a.batch},
                        {"warmup_batches", warmup},
                        {"warmup_seconds", std::chrono::duration<double>(t1 - tw).count()},
                        {"eval_seconds", eval_s},
                        {"total_seconds", total_s},
                        {"tokens_per_second", tok_per_s}};
    if (a.threads > 0) j["threads"] = a.threads;
    if (a.per_token) j["token_nll"] = r.token_nll;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("model          %s (%s, %lld layers, d=%lld)\n", a.model.c_str(), lm.config().architecture.c_str(),
                static_cast<long long>(lm.config().n_layers), static_cast<long long>(lm.config().d_model));
    std::printf("corpus         %s (%s), tokens [%lld, %lld), %lld windows of %lld\n", a.corpus.c_str(),
                corpus_format_name(format), static_cast<long long>(split.start),
                static_cast<long long>(split.start + windows.count * context), static_cast<long long>(r.windows),
                static_cast<long long>(context));
    std::printf("tokens_scored  %lld\n", static_cast<long long>(r.tokens_scored));
    std::printf("nll_sum        %.6f\n", r.nll_sum);
    std::printf("ppl            %.6f\n", r.ppl());
    std::printf("time           %.3f s eval (%.0f tokens/s on %s), %.3f s total\n", eval_s, tok_per_s,
                lm.device.c_str(), total_s);
  }
  return 0;
}

}  // namespace

void add_eval_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd =
      root.add_subcommand("eval", "Perplexity of a model on a token split of a corpus (see docs/corpora.md).");
  cmd->add_option("--model", args->model,
                  "HF model directory (config.json, safetensors, tokenizer), or a hub id org/name in the HF cache")
      ->required();
  cmd->add_option("--revision", args->revision,
                  "the revision of a hub id or models--org--name folder: a branch, tag or commit (default main)");
  cmd->add_option("--corpus", args->corpus, "corpus file (or Brown directory)")->required();
  cmd->add_option("--format", args->format, "text | wikitext | lambada | brown | npy (default: from the path)");
  cmd->add_option("--start", args->start, "first token of the split in the corpus stream")->capture_default_str();
  // -1 (not given) means the rest of the stream; a negative value given by hand is a mistake, not that.
  cmd->add_option("--tokens", args->tokens, "tokens in the split (default: the rest of the stream)")
      ->check(CLI::Range(std::int64_t{1}, std::numeric_limits<std::int64_t>::max()));
  cmd->add_option("--context", args->context, "window length T (default: the model's positions, at most 1024)")
      ->check(CLI::Range(std::int64_t{2}, std::numeric_limits<std::int64_t>::max()));
  cmd->add_option("--batch", args->batch, "windows per forward pass")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--device", args->device, "auto | cpu | cuda | cuda:N")->capture_default_str();
  cmd->add_option("--dtype", args->dtype, "compute dtype: float32 | bfloat16 | float16")->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "batches run before the clock starts (default: 1 on a GPU, 0 on the CPU)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20));
  cmd->add_option("--threads", args->threads, "CPU threads (default: LINSWEEP_THREADS or cores / local ranks)")
      ->check(CLI::Range(0, 4096));
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_flag("--per-token", args->per_token, "with --json, include token_nll (windows x (T-1) values)");
  cmd->footer("Example: linsweep eval --model tests/data/models/tiny-gpt2 --corpus notes.txt --context 32 --json");
  cmd->callback([args, action] { *action = [args] { return run_eval(*args); }; });
}

}  // namespace linsweep
