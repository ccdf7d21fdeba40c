// Brown Corpus genres: the demo's three corpora (news, learned, fiction) and their file-level split.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace linsweep {

// A corpus made of whole Brown genres; `genres` are the lowercase letters that follow the
// leading `c` of a Brown file name (`ca01`: genre A, press reportage).
struct BrownCorpusDef {
  std::string name;
  std::string genres;
};

// The demo's corpora (issue 8): news = A-C, learned = J, fiction = K-R (K L M N P R; Brown
// has no genre O or Q). A static table; thread safe.
const std::vector<BrownCorpusDef>& demo_brown_corpora();

// Full paths of the Brown files in `brown_dir` (named like the `brown` reader reads them,
// `c[a-r]NN`) whose genre letter is in `genres` (a-r, either case), sorted by name. Throws
// InputError naming the path when the directory is missing or unreadable, when a letter is
// not a Brown genre, or when a requested genre has no file in the directory.
std::vector<std::string> brown_genre_files(const std::string& brown_dir, std::string_view genres);

// A file-level split: no file is in both parts, so evaluation text never reaches training.
struct BrownSplit {
  std::vector<std::string> train;
  std::vector<std::string> eval;
};

// Deterministic split of `files` (sorted by name here, whatever the input order): the
// eval_every-th, 2*eval_every-th, ... file goes to evaluation, the rest to training. Taking
// every n-th file of the name order spreads evaluation over the genres of a mixed corpus
// (news: ca.., cb.., cc..) in proportion. Throws InputError when eval_every < 2 or when
// `files` has fewer than eval_every entries (an empty part), or holds a file name twice.
BrownSplit split_brown_files(std::vector<std::string> files, std::size_t eval_every = 5);

// Makes `dir` (created with its parents) a Brown directory holding exactly `files`: each is
// copied under its own name (through a temporary file and a rename, skipped when the copy
// there already has the same bytes), and other Brown-named files in `dir` are removed, so
// that a directory reused for another split cannot keep files of the other part. Non-Brown
// entries are left alone (the reader ignores them). Read with format `brown`, the directory
// gives one document per file in name order, joined by end-of-text in the token stream, and
// its fingerprint covers exactly these files: a spec corpus can name it directly.
// Throws InputError naming the file when a source is not a Brown-named regular file, when
// two sources share a name, or when a copy or removal fails. Not safe against a concurrent
// writer of the same `dir`.
void write_brown_directory(const std::vector<std::string>& files, const std::string& dir);

// One demo corpus written out: `out_dir/<name>/train` and `out_dir/<name>/eval`.
struct BrownDemoCorpus {
  std::string name;
  std::string train_dir;
  std::string eval_dir;
  std::size_t train_files = 0;
  std::size_t eval_files = 0;
};

// brown_genre_files + split_brown_files + write_brown_directory for each corpus of
// demo_brown_corpora(), in that order. Idempotent: a second call with the same Brown
// directory rewrites nothing. Throws InputError as the three functions do.
std::vector<BrownDemoCorpus> write_demo_corpora(const std::string& brown_dir, const std::string& out_dir,
                                                std::size_t eval_every = 5);

}  // namespace linsweep
