// Readers for plain text, WikiText, LAMBADA, Brown and .npy corpora.
#include "engine/corpus/corpus.hpp"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/corpus/npy.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxCorpusFileBytes = std::size_t{8} << 30;  // one corpus file

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    else
      ++end;  // keep the newline
    lines.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return lines;
}

// ` = Title = ` with exactly one '=' on each side.
bool is_wikitext_article_heading(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return line.size() >= 6 && line.starts_with(" = ") && line.ends_with(" = ") && line[3] != '=' &&
         line[line.size() - 4] != '=';
}

std::string read_utf8(const std::string& path) {
  std::string text = read_file(path, kMaxCorpusFileBytes);
  require_utf8(text, path);
  return text;
}

}  // namespace

bool is_brown_name(const std::string& n) {
  return n.size() == 4 && n[0] == 'c' && n[1] >= 'a' && n[1] <= 'r' && std::isdigit(static_cast<unsigned char>(n[2])) &&
         std::isdigit(static_cast<unsigned char>(n[3]));
}

CorpusFormat parse_corpus_format(const std::string& name) {
  if (auto f = parse_enum(kCorpusFormats, name)) return *f;
  throw InputError("corpus format '" + name + "' is unknown (known: " + enum_names_list(kCorpusFormats) + ")");
}

CorpusFormat guess_corpus_format(const std::string& path) {
  auto ends = [&](const char* s) { return std::string_view(path).ends_with(s); };
  const std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (ends(".npy")) return CorpusFormat::kNpy;
  if (ends(".jsonl")) return CorpusFormat::kLambada;
  if (base.starts_with("wiki.") && (ends(".raw") || ends(".tokens"))) return CorpusFormat::kWikitext;
  if (is_directory(path) || is_brown_name(base)) return CorpusFormat::kBrown;
  return CorpusFormat::kText;
}

BrownText brown_detag_tagged(const std::string& tagged) {
  BrownText out;
  std::string& text = out.text;
  bool paragraph_open = false;  // a sentence has been written in the current paragraph
  bool no_space_next = false;   // after an opening quote or bracket
  bool open_double = true;      // straight '"' alternates open/close
  for (std::string_view line : split_lines(tagged)) {
    std::size_t a = line.find_first_not_of(" \t\r\n");
    if (a == std::string_view::npos) {  // blank line: paragraph break
      if (paragraph_open) text += '\n';
      paragraph_open = false;
      continue;
    }
    std::size_t pos = a;
    while (pos < line.size()) {
      std::size_t end = line.find_first_of(" \t\r\n", pos);
      if (end == std::string_view::npos) end = line.size();
      std::string_view tok = line.substr(pos, end - pos);
      pos = line.find_first_not_of(" \t\r\n", end);
      if (pos == std::string_view::npos) pos = line.size();
      if (tok.empty()) continue;
      std::size_t slash = tok.rfind('/');
      const bool has_tag = slash != std::string_view::npos && slash != 0;
      std::string word(has_tag ? tok.substr(0, slash) : tok);
      bool opening = false, closing = false;
      if (word == "``") {
        word = "\"", opening = true;
      } else if (word == "''") {
        word = "\"", closing = true;
      } else if (word == "\"") {
        (open_double ? opening : closing) = true;
        open_double = !open_double;
      } else if (word == "(" || word == "[") {
        opening = true;
      } else if (word == "." || word == "," || word == ";" || word == ":" || word == "?" || word == "!" ||
                 word == ")" || word == "]" || word == "'" || word == "n't" || word == "'s") {
        closing = true;
      }
      const bool at_line_start = text.empty() || text.back() == '\n';
      if (!at_line_start && !closing && !no_space_next) text += ' ';
      out.words.push_back({text.size(), text.size() + word.size(), has_tag ? std::string(tok.substr(slash + 1)) : ""});
      text += word;
      no_space_next = opening;
      paragraph_open = true;
    }
  }
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return out;
}

std::string brown_detag(const std::string& tagged) { return brown_detag_tagged(tagged).text; }

namespace {

// The Brown files a path names: the file itself, or a directory's Brown-named files sorted.
std::vector<std::string> brown_files(const std::string& path) {
  std::vector<std::string> files;
  if (!is_directory(path)) return {path};
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) throw InputError(path + ": cannot open directory");
  while (const dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (is_brown_name(name)) files.push_back(path + "/" + name);
  }
  ::closedir(d);
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InputError(path + ": no Brown files (named like ca01) in this directory");
  return files;
}

}  // namespace

std::vector<BrownText> read_brown_tagged(const std::string& path) {
  std::vector<BrownText> docs;
  for (const auto& f : brown_files(path)) {
    BrownText t = brown_detag_tagged(read_utf8(f));
    if (!t.text.empty()) docs.push_back(std::move(t));
  }
  if (docs.empty()) throw InputError(path + ": corpus is empty (no documents)");
  return docs;
}

std::string brown_coarse_pos(std::string_view tag) {
  if (tag.empty()) return "";
  std::string t;
  for (char c : tag) t += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (t.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == std::string::npos) return "punctuation";
  if (t.rfind("FW-", 0) == 0) t = t.substr(3);
  t = t.substr(0, t.find_first_of("+-"));
  auto starts = [&t](std::initializer_list<const char*> prefixes) {
    for (const char* p : prefixes)
      if (t.rfind(p, 0) == 0) return true;
    return false;
  };
  if (starts({"NN", "NP", "NR"})) return "noun";
  if (starts({"VB"})) return "verb";
  if (starts({"BE", "HV", "DO", "MD"})) return "auxiliary";
  if (starts({"JJ"})) return "adjective";
  if (starts({"RB", "QL", "WRB"})) return "adverb";
  if (starts({"PP", "WP"})) return "pronoun";
  if (starts({"AT", "DT", "AP", "ABN", "ABX", "WDT"})) return "determiner";
  if (starts({"IN"})) return "preposition";
  if (starts({"CC", "CS"})) return "conjunction";
  if (starts({"CD", "OD"})) return "number";
  return "other";
}

std::vector<std::string> read_documents(const std::string& path, CorpusFormat format) {
  std::vector<std::string> docs;
  switch (format) {
    case CorpusFormat::kNpy:
      throw InputError(path + ": .npy corpora are token streams, not documents");
    case CorpusFormat::kText: {
      std::string text = read_utf8(path);
      if (!text.empty()) docs.push_back(std::move(text));
      break;
    }
    case CorpusFormat::kWikitext: {
      const std::string text = read_utf8(path);
      std::string current;
      for (std::string_view line : split_lines(text)) {
        if (is_wikitext_article_heading(line) && current.find_first_not_of(" \t\r\n") != std::string::npos) {
          docs.push_back(std::move(current));
          current.clear();
        } else if (is_wikitext_article_heading(line)) {
          current.clear();  // drop blank lines before the first article
        }
        current.append(line);
      }
      if (current.find_first_not_of(" \t\r\n") != std::string::npos) docs.push_back(std::move(current));
      break;
    }
    case CorpusFormat::kLambada: {
      const std::string text = read_utf8(path);
      std::size_t line_no = 0;
      for (std::string_view line : split_lines(text)) {
        ++line_no;
        if (line.find_first_not_of(" \t\r\n") == std::string_view::npos) continue;
        nlohmann::json j;
        try {
          j = nlohmann::json::parse(line);
        } catch (const nlohmann::json::parse_error& e) {
          throw InputError(path + ":" + std::to_string(line_no) + ": invalid JSON at byte " + std::to_string(e.byte));
        } catch (const nlohmann::json::out_of_range&) {  // a number past double's range (1e400)
          throw InputError(path + ":" + std::to_string(line_no) + ": invalid JSON: a number is out of range");
        }
        if (!j.is_object() || !j.contains("text") || !j["text"].is_string())
          throw InputError(path + ":" + std::to_string(line_no) + ": expected an object with a string \"text\"");
        docs.push_back(j["text"].get<std::string>());
      }
      break;
    }
    case CorpusFormat::kBrown: {
      for (const auto& f : brown_files(path)) {
        std::string text = brown_detag(read_utf8(f));
        if (!text.empty()) docs.push_back(std::move(text));
      }
      break;
    }
  }
  if (docs.empty()) throw InputError(path + ": corpus is empty (no documents)");
  return docs;
}

std::vector<TokenId> read_token_stream(const std::string& path, CorpusFormat format, const Tokenizer* tokenizer,
                                       std::optional<TokenId> eos) {
  std::vector<TokenId> stream;
  if (format == CorpusFormat::kNpy) {
    stream = read_npy_tokens(path);
  } else {
    if (tokenizer == nullptr) throw InputError(path + ": a text corpus needs a tokenizer");
    const auto docs = read_documents(path, format);
    if (docs.size() > 1 && !eos) throw InputError(path + ": several documents but the model has no end-of-text id");
    for (std::size_t i = 0; i < docs.size(); ++i) {
      if (i > 0 && (stream.empty() || stream.back() != *eos)) stream.push_back(*eos);
      auto ids = tokenizer->encode_document(docs[i], path);
      stream.insert(stream.end(), ids.begin(), ids.end());
    }
  }
  if (stream.empty()) throw InputError(path + ": corpus is empty (no tokens)");
  return stream;
}

std::vector<TokenId> read_model_token_stream(const std::string& path, CorpusFormat format, const std::string& model_dir,
                                             std::optional<std::int64_t> config_eos) {
  if (format == CorpusFormat::kNpy) return read_token_stream(path, format, nullptr, std::nullopt);
  const std::unique_ptr<Tokenizer> tok = load_tokenizer(model_dir);
  std::optional<TokenId> eos = tok->eos_id();
  if (!eos && config_eos) eos = static_cast<TokenId>(*config_eos);
  return read_token_stream(path, format, tok.get(), eos);
}

}  // namespace linsweep
