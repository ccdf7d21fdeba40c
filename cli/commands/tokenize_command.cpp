// `linsweep tokenize`: token ids of a text file with a model's tokenizer.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.hpp"
#include "common/file_io.hpp"
#include "common/hf_cache.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace linsweep {
namespace {

struct TokenizeArgs {
  std::string model, revision, in;
  bool json = false, allow_special = false, document = false;
};

constexpr std::size_t kMaxTextBytes = std::size_t{4} << 30;

int run_tokenize(const TokenizeArgs& a) {
  const std::unique_ptr<Tokenizer> tok = load_tokenizer(resolve_model_dir(a.model, "", a.revision));
  const std::string text = read_file(a.in, kMaxTextBytes);
  std::vector<TokenId> ids = a.document ? tok->document_prefix() : std::vector<TokenId>{};
  const auto body = tok->encode(text, a.allow_special, a.in);
  ids.insert(ids.end(), body.begin(), body.end());
  if (a.document) ids.insert(ids.end(), tok->document_suffix().begin(), tok->document_suffix().end());
  if (a.json) {
    std::printf("%s\n", nlohmann::json(ids).dump().c_str());
  } else {
    std::string line;
    for (std::size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + std::to_string(ids[i]);
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

}  // namespace

void add_tokenize_command(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* cmd =
      root.add_subcommand("tokenize", "Token ids of a UTF-8 text file (only the tokenizer files are read).");
  cmd->add_option(
         "--model", args->model,
         "directory with tokenizer.json, tokenizer.model (SentencePiece), or vocab.json + merges.txt; or a hub id "
         "org/name in the HF cache")
      ->required();
  cmd->add_option("--revision", args->revision,
                  "the revision of a hub id or models--org--name folder: a branch, tag or commit (default main)");
  cmd->add_option("--in", args->in, "UTF-8 text file (invalid UTF-8 is rejected)")->required();
  cmd->add_flag("--json", args->json, "print a JSON list of ids (default: space-separated)");
  cmd->add_flag("--allow-special", args->allow_special,
                "encode special tokens such as <|endoftext|> as their ids (GPT-2's encoder treats them as text)");
  cmd->add_flag("--document", args->document,
                "add what a corpus document gets: the BOS the model expects (Llama, Mistral, Gemma), if any");
  cmd->footer("Example: linsweep tokenize --model tests/data/models/tiny-gpt2 --in notes.txt --json");
  cmd->callback([args, action] { *action = [args] { return run_tokenize(*args); }; });
}

}  // namespace linsweep
