// Split ranges against corpus lengths, before a store is created or a unit runs.
#include "orchestrator/plan/split_check.hpp"

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/corpus/npy.hpp"
#include "engine/model/model_config.hpp"

namespace linsweep {
namespace {

// The token count of the stream a unit of `model` reads from `corpus` (unit_data.cpp's
// unit_stream reads it the same way).
std::int64_t stream_length(const ModelSpec& model, const CorpusSpec& corpus) {
  const CorpusFormat format = parse_corpus_format(corpus.format);
  if (format == CorpusFormat::kNpy) return check_npy_tokens(corpus.path);
  const ModelConfig config = read_model_config(model.path);
  return static_cast<std::int64_t>(
      read_model_token_stream(corpus.path, format, model.path, config.eos_token_id).size());
}

// The spec's name for a split range ("eval"), or "split" when none matches.
std::string split_name(const SweepSpec& spec, std::int64_t start, std::int64_t tokens) {
  for (const auto& [name, s] : spec.splits)
    if (s.start == start && s.tokens == tokens) return name;
  for (const auto& setting : spec.settings)  // a swept split
    for (const auto& [name, s] : setting.sweep.splits)
      if (s.start == start && s.tokens == tokens) return name;
  return "split";
}

// Every (start, tokens) range a unit reads: params.split, or each of params.splits.
std::vector<std::pair<std::int64_t, std::int64_t>> unit_ranges(const Unit& u) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  auto add = [&](const nlohmann::json& s) {
    if (s.is_object() && s.contains("start") && s.contains("tokens"))
      out.emplace_back(s["start"].get<std::int64_t>(), s["tokens"].get<std::int64_t>());
  };
  if (!u.params.is_object()) return out;
  if (u.params.contains("split")) add(u.params["split"]);
  if (u.params.contains("splits"))
    for (const auto& [name, s] : u.params["splits"].items()) add(s);
  return out;
}

}  // namespace

void check_splits_fit(const std::string& spec_path, const SweepSpec& spec, const Plan& plan) {
  // Stream fingerprint (corpus bytes, format, tokenizer), or model and corpus -> tokens: models
  // that share a tokenizer tokenize a corpus once.
  std::map<std::string, std::int64_t> lengths;
  for (const Unit& u : plan.units) {
    const ModelSpec* model = nullptr;
    for (const auto& m : spec.models) model = m.name == u.model ? &m : model;
    const CorpusSpec* corpus = spec.corpus(u.corpus);
    if (model == nullptr || corpus == nullptr) continue;  // reads no corpus
    const auto ranges = unit_ranges(u);
    if (ranges.empty()) continue;
    const auto stream = u.inputs.find("stream");
    const std::string key = stream != u.inputs.end() ? stream->second : u.model + "\n" + u.corpus;
    auto it = lengths.find(key);
    if (it == lengths.end()) it = lengths.emplace(key, stream_length(*model, *corpus)).first;
    const std::int64_t length = it->second;
    for (const auto& [start, tokens] : ranges) {
      if (start + tokens <= length) continue;
      const std::string via = corpus->format == "npy" ? "" : " as model '" + u.model + "' tokenizes it";
      throw SpecError(spec_path + ": splits." + split_name(spec, start, tokens) + " [" + std::to_string(start) + ", " +
                      std::to_string(start + tokens) + ") runs past the end of corpus '" + u.corpus + "' (" +
                      std::to_string(length) + " tokens" + via + ")");
    }
  }
}

}  // namespace linsweep
