// The hub cache's layout (huggingface_hub's file_download): CACHE/models--org--name/ holds
// refs/<revision> (a file naming a commit), snapshots/<commit>/ (the files, usually links into
// blobs/) and blobs/.
#include "common/hf_cache.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "common/errors.hpp"
#include "common/file_io.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxRefBytes = 256;
constexpr std::size_t kMaxIdPart = 96;
constexpr const char* kFolderPrefix = "models--";

bool id_part(const std::string& p) {
  if (p.empty() || p.size() > kMaxIdPart || !std::isalnum(static_cast<unsigned char>(p[0]))) return false;
  if (p.find("--") != std::string::npos || p.find("..") != std::string::npos) return false;
  return std::all_of(p.begin(), p.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
  });
}

std::string folder_name(const std::string& id) {
  const auto slash = id.find('/');
  return kFolderPrefix + id.substr(0, slash) + "--" + id.substr(slash + 1);
}

// "org/name" of a folder named models--org--name, or "" when the name is not of that form.
std::string id_of_folder(const std::string& name) {
  if (name.rfind(kFolderPrefix, 0) != 0) return "";
  const std::string rest = name.substr(std::char_traits<char>::length(kFolderPrefix));
  const auto sep = rest.find("--");
  if (sep == std::string::npos) return "";
  const std::string id = rest.substr(0, sep) + "/" + rest.substr(sep + 2);
  return is_hub_id(id) ? id : "";
}

std::string download_hint(const std::string& id, const std::string& revision) {
  return "; fetch it with `huggingface-cli download " + id + (revision.empty() ? "" : " --revision " + revision) + "`";
}

// A commit or revision as a path below snapshots/ or refs/: no empty, "." or ".." component,
// not absolute, printable ASCII.
bool safe_relative(const std::string& s) {
  if (s.empty() || s.front() == '/' || s.back() == '/') return false;
  for (const auto& part : std::filesystem::path(s))
    if (part == "." || part == ".." || part.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 127 && c != '\\'; });
}

std::string listing(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  if (names.empty()) return "nothing";
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 5; ++i) out += (i ? ", " : "") + printable(names[i]);
  return names.size() > 5 ? out + ", …" : out;
}

// The snapshot directory of `folder` (a models--org--name folder of hub id `id`) at `revision`.
std::string snapshot_of(const std::string& folder, const std::string& id, const std::string& revision) {
  const std::string rev = revision.empty() ? "main" : revision;
  const std::string hint = download_hint(id, revision);
  if (!is_directory(folder + "/snapshots"))
    throw InputError(folder + ": a Hugging Face cache folder without snapshots/ (an unfinished download?)" + hint);
  if (!safe_relative(rev))
    throw InputError(folder + ": revision '" + printable(rev) + "' is not a ref or commit name" + hint);
  const std::string ref = folder + "/refs/" + rev;
  if (is_regular_file(ref)) {
    std::string commit = read_file(ref, kMaxRefBytes);
    while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back()))) commit.pop_back();
    if (commit.empty() || commit.find('/') != std::string::npos || !safe_relative(commit))
      throw InputError(ref + ": '" + printable(commit) + "' is not a commit" + hint);
    const std::string snapshot = folder + "/snapshots/" + commit;
    if (!is_directory(snapshot))
      throw InputError(ref + ": names commit " + commit + ", which snapshots/ does not hold (it holds " +
                       listing(folder + "/snapshots") + ")" + hint);
    return snapshot;
  }
  const std::string snapshot = folder + "/snapshots/" + rev;
  if (is_directory(snapshot)) return snapshot;  // a commit named directly
  throw InputError(folder + ": no revision '" + printable(rev) + "' (neither refs/" + printable(rev) +
                   " nor snapshots/" + printable(rev) + "; snapshots/ holds " + listing(folder + "/snapshots") + ")" +
                   hint);
}

std::string absolute_in(const std::string& base, const std::string& given) {
  if (given.empty() || given[0] == '/') return given;
  return (std::filesystem::path(base) / given).lexically_normal().string();
}

}  // namespace

std::vector<HubCache> hub_caches_from_env() {
  std::vector<HubCache> out;
  const auto add = [&out](const char* var, const std::string& suffix, const std::string& source) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') return;
    const std::string dir = std::filesystem::path(std::string(v) + suffix).lexically_normal().string();
    if (std::none_of(out.begin(), out.end(), [&dir](const HubCache& c) { return c.dir == dir; }))
      out.push_back({dir, source});
  };
  add("HF_HUB_CACHE", "", "HF_HUB_CACHE");
  add("HF_HOME", "/hub", "HF_HOME/hub");
  add("XDG_CACHE_HOME", "/huggingface/hub", "XDG_CACHE_HOME/huggingface/hub");
  add("HOME", "/.cache/huggingface/hub", "~/.cache/huggingface/hub");
  return out;
}

bool is_hub_id(const std::string& s) {
  const auto slash = s.find('/');
  if (slash == std::string::npos || s.find('/', slash + 1) != std::string::npos) return false;
  return id_part(s.substr(0, slash)) && id_part(s.substr(slash + 1));
}

std::string resolve_model_dir(const std::string& given, const std::string& base, const std::string& revision,
                              const std::vector<HubCache>& caches) {
  const std::string path = absolute_in(base, given);
  if (is_directory(path)) {
    const std::string id = id_of_folder(std::filesystem::path(path).lexically_normal().filename().string());
    if (!id.empty() && !is_regular_file(path + "/config.json")) return snapshot_of(path, id, revision);
    if (!revision.empty())
      throw InputError(path + ": a model directory, so revision '" + printable(revision) +
                       "' cannot apply (a revision selects a snapshot of a hub id or of a models--org--name folder)");
    return path;
  }
  if (!is_hub_id(given)) return path;
  std::string looked;
  for (const HubCache& c : caches) {
    const std::string folder = c.dir + "/" + folder_name(given);
    if (is_directory(folder)) return snapshot_of(folder, given, revision);
    looked += (looked.empty() ? "" : ", ") + c.dir + " (" + c.source + ")";
  }
  throw InputError("'" + given + "' is not a directory (" + path + ") nor in the Hugging Face cache (looked for " +
                   folder_name(given) + " in " + (looked.empty() ? "no cache: HOME and HF_HUB_CACHE unset" : looked) +
                   ")" + download_hint(given, revision));
}

std::string resolve_model_dir(const std::string& given, const std::string& base, const std::string& revision) {
  return resolve_model_dir(given, base, revision, hub_caches_from_env());
}

}  // namespace linsweep
