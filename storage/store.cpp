// Store directory management and atomic commits.
#include "storage/store.hpp"

#include <random>

#include <sys/file.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "common/path_confinement.hpp"
#include "storage/hdf5.hpp"
#include "storage/table_io.hpp"

namespace linsweep {
namespace {

constexpr const char* kMarker = "store.json";

void fsync_path(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw StorageError(path + ": cannot open for fsync: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int e = errno;
  ::close(fd);
  if (rc != 0) throw_write_error(path + ": fsync failed", e);  // delayed write-back errors, ENOSPC on NFS
}

// Writes all of `text` to `fd`: a short write is retried, so that a full disk reports ENOSPC
// instead of leaving a silently shortened file. Returns 0 or the errno of the failing write.
int write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// `e` with the path of the file being written in front, unless it is there already.
DiskFullError disk_full_at(const std::string& path, const DiskFullError& e) {
  const std::string m = e.what();
  return DiskFullError(m.rfind(path, 0) == 0 ? m : path + ": " + m);
}

// Removes files named .tmp-* under `dir` (recursively when `recurse`): what writers killed
// mid-write left behind. Only a writer that excludes every other writer may call it.
void remove_temporaries(const std::string& dir, bool recurse) {
  std::error_code ec;
  std::vector<std::filesystem::path> stale;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_symlink(ec)) continue;
    if (name.rfind(".tmp-", 0) == 0 && it->is_regular_file(ec)) stale.push_back(it->path());
    else if (recurse && it->is_directory(ec)) remove_temporaries(it->path().string(), true);
  }
  for (const auto& f : stale) std::filesystem::remove(f, ec);
}

void make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    throw StorageError(path + ": cannot create directory: " + std::strerror(errno));
}

std::string parent_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

// Unit ids become file names: only [A-Za-z0-9._-], not starting with '.'. `file`, when
// given, is the file the id was read from (a stray file in units/), named in the message.
void check_unit_id(const std::string& id, const std::string& file = "") {
  bool ok = !id.empty() && id.size() <= 200 && id[0] != '.';
  for (char c : id) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  if (ok) return;
  if (!file.empty())
    throw StorageError(printable(file) + ": not a unit file of this store (unit ids are letters, digits, '.', '-' and '_')",
                       ExitCode::kBadInput);
  throw StorageError("unit id '" + printable(id) + "' is not a safe file name", ExitCode::kBadInput);
}

}  // namespace

void atomic_replace(const std::string& path, const std::function<void(const std::string&)>& write) {
  // Host, pid and a random tag: writers on several nodes may share the directory (split
  // Slurm jobs on one store), so a pid alone could collide.
  char host[64] = {};
  ::gethostname(host, sizeof(host) - 1);
  static thread_local std::mt19937_64 rng(std::random_device{}());
  const std::string tmp = parent_of(path) + "/.tmp-" + host + "-" + std::to_string(::getpid()) + "-" +
                          std::to_string(rng() % 1000000007ull) + "-" + path.substr(path.find_last_of('/') + 1);
  try {
    write(tmp);
    fsync_path(tmp, false);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) throw_write_error(path + ": rename failed", errno);
    fsync_path(parent_of(path), true);
  } catch (const DiskFullError& e) {
    std::remove(tmp.c_str());
    throw disk_full_at(tmp, e);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

void require_store_confined(const std::string& dir) {
  std::vector<std::string> entries = {"lock", "store.json", "spec.yaml", "journal.jsonl", "run.json", "store.h5",
                                      "store.h5.lock", "units", "logs", "activations", "checkpoints", "models", "slurm",
                                      "report", "figures"};
  // One level further where workers create per-unit directories (activations/<id>/<split>/...).
  for (const char* sub : {"activations", "checkpoints", "models"}) {
    std::error_code ec;
    if (std::filesystem::is_symlink(dir + "/" + sub, ec)) continue;  // reported below
    for (std::filesystem::directory_iterator it(dir + "/" + sub, ec), end; !ec && it != end; it.increment(ec))
      entries.push_back(std::string(sub) + "/" + it->path().filename().string());
  }
  require_real_entries(dir, entries);
}

void make_output_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec) return;
  const bool user_error = ec == std::errc::not_a_directory || ec == std::errc::file_exists;
  throw StorageError(dir + ": cannot create directory: " + ec.message(),
                     user_error ? ExitCode::kBadInput : ExitCode::kUnitsFailed);
}

void atomic_write_text(const std::string& path, const std::string& text) {
  atomic_replace(path, [&](const std::string& tmp) {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) throw_write_error(tmp + ": cannot create", errno);
    const int e = write_all(fd, text);
    const int closed = ::close(fd) == 0 ? 0 : errno;
    if (e != 0 || closed != 0) throw_write_error(tmp + ": write failed", e != 0 ? e : closed);
  });
}

Store Store::open_read(const std::string& dir) {
  Store s(dir);
  s.check_marker();
  return s;
}

Store Store::open_write(const std::string& dir, const std::string& spec_text, bool shared) {
  Store s(dir);
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !is_directory(dir))
    throw StorageError(dir + ": not a directory, so not a store", ExitCode::kBadInput);
  std::filesystem::create_directories(dir, ec);
  if (ec) throw StorageError(dir + ": cannot create the store directory: " + ec.message());
  require_store_confined(dir);  // before the lock: `lock` itself may be a planted link
  s.lock_ = std::make_unique<StoreLock>(dir, shared);
  if (is_regular_file(dir + "/" + kMarker)) {
    s.check_marker();
  } else {
    atomic_write_text(dir + "/" + kMarker,
                      nlohmann::json({{"format", "linsweep-store"}, {"schema_version", kStoreSchemaVersion}}).dump() + "\n");
  }
  if (!spec_text.empty() && !is_regular_file(s.spec_path()))
    atomic_write_text(s.spec_path(), spec_text);
  make_dir(dir + "/units");
  make_dir(dir + "/logs");
  s.journal_ = std::make_unique<JournalWriter>(dir + "/journal.jsonl");
  // Temporary files of writers that died mid-write (staged units, store.h5, run.json, activation
  // shards); only the exclusive lock holder may remove them (a shared holder's peers may be
  // writing right now). report/ and figures/ are left alone: `tables` and `plot` write there
  // without the lock.
  if (!shared) {
    remove_temporaries(dir + "/units", false);
    remove_temporaries(dir, false);
    remove_temporaries(dir + "/activations", true);
  }
  return s;
}

void Store::check_marker() const {
  const std::string marker = dir_ + "/" + kMarker;
  if (!is_regular_file(marker)) throw StorageError(dir_ + ": not a linsweep store (no " + kMarker + ")", ExitCode::kBadInput);
  nlohmann::json j;
  try {
    j = read_json_file(marker, 1 << 20);
  } catch (const InputError& e) {
    throw StorageError(e.what(), ExitCode::kBadInput);
  }
  if (!j.is_object() || j.value("format", "") != "linsweep-store" || !j.contains("schema_version") ||
      !j["schema_version"].is_number_integer())
    throw StorageError(marker + ": not a linsweep store marker", ExitCode::kBadInput);
  const int v = j["schema_version"].get<int>();
  if (v > kStoreSchemaVersion)
    throw StorageError(marker + ": store schema version " + std::to_string(v) + " is newer than this build's " +
                           std::to_string(kStoreSchemaVersion) + "; use a newer linsweep",
                       ExitCode::kBadInput);
}

std::optional<std::string> Store::recovered_stale_lock() const {
  return lock_ ? lock_->stale_holder() : std::nullopt;
}

void Store::commit(const UnitResult& unit, double duration_seconds, int rank, std::int64_t tokens) {
  if (!writable()) throw StorageError(dir_ + ": store is open read-only");
  check_unit_id(unit.unit_id);
  atomic_replace(dir_ + "/units/" + unit.unit_id + ".h5", [&](const std::string& tmp) { write_unit_file(tmp, unit); });
  journal({.event = "committed", .unit = unit.unit_id, .rank = rank, .duration = duration_seconds, .tokens = tokens});
  remove_unit_checkpoints(unit.unit_id);
}

void Store::remove_unit_checkpoints(const std::string& unit_id) {
  // A committed unit never resumes: its training checkpoints only take space now.
  std::error_code ec;
  std::filesystem::remove_all(dir_ + "/checkpoints/" + unit_id, ec);
}

std::string Store::staging_path(const std::string& unit_id, int rank) const {
  check_unit_id(unit_id);
  return dir_ + "/units/.tmp-staged-" + std::to_string(rank) + "-" + unit_id + ".h5";
}

std::string Store::stage(const UnitResult& unit, int rank) const {
  const std::string path = staging_path(unit.unit_id, rank);
  try {
    write_unit_file(path, unit);
    fsync_path(path, false);
  } catch (const DiskFullError& e) {
    std::remove(path.c_str());  // a partial file only takes the space that is missing
    throw disk_full_at(path, e);
  } catch (...) {
    std::remove(path.c_str());
    throw;
  }
  return path;
}

void Store::commit_staged(const std::string& staged, const std::string& unit_id, double duration_seconds, int rank,
                          std::int64_t tokens) {
  if (!writable()) throw StorageError(dir_ + ": store is open read-only");
  check_unit_id(unit_id);
  const UnitResult u = read_unit_header(staged);  // stage() fsynced it; the header check catches a wrong or truncated file
  if (u.unit_id != unit_id) throw StorageError(staged + ": holds unit " + u.unit_id + ", not " + unit_id);
  const std::string final_path = dir_ + "/units/" + unit_id + ".h5";
  if (std::rename(staged.c_str(), final_path.c_str()) != 0) throw_write_error(final_path + ": rename failed", errno);
  fsync_path(dir_ + "/units", true);
  journal({.event = "committed", .unit = unit_id, .rank = rank, .duration = duration_seconds, .tokens = tokens});
  remove_unit_checkpoints(unit_id);
}

void Store::journal(const JournalEvent& event) {
  // Unit files decide what is committed; the journal is the audit trail. A commit has already
  // fsynced the file and the directory, so its journal line need not add a third flush.
  const bool durable = event.event == "failed" || event.event == "interrupted";
  if (journal_) journal_->append(event, durable);
  else append_journal(dir_ + "/journal.jsonl", event, durable);
}

std::string Store::unit_log_path(const std::string& unit_id) const {
  check_unit_id(unit_id);
  return dir_ + "/logs/" + unit_id + ".log";
}

void Store::append_unit_log(const std::string& unit_id, const std::string& line) {
  if (!writable()) throw StorageError(dir_ + ": store is open read-only");
  const std::string path = unit_log_path(unit_id);
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
  const std::string text = std::string(stamp) + " " + line + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw_write_error(path + ": cannot open the unit log", errno);
  const int err = write_all(fd, text);
  ::close(fd);
  if (err != 0) throw_write_error(path + ": unit log write failed", err);
}

std::vector<JournalEvent> Store::journal_events() const { return read_journal(dir_ + "/journal.jsonl"); }

std::vector<std::string> Store::committed_units() const {
  std::vector<std::string> ids;
  DIR* d = ::opendir((dir_ + "/units").c_str());
  if (d == nullptr) return ids;
  while (const dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n.empty() || n[0] == '.' || n.size() <= 3 || n.compare(n.size() - 3, 3, ".h5") != 0) continue;
    ids.push_back(n.substr(0, n.size() - 3));
  }
  ::closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool Store::is_committed(const std::string& unit_id) const {
  return is_regular_file(dir_ + "/units/" + unit_id + ".h5");
}

UnitResult Store::read_unit(const std::string& unit_id) const {
  check_unit_id(unit_id, dir_ + "/units/" + unit_id + ".h5");
  return read_unit_file(dir_ + "/units/" + unit_id + ".h5");
}

std::string Store::read_unit_params(const std::string& unit_id) const {
  check_unit_id(unit_id, dir_ + "/units/" + unit_id + ".h5");
  return read_unit_params_file(dir_ + "/units/" + unit_id + ".h5");
}

std::map<std::string, Table> Store::read_tables() const {
  std::map<std::string, Table> out;
  for (const auto& schema : table_schemas()) {
    Table t = schema;
    t.columns.push_back({"unit", ColumnType::kString});
    out.emplace(schema.name, std::move(t));
  }
  for (const auto& id : committed_units()) {
    const UnitResult u = read_unit(id);
    for (const auto& t : u.tables) {
      Table& dest = out.at(t.name);
      for (auto row : t.rows) {
        row.emplace_back(id);
        dest.rows.push_back(std::move(row));
      }
    }
  }
  return out;
}

Table Store::read_table(const std::string& name) const {
  empty_table(name);  // an unknown name fails with the list of known tables
  return read_tables().at(name);
}

std::size_t Store::rebuild_consolidated(bool force) {
  if (!writable() && !force) throw StorageError(dir_ + ": rebuilding the consolidated file needs the store's lock");
  // Writers sharing the store (split jobs) rebuild in turn, each reading the units inside the
  // lock, so that a slower rebuild never replaces a newer one with fewer units.
  const std::string lock_path = dir_ + "/store.h5.lock";
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) throw StorageError(lock_path + ": cannot open: " + std::strerror(errno));
  struct Unlock {
    int fd;
    ~Unlock() { ::flock(fd, LOCK_UN), ::close(fd); }
  } unlock{lock_fd};
  while (::flock(lock_fd, LOCK_EX) != 0)
    if (errno != EINTR) throw StorageError(lock_path + ": cannot lock: " + std::strerror(errno));
  const auto ids = committed_units();
  const std::map<std::string, Table> tables = read_tables();
  atomic_replace(consolidated_path(), [&](const std::string& tmp) {
    silence_hdf5_errors();
    H5Id file = H5_FILE(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    write_int_attribute(file, "schema_version", kStoreSchemaVersion);
    write_int_attribute(file, "units", static_cast<long long>(ids.size()));
    write_string_attribute(file, "format", "linsweep-store");
    H5Id group = H5_GROUP(H5Gcreate2(file, "tables", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    for (const auto& [name, t] : tables) write_table(group, t);
    group.reset();
    file.close("H5Fclose(store.h5)");
  });
  return ids.size();
}

Table read_consolidated_table(const std::string& path, const std::string& name) {
  silence_hdf5_errors();
  Table schema = empty_table(name);
  schema.columns.push_back({"unit", ColumnType::kString});
  try {
    if (!is_regular_file(path)) throw StorageError("missing; run `linsweep rebuild STORE`");
    H5Id file;
    try {
      file = open_hdf5_read(path);
    } catch (const StorageError& e) {
      throw StorageError(std::string(e.what()) + "; run `linsweep rebuild STORE`");
    }
    const long long v = read_int_attribute(file, "schema_version");
    if (v > kStoreSchemaVersion)
      throw StorageError("schema version " + std::to_string(v) + " is newer than this build's " +
                         std::to_string(kStoreSchemaVersion));
    H5Id group = H5_GROUP(H5Gopen2(file, "tables", H5P_DEFAULT));
    return read_table(group, schema);
  } catch (const Error& e) {
    throw StorageError(path + ": " + e.what(), ExitCode::kBadInput);
  }
}

}  // namespace linsweep
