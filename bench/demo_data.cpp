// The demo's data layer, timed and counted: GPT-2's BPE cut to K merges, the three Brown corpora
// split into train/eval directories, and each part's token count with the cut tokenizer (and
// with full GPT-2 for comparison); every document is checked to round-trip and to stay below
// the cut vocabulary.
// Usage: bench_demo_data BROWN_DIR GPT2_TOKENIZER_DIR OUT_DIR [K]   (default K 3839: vocabulary 4096)
//   the two directories are the lines scripts/fetch_demo_data.sh prints.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <tuple>
#include <vector>

#include "common/errors.hpp"
#include "engine/corpus/brown_genres.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/truncate_bpe.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace linsweep;
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s BROWN_DIR GPT2_TOKENIZER_DIR OUT_DIR [K]\n", argv[0]);
    return 2;
  }
  const std::string brown = argv[1], gpt2 = argv[2], out = argv[3];
  const std::size_t k = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 3839;
  try {
    auto t0 = std::chrono::steady_clock::now();
    const TruncatedBpe info = truncate_bpe(gpt2, k, out + "/tokenizer-k" + std::to_string(k));
    std::printf("truncate_bpe K=%zu: vocab %zu, eos %d, %.3f s\n", info.merges, info.vocab_size, info.eos_id,
                seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    const auto cut_owner = load_tokenizer(out + "/tokenizer-k" + std::to_string(k));
    const auto full_owner = load_tokenizer(gpt2);
    const Tokenizer &cut = *cut_owner, &full = *full_owner;
    std::printf("load tokenizers: %.3f s\n", seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    const auto corpora = write_demo_corpora(brown, out + "/corpora");
    std::printf("write_demo_corpora: %.3f s\n", seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    write_demo_corpora(brown, out + "/corpora");
    std::printf("write_demo_corpora again (nothing to write): %.3f s\n\n", seconds_since(t0));

    std::printf("%-8s %-5s %5s %10s %12s %12s %8s %10s\n", "corpus", "part", "files", "chars", "tokens_k",
                "tokens_gpt2", "ratio", "encode_s");
    std::size_t all_tokens = 0;
    for (const auto& c : corpora) {
      for (const auto& [part, dir, nfiles] :
           {std::tuple{"train", c.train_dir, c.train_files}, std::tuple{"eval", c.eval_dir, c.eval_files}}) {
        const auto docs = read_documents(dir, CorpusFormat::kBrown);
        std::size_t chars = 0, tokens = 0, tokens_full = 0;
        double encode_s = 0;
        for (const auto& d : docs) {
          chars += d.size();
          auto te = std::chrono::steady_clock::now();
          const auto ids = cut.encode(d);
          encode_s += seconds_since(te);
          for (TokenId id : ids)
            if (id < 0 || id >= info.eos_id)
              throw InputError(dir + ": token id " + std::to_string(id) + " out of range");
          if (cut.decode(ids) != d) throw InputError(dir + ": a document does not round-trip");
          tokens += ids.size();
          tokens_full += full.encode(d).size();
        }
        // The stream the evaluator sees: documents joined by end-of-text.
        const auto stream = read_token_stream(dir, CorpusFormat::kBrown, &cut, cut.eos_id());
        if (stream.size() != tokens + docs.size() - 1) throw InputError(dir + ": stream length differs");
        all_tokens += stream.size();
        std::printf("%-8s %-5s %5zu %10zu %12zu %12zu %8.3f %10.3f\n", c.name.c_str(), part, nfiles, chars,
                    stream.size(), tokens_full + docs.size() - 1,
                    static_cast<double>(tokens) / static_cast<double>(tokens_full), encode_s);
      }
    }
    std::printf("\nall parts: %zu tokens (K=%zu)\n", all_tokens, k);
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_demo_data: %s\n", e.what());
    return 2;
  }
  return 0;
}
