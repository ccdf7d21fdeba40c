// `token_features`: what the token itself and its place say about δ (docs/methods.md, "Token
// features"). Per model, corpus and layer: δ's mean by token class (word, whitespace-prefixed
// word, number, punctuation, other) and, on Brown corpora, by part of speech (the reader keeps
// the tags), and the R² of least-squares regressions of δ on per-token features (log frequency,
// length, position, whitespace prefix, word continuation, the model's next-token entropy and
// surprisal, the class, the part of speech), in sample and on held-out windows. The token is
// the one δ_t scores, at t + 1, as the paper's analyses key tokens (`key: predicted`), or the
// input token at t (`key: input`). Fig. 4 and the token-feature regression table are this file's.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/corpus/corpus.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/language_model.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "experiments/framework/capture_data.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/layer_params.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/framework/unit_params.hpp"
#include "experiments/numerics/correlation.hpp"
#include "experiments/token_features/token_features_unit.hpp"
#include "presentation/figures.hpp"
#include "storage/activation_shard.hpp"
#include "storage/table_def.hpp"

namespace linsweep {
namespace {

struct TokenFeaturesParams {
  nlohmann::json layers = "all";
  std::string key = "predicted";
  std::int64_t bootstrap = 1000;
};

const ParamSchema<TokenFeaturesParams>& token_features_schema() {
  static const ParamSchema<TokenFeaturesParams> s =
      ParamSchema<TokenFeaturesParams>()
          .layers("layers", &TokenFeaturesParams::layers, "layers to describe (`all`: the sweep's)")
          .add("key", &TokenFeaturesParams::key, one_of({"predicted", "input"}),
               "the token whose features describe δ_t: predicted (at t + 1, the one δ scores; the paper's) or "
               "input (at t)")
          .add("bootstrap", &TokenFeaturesParams::bootstrap, at_least(1),
               "bootstrap resamples of windows for each Pearson r's 95% interval (seeded by the layer)");
  return s;
}

struct TokenFeaturesUnitParams {
  UnitBasics basics;  // the gate split and context it reads captured rows of
  std::vector<std::int64_t> layers;
  std::string key;
  std::int64_t bootstrap = 0;
};
LINSWEEP_UNIT_PARAMS(TokenFeaturesUnitParams, layers, key, bootstrap)

void expand_token_features(const TokenFeaturesParams& p, PlanBuilder& b) {
  for_each_capture(
      b, p.layers,
      [&](const ModelSpec& m, const std::string& corpus, const std::string& capture,
          const std::vector<std::int64_t>& layers) {
        b.add_with_inputs(Unit{
            .kind = "token_features",
            .model = m.name,
            .corpus = corpus,
            .params =
                TokenFeaturesUnitParams{
                    {.split = b.split("gate").get<Split>(), .context = b.sweep().context, .lambda = 0, .format = {}},
                    layers,
                    p.key,
                    p.bootstrap},
            .deps = {capture}});
      });
}

const TableRegistrar kTokenClassesTable{token_classes_table().schema()};
const TableRegistrar kTokenRegressionTable{token_regression_table().schema()};

const ExperimentRegistrar kTokenFeatures{make_experiment<TokenFeaturesParams>(
    "token_features", "δ by token class and part of speech, and its regression on per-token features", 42,
    token_features_schema(), expand_token_features,
    validate_layer_param<TokenFeaturesParams, &TokenFeaturesParams::layers>("layers"),
    captured_layer_needs<TokenFeaturesParams, &TokenFeaturesParams::layers>())};

bool letter(unsigned char c) { return std::isalpha(c) || c >= 0x80; }

// The class of a token's text: letters (with inner apostrophes and hyphens) are a word, after
// leading whitespace a whitespace-prefixed word; digits a number; punctuation alone
// punctuation; anything else (mixed, whitespace alone, special tokens) other.
std::size_t token_class(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  const std::string_view rest = std::string_view(text).substr(i);
  if (rest.empty()) return 4;
  auto all = [&rest](auto pred) {
    return std::all_of(rest.begin(), rest.end(), [&](char c) { return pred(static_cast<unsigned char>(c)); });
  };
  if (std::any_of(rest.begin(), rest.end(), [](char c) { return letter(static_cast<unsigned char>(c)); }) &&
      all([](unsigned char c) { return letter(c) || c == '\'' || c == '-'; }))
    return i > 0 ? 1 : 0;
  if (all([](unsigned char c) { return std::isdigit(c) != 0; })) return 2;
  if (all([](unsigned char c) { return std::ispunct(c) != 0; })) return 3;
  return 4;
}

// The coarse part of speech of every stream position of a Brown corpus ("" at end-of-text, BOS
// and where a token holds no word): each document is tokenized as the stream was
// (read_token_stream), and a token takes the tag of the word holding its first non-space byte.
// Throws InputError when the tokens differ from `stream` (the corpus changed under the store).
std::vector<std::string> stream_pos(const ExperimentInput& in, const Tokenizer& tok, std::optional<TokenId> eos,
                                    const std::vector<TokenId>& stream) {
  std::vector<std::string> out;
  out.reserve(stream.size());
  auto expect = [&](TokenId id) {
    if (out.size() >= stream.size() || stream[out.size()] != id)
      throw InputError(in.corpus_path + ": its tokens differ from the unit's stream (the corpus changed?)");
  };
  auto expect_markers = [&](const std::vector<TokenId>& ids) {
    for (TokenId id : ids) {
      expect(id);
      out.push_back("");
    }
  };
  const auto docs = read_brown_tagged(in.corpus_path);
  for (std::size_t d = 0; d < docs.size(); ++d) {
    if (d > 0 && eos && (out.empty() || stream[out.size() - 1] != *eos)) expect_markers({*eos});
    expect_markers(tok.document_prefix());
    const BrownText& doc = docs[d];
    const std::vector<TokenId> ids = tok.encode(doc.text, false, in.corpus_path);
    // A SentencePiece-style tokenizer decodes the space it put before the document's first word.
    const std::string decoded = tok.decode(ids);
    const std::size_t shift =
        decoded.size() > doc.text.size() && decoded[0] == ' ' && (doc.text.empty() || doc.text[0] != ' ') ? 1 : 0;
    std::size_t offset = 0, word = 0;
    for (TokenId id : ids) {
      expect(id);
      const std::size_t len = tok.decode({id}).size();
      const std::size_t begin = offset > shift ? offset - shift : 0,
                        end = offset + len > shift ? offset + len - shift : 0;
      std::size_t at = begin;
      while (at < end && at < doc.text.size() && std::isspace(static_cast<unsigned char>(doc.text[at]))) ++at;
      while (word < doc.words.size() && doc.words[word].end <= at) ++word;
      const bool inside = word < doc.words.size() && doc.words[word].begin <= at && at < end;
      out.push_back(inside ? brown_coarse_pos(doc.words[word].tag) : "");
      offset += len;
    }
    expect_markers(tok.document_suffix());
  }
  if (out.size() != stream.size()) throw InputError(in.corpus_path + ": its tokens differ from the unit's stream");
  return out;
}

// The next-token entropy and the surprisal of the actual next token (nats, log-softmax in
// float64) at positions 0..T−2 of every window of `w`, window-major; windows sharded over the
// group and summed. Of a model split over ranks, the last stage alone has logits; the others
// add zeros.
void predictive(const ExperimentInput& in, const Windows& w, std::vector<double>* entropy,
                std::vector<double>* surprisal) {
  LanguageModel& model = *in.model;
  const std::int64_t per = w.context - 1;
  entropy->assign(static_cast<std::size_t>(w.count * per), 0.0);
  surprisal->assign(entropy->size(), 0.0);
  for_my_windows(in, w, [&](const at::Tensor& ids, std::size_t at_window) {
    const at::Tensor hidden = model.hidden_states(ids);
    for (std::int64_t i = 0; model.scores() && i < ids.size(0); ++i) {  // one window at a time: [T−1, V] float64 logits
      const at::Tensor logp = at::log_softmax(model.head(hidden[i].slice(0, 0, per)).to(at::kCPU, at::kDouble), -1);
      const at::Tensor ent = -(logp.exp() * logp).sum(-1).contiguous();
      const at::Tensor next = ids[i].slice(0, 1, w.context).to(at::kCPU).unsqueeze(-1);
      const at::Tensor sur = (-logp.gather(-1, next).squeeze(-1)).contiguous();
      const auto at = (at_window + static_cast<std::size_t>(i)) * static_cast<std::size_t>(per);
      std::copy(ent.data_ptr<double>(), ent.data_ptr<double>() + per,
                entropy->begin() + static_cast<std::ptrdiff_t>(at));
      std::copy(sur.data_ptr<double>(), sur.data_ptr<double>() + per,
                surprisal->begin() + static_cast<std::ptrdiff_t>(at));
    }
  });
  if (in.group != nullptr) {
    in.group->allreduce_sum(*entropy);
    in.group->allreduce_sum(*surprisal);
  }
}

// A layer's gate-split δ with the window and position of each row (every shard part, in order).
struct DeltaRows {
  std::vector<double> delta;
  std::vector<std::int32_t> token_ids, position;
  std::vector<std::int64_t> window;
};
DeltaRows read_deltas(const ExperimentInput& in, const UnitResult& capture, std::int64_t layer) {
  const auto it = capture.arrays.find("capture/parts");
  if (it == capture.arrays.end() || it->second.values.size() != 1 || it->second.values[0] < 1)
    throw StorageError("capture unit " + capture.unit_id + ": missing or malformed capture/parts", ExitCode::kBadInput);
  DeltaRows out;
  for (std::int64_t p = 0; p < static_cast<std::int64_t>(it->second.values[0]); ++p) {
    const std::string path = in.store.activation_shard(capture.unit_id, "gate", layer, p);
    const ActivationReader r(path);
    if (!r.has_delta()) throw StorageError(path + ": shard has no delta dataset", ExitCode::kBadInput);
    for (float v : r.delta(0, r.rows())) out.delta.push_back(v);
    for (auto v : r.token_ids(0, r.rows())) out.token_ids.push_back(v);
    for (auto v : r.position(0, r.rows())) out.position.push_back(v);
    for (auto v : r.window(0, r.rows())) out.window.push_back(v);
  }
  return out;
}

// Per-row features of the gate split, in the captured rows' order.
struct Features {
  std::vector<std::string> names;            // the scalar features
  std::vector<std::vector<double>> columns;  // one per name
  std::vector<double> token_class, pos;      // category indices (pos: −1 without a tag; empty off Brown)
  std::vector<std::uint8_t> holdout;         // window mod 10 ≥ 7
  std::vector<std::int64_t> window;          // each row's window: the unit an r's interval resamples
  std::string key;                           // the described token: predicted or input
};

Features row_features(const ExperimentInput& in, const TokenFeaturesUnitParams& p, const DeltaRows& rows) {
  const std::unique_ptr<Tokenizer> tok_owner = load_tokenizer(in.model_path);
  const Tokenizer& tok = *tok_owner;
  std::optional<TokenId> eos = tok.eos_id();
  if (!eos && in.model->config().eos_token_id) eos = static_cast<TokenId>(*in.model->config().eos_token_id);
  const std::vector<TokenId> stream = unit_stream(in);
  const Windows w = unit_windows(in, stream, p.basics.split, p.basics.context);
  check_windows(*in.model, w);
  std::vector<double> entropy, surprisal;
  predictive(in, w, &entropy, &surprisal);
  std::unordered_map<TokenId, double> count;
  for (TokenId t : stream) count[t] += 1;
  const bool brown = parse_corpus_format(in.corpus_format) == CorpusFormat::kBrown;
  const std::vector<std::string> pos = brown ? stream_pos(in, tok, eos, stream) : std::vector<std::string>{};
  std::unordered_map<TokenId, std::string> text;
  auto text_of = [&](TokenId id) -> const std::string& {
    auto it = text.find(id);
    return it != text.end() ? it->second : text.emplace(id, tok.decode({id})).first->second;
  };
  Features f;
  f.key = p.key;
  f.names = {"log frequency",      "length",   "position", "whitespace prefix", "word continuation",
             "next-token entropy", "surprisal"};
  f.columns.assign(f.names.size(), {});
  const std::int64_t per = p.basics.context - 1;
  // The described token: the one δ_t scores (t + 1, inside the window: rows are t ≤ T − 2) or t.
  const std::int64_t shift = p.key == "predicted" ? 1 : 0;
  for (std::size_t r = 0; r < rows.delta.size(); ++r) {
    const std::int64_t input_at = p.basics.split.start + rows.window[r] * p.basics.context + rows.position[r];
    const std::int64_t at = input_at + shift;
    if (input_at < 0 || at >= static_cast<std::int64_t>(stream.size()) ||
        stream[static_cast<std::size_t>(input_at)] != rows.token_ids[r])
      throw InputError(in.unit_id + ": captured row " + std::to_string(r) +
                       " is not the stream's token (the corpus changed?)");
    const TokenId token = stream[static_cast<std::size_t>(at)];
    const std::string& t = text_of(token);
    const std::size_t cls = token_class(t);
    const bool space = !t.empty() && std::isspace(static_cast<unsigned char>(t[0]));
    std::size_t core = 0;
    while (core < t.size() && std::isspace(static_cast<unsigned char>(t[core]))) ++core;
    const std::string& prev = at > 0 ? text_of(stream[static_cast<std::size_t>(at - 1)]) : std::string();
    const bool continuation = cls == 0 && !prev.empty() && letter(static_cast<unsigned char>(prev.back()));
    const auto k = static_cast<std::size_t>(rows.window[r] * per + rows.position[r]);
    const double values[] = {std::log(count[token] / static_cast<double>(stream.size())),
                             static_cast<double>(t.size() - core),
                             static_cast<double>(rows.position[r]),
                             space ? 1.0 : 0.0,
                             continuation ? 1.0 : 0.0,
                             entropy.at(k),
                             surprisal.at(k)};
    for (std::size_t j = 0; j < f.names.size(); ++j) f.columns[j].push_back(values[j]);
    f.token_class.push_back(static_cast<double>(cls));
    if (brown) {
      const std::string& tag = pos[static_cast<std::size_t>(at)];
      const auto it = std::find(kPos.begin(), kPos.end(), tag);
      f.pos.push_back(it == kPos.end() ? -1.0 : static_cast<double>(it - kPos.begin()));
    }
    f.holdout.push_back(rows.window[r] % 10 >= 7);
    f.window.push_back(rows.window[r]);
  }
  return f;
}

// Indicator columns of a category index (every category but the first seen, which the
// intercept stands for; −1 is no category: all zero).
std::vector<std::vector<double>> indicators(const std::vector<double>& index, std::size_t categories) {
  std::vector<std::vector<double>> cols;
  for (std::size_t c = 1; c < categories; ++c) {
    std::vector<double> col(index.size());
    bool any = false;
    for (std::size_t r = 0; r < index.size(); ++r) any |= (col[r] = index[r] == static_cast<double>(c)) != 0;
    if (any) cols.push_back(std::move(col));
  }
  return cols;
}

// R² of least squares of y on an intercept and `cols` over the rows where `use` holds, applied
// to the rows where `score` holds (1 − RSS/TSS about their own mean).
double r2_of(const std::vector<const std::vector<double>*>& cols, const std::vector<double>& y,
             const std::vector<std::uint8_t>& fit_rows, const std::vector<std::uint8_t>& score_rows) {
  std::vector<std::int64_t> fit, score;
  for (std::size_t r = 0; r < y.size(); ++r) {
    if (fit_rows[r]) fit.push_back(static_cast<std::int64_t>(r));
    if (score_rows[r]) score.push_back(static_cast<std::int64_t>(r));
  }
  if (fit.size() <= cols.size() + 1 || score.size() < 2) return std::nan("");
  const auto k = static_cast<std::int64_t>(cols.size()) + 1;
  auto design = [&](const std::vector<std::int64_t>& rows) {
    at::Tensor a = at::ones({static_cast<std::int64_t>(rows.size()), k}, at::kDouble);
    auto acc = a.accessor<double, 2>();
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t j = 0; j < cols.size(); ++j)
        acc[static_cast<std::int64_t>(i)][static_cast<std::int64_t>(j) + 1] =
            (*cols[j])[static_cast<std::size_t>(rows[i])];
    return a;
  };
  auto target = [&](const std::vector<std::int64_t>& rows) {
    std::vector<double> v;
    for (auto r : rows) v.push_back(y[static_cast<std::size_t>(r)]);
    return at::tensor(v, at::kDouble).unsqueeze(1);
  };
  const at::Tensor beta = std::get<0>(at::linalg_lstsq(design(fit), target(fit), c10::nullopt, "gelsd"));
  const at::Tensor ys = target(score);
  const double rss = (ys - design(score).matmul(beta)).pow(2).sum().item<double>();
  const double tss = (ys - ys.mean()).pow(2).sum().item<double>();
  return tss > 0 ? 1.0 - rss / tss : std::nan("");
}

// Every feature's regression rows at `layer`; each scalar feature's Pearson r with its interval
// (`bootstrap` draws of windows, seeded by the layer) and flag.
std::vector<TokenRegressionRow> regressions(const ExperimentInput& in, std::int64_t layer, const Features& f,
                                            const std::vector<double>& delta, std::int64_t bootstrap) {
  const std::vector<std::uint8_t> all(delta.size(), 1);
  std::vector<std::uint8_t> train(delta.size());
  for (std::size_t r = 0; r < delta.size(); ++r) train[r] = !f.holdout[r];
  std::vector<TokenRegressionRow> out;
  // `r`: the scalar feature's correlation with δ (null for a categorical feature and for all).
  auto add = [&](const std::string& name, const std::vector<const std::vector<double>*>& cols, const Correlation* r) {
    out.push_back({.model = in.model_name,
                   .corpus = in.corpus_name,
                   .layer = layer,
                   .feature = name,
                   .r2 = r2_of(cols, delta, all, all),
                   .r2_holdout = r2_of(cols, delta, train, f.holdout),
                   .pearson_r = r ? r->r : NAN,
                   .predictors = static_cast<std::int64_t>(cols.size()),
                   .samples = static_cast<std::int64_t>(delta.size()),
                   .key = f.key,
                   .pearson_ci_low = r ? r->ci_low : NAN,
                   .pearson_ci_high = r ? r->ci_high : NAN,
                   .flag = r ? correlation_flag("r", *r, "positions", "values") : ""});
  };
  std::vector<const std::vector<double>*> every;
  for (std::size_t j = 0; j < f.names.size(); ++j) {
    const Correlation r = correlate(f.columns[j], delta, f.window, bootstrap, static_cast<std::uint64_t>(layer));
    add(f.names[j], {&f.columns[j]}, &r);
    every.push_back(&f.columns[j]);
  }
  const auto classes = indicators(f.token_class, kClasses.size());
  std::vector<const std::vector<double>*> class_cols;
  for (const auto& c : classes) class_cols.push_back(&c);
  add("token class", class_cols, nullptr);
  every.insert(every.end(), class_cols.begin(), class_cols.end());
  const auto pos = indicators(f.pos, kPos.size());
  if (!f.pos.empty()) {
    std::vector<const std::vector<double>*> pos_cols;
    for (const auto& c : pos) pos_cols.push_back(&c);
    add("part of speech", pos_cols, nullptr);
    every.insert(every.end(), pos_cols.begin(), pos_cols.end());
  }
  add("all", every, nullptr);
  return out;
}

// Count, mean and population standard deviation of δ per category index.
void category_rows(const ExperimentInput& in, std::int64_t layer, const std::string& key, const std::string& scheme,
                   const std::vector<std::string>& names, const std::vector<double>& index,
                   const std::vector<double>& delta, std::vector<TokenClassRow>* out) {
  for (std::size_t c = 0; c < names.size(); ++c) {
    double n = 0, sum = 0, sq = 0;
    for (std::size_t r = 0; r < delta.size(); ++r)
      if (index[r] == static_cast<double>(c)) n += 1, sum += delta[r], sq += delta[r] * delta[r];
    if (n == 0) continue;
    const double mean = sum / n;
    out->push_back({.model = in.model_name,
                    .corpus = in.corpus_name,
                    .layer = layer,
                    .scheme = scheme,
                    .category = names[c],
                    .count = static_cast<std::int64_t>(n),
                    .mean_delta = mean,
                    .sd_delta = std::sqrt(std::max(0.0, sq / n - mean * mean)),
                    .key = key});
  }
}

UnitResult run_token_features(const ExperimentInput& in) {
  const UnitResult& capture = dep_of_kind(in.deps, "capture", in.unit_id);
  const auto p = in.params.get<TokenFeaturesUnitParams>();
  if (p.layers.empty()) throw InputError(in.unit_id + ": no layers");
  const DeltaRows first = read_deltas(in, capture, p.layers.front());
  const Features f = row_features(in, p, first);
  std::vector<TokenClassRow> classes;
  std::vector<TokenRegressionRow> fits;
  for (std::int64_t layer : p.layers) {
    const DeltaRows rows = layer == p.layers.front() ? first : read_deltas(in, capture, layer);
    if (rows.window != first.window || rows.position != first.position)
      throw StorageError(in.unit_id + ": layer " + std::to_string(layer) + "'s rows are other positions than layer " +
                             std::to_string(p.layers.front()) + "'s",
                         ExitCode::kBadInput);
    category_rows(in, layer, f.key, "class", kClasses, f.token_class, rows.delta, &classes);
    if (!f.pos.empty()) category_rows(in, layer, f.key, "pos", kPos, f.pos, rows.delta, &classes);
    const auto r = regressions(in, layer, f, rows.delta, p.bootstrap);
    fits.insert(fits.end(), r.begin(), r.end());
  }
  UnitResult out = unit_result(in);
  out.tables.push_back(token_classes_table().table(classes));
  out.tables.push_back(token_regression_table().table(fits));
  const std::string key = "token_features/" + in.model_name + "/" + in.corpus_name + "/";
  const auto n = static_cast<std::int64_t>(first.delta.size());
  for (std::size_t j = 0; j < f.names.size(); ++j) out.arrays[key + safe_name(f.names[j])] = {{n}, f.columns[j]};
  out.arrays[key + "token_class"] = {{n}, f.token_class};
  if (!f.pos.empty()) out.arrays[key + "pos"] = {{n}, f.pos};
  return out;
}

const UnitKindRegistrar kTokenFeaturesKind{"token_features",
                                           run_token_features,
                                           /*needs_model=*/true,
                                           {},
                                           /*runs_split=*/true};

}  // namespace
}  // namespace linsweep
