// Selecting Brown files by genre, splitting them by file, and writing Brown directories.
#include "engine/corpus/brown_genres.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "engine/corpus/corpus.hpp"

namespace linsweep {
namespace {

namespace fs = std::filesystem;

// A Brown file is ~20 KB; anything far larger is not one, and is not read into memory.
constexpr std::size_t kMaxBrownFileBytes = std::size_t{64} << 20;

std::string base_name(const std::string& path) { return fs::path(path).filename().string(); }

// True when `path` exists with exactly `bytes`; a differing size is decided without reading.
bool has_bytes(const std::string& path, const std::string& bytes) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) != bytes.size() || ec) return false;
  return read_file(path, kMaxBrownFileBytes) == bytes;
}

}  // namespace

const std::vector<BrownCorpusDef>& demo_brown_corpora() {
  static const std::vector<BrownCorpusDef> defs = {
      {"news", "abc"},
      {"learned", "j"},
      {"fiction", "klmnpr"},
  };
  return defs;
}

std::vector<std::string> brown_genre_files(const std::string& brown_dir, std::string_view genres) {
  if (genres.empty()) throw InputError(brown_dir + ": no Brown genre requested");
  std::string wanted;
  for (char c : genres) {
    const char g = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    if (g < 'a' || g > 'r')
      throw InputError(brown_dir + ": '" + std::string(1, c) + "' is not a Brown genre letter (A-R)");
    wanted += g;
  }
  if (!is_directory(brown_dir)) throw InputError(brown_dir + ": no such directory (the Brown corpus)");
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(brown_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_brown_name(name) && wanted.find(name[1]) != std::string::npos) files.push_back(it->path().string());
  }
  if (ec) throw InputError(brown_dir + ": cannot list the directory: " + ec.message());
  std::sort(files.begin(), files.end());
  for (char g : wanted) {
    const bool any =
        std::any_of(files.begin(), files.end(), [&](const std::string& f) { return base_name(f)[1] == g; });
    if (!any)
      throw InputError(brown_dir + ": no Brown files of genre " + std::string(1, static_cast<char>(g - 'a' + 'A')) +
                       " (named like c" + std::string(1, g) + "01)");
  }
  return files;
}

BrownSplit split_brown_files(std::vector<std::string> files, std::size_t eval_every) {
  if (eval_every < 2)
    throw InputError("Brown split: eval_every must be at least 2 (got " + std::to_string(eval_every) + ")");
  // Sort by file name, not full path, so that the split does not depend on where the files lie.
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    const std::string na = base_name(a), nb = base_name(b);
    return na != nb ? na < nb : a < b;
  });
  for (std::size_t i = 1; i < files.size(); ++i)
    if (base_name(files[i]) == base_name(files[i - 1]))
      throw InputError(files[i] + ": Brown file " + base_name(files[i]) + " is listed twice (" + files[i - 1] + ")");
  if (files.size() < eval_every)
    throw InputError("Brown split: " + std::to_string(files.size()) + " files leave no evaluation file (every " +
                     std::to_string(eval_every) + "th file is held out)");
  BrownSplit split;
  for (std::size_t i = 0; i < files.size(); ++i)
    ((i + 1) % eval_every == 0 ? split.eval : split.train).push_back(files[i]);
  return split;
}

void write_brown_directory(const std::vector<std::string>& files, const std::string& dir) {
  std::set<std::string> names;
  for (const auto& f : files) {
    const std::string name = base_name(f);
    if (!is_brown_name(name))
      throw InputError(f + ": not a Brown file name (c[a-r]NN); the brown reader would skip it");
    if (!is_regular_file(f)) throw InputError(f + ": no such file");
    if (!names.insert(name).second) throw InputError(f + ": a second Brown file named " + name);
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !is_directory(dir))
    throw InputError(dir + ": cannot create the directory" + (ec ? ": " + ec.message() : ""));
  // Stale Brown files first: a directory that held the other part of a split must not leak it.
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_brown_name(name) && names.count(name) == 0) stale.push_back(it->path());
  }
  if (ec) throw InputError(dir + ": cannot list the directory: " + ec.message());
  for (const auto& p : stale)
    if (!fs::remove(p, ec) || ec)
      throw InputError(p.string() + ": cannot remove a stale Brown file" + (ec ? ": " + ec.message() : ""));
  for (const auto& f : files) {
    const std::string bytes = read_file(f, kMaxBrownFileBytes);
    const std::string target = dir + "/" + base_name(f);
    if (has_bytes(target, bytes)) continue;
    // A temporary name the reader ignores, renamed into place: a crash never leaves a short file
    // under a Brown name.
    const std::string tmp = dir + "/." + base_name(f) + ".tmp";
    fs::copy_file(f, tmp, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::rename(tmp, target, ec);
    if (ec) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw InputError(target + ": cannot write the copy of " + f + ": " + ec.message());
    }
  }
}

std::vector<BrownDemoCorpus> write_demo_corpora(const std::string& brown_dir, const std::string& out_dir,
                                                std::size_t eval_every) {
  std::vector<BrownDemoCorpus> out;
  for (const auto& def : demo_brown_corpora()) {
    const BrownSplit split = split_brown_files(brown_genre_files(brown_dir, def.genres), eval_every);
    BrownDemoCorpus c;
    c.name = def.name;
    c.train_dir = out_dir + "/" + def.name + "/train";
    c.eval_dir = out_dir + "/" + def.name + "/eval";
    write_brown_directory(split.train, c.train_dir);
    write_brown_directory(split.eval, c.eval_dir);
    c.train_files = split.train.size();
    c.eval_files = split.eval.size();
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace linsweep
