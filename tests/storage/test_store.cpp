// Store directory: atomic commits under SIGKILL, the writer lock, stale locks, consolidation.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "common/errors.hpp"
#include "storage/store.hpp"
#include "support/catch.hpp"
#include "support/test_support.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;
using linsweep::test::ScratchDir;

UnitResult sample_unit(const std::string& id, int seed);  // test_unit_file.cpp

TEST_CASE("good_: committed units are listed, read back and consolidated") {
  ScratchDir dir;
  Store s = Store::open_write(dir / "store", "context: 32\n");
  s.commit(sample_unit("u1", 1), 1.5);
  s.commit(sample_unit("u2", 2));
  CHECK(s.committed_units() == std::vector<std::string>{"u1", "u2"});
  CHECK(s.is_committed("u1"));
  CHECK(!s.is_committed("u3"));
  const Table t = s.read_table("all_linear");
  CHECK(t.rows.size() == 4);
  CHECK(t.columns.back().name == "unit");
  CHECK(std::get<std::string>(t.rows[2].back()) == "u2");
  CHECK(s.rebuild_consolidated() == 2);
  const Table c = read_consolidated_table(s.consolidated_path(), "all_linear");
  CHECK(c.rows == t.rows);
  CHECK(test::read_text(s.spec_path()) == "context: 32\n");
  const auto events = s.journal_events();
  REQUIRE(events.size() == 2);
  CHECK(events[0].event == "committed");
  CHECK(events[0].unit == "u1");
  CHECK(events[0].duration == 1.5);
  // A reader sees the same committed units without taking the lock.
  Store r = Store::open_read(dir / "store");
  CHECK(r.committed_units().size() == 2);
  CHECK_THROWS_AS(r.commit(sample_unit("u3", 3)), StorageError);
  CHECK_THROWS_WITH(Store::open_read(dir / "absent"), ContainsSubstring("not a linsweep store"));
  CHECK_THROWS_WITH(s.commit(sample_unit("../escape", 1)), ContainsSubstring("not a safe file name"));
}

TEST_CASE("bad_: the journal skips torn lines but refuses a well-formed event with a mistyped field") {
  ScratchDir dir;
  Store s = Store::open_write(dir / "store");
  s.commit(sample_unit("u1", 1), 1.5);
  const std::string journal = s.dir() + "/journal.jsonl";
  {
    std::ofstream out(journal, std::ios::app);
    out << "{\"event\": \"comm\n";  // torn, then continued
    out << "{\"event\": \"failed\", \"unit\": \"u2\", \"error\": \"x\"}\n";
    out << "{\"event\": \"fail";  // torn last line
  }
  REQUIRE(s.journal_events().size() == 2);
  { std::ofstream(journal, std::ios::app) << "\n{\"event\": \"failed\", \"unit\": \"u3\", \"rank\": \"zero\"}\n"; }
  try {
    s.journal_events();
    FAIL("a mistyped rank was accepted");
  } catch (const StorageError& e) {
    CHECK(e.exit_code() == ExitCode::kBadInput);
    CHECK_THAT(e.what(), ContainsSubstring("journal.jsonl:5: field 'rank' is not an integer"));
  }
}

TEST_CASE("a failure message that is not UTF-8 is journaled (replaced), not thrown on") {
  ScratchDir dir;
  Store s = Store::open_write(dir / "store");
  s.journal({.event = "failed", .unit = "u4", .error = "bad \xff byte"});
  const auto events = s.journal_events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].error == "bad \xef\xbf\xbd byte");
}

TEST_CASE("a second writer is refused; a lock left by a dead process is recovered") {
  ScratchDir dir;
  {
    Store first = Store::open_write(dir / "store");
    try {
      Store::open_write(dir / "store");
      FAIL("second writer accepted");
    } catch (const StorageError& e) {
      CHECK(e.exit_code() == ExitCode::kBadInput);
      CHECK(std::string(e.what()).find("being written by another sweep (host ") != std::string::npos);
    }
    // Another process is refused too.
    pid_t child = fork();
    if (child == 0) {
      try {
        Store::open_write(dir / "store");
        _exit(0);
      } catch (const StorageError&) {
        _exit(7);
      }
    }
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WEXITSTATUS(status) == 7);
  }
  {
    Store again = Store::open_write(dir / "store");  // released cleanly: not stale
    CHECK(!again.recovered_stale_lock());
  }
  pid_t child = fork();
  if (child == 0) {
    Store dying = Store::open_write(dir / "store");
    raise(SIGKILL);  // dies holding the lock, record left behind
  }
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  Store recovered = Store::open_write(dir / "store");
  REQUIRE(recovered.recovered_stale_lock());
  CHECK(recovered.recovered_stale_lock()->find("pid " + std::to_string(child)) != std::string::npos);
}

TEST_CASE("SIGKILL at random moments never shows a partial unit nor loses a committed one") {
  ScratchDir dir;
  const std::string store_dir = dir / "store";
  { Store::open_write(store_dir); }
  std::mt19937 rng(20261129);
  std::set<std::string> acknowledged;
  const int trials = 200;
  int killed_mid_run = 0;
  for (int trial = 0; trial < trials; ++trial) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t child = fork();
    if (child == 0) {
      close(fds[0]);
      Store s = Store::open_write(store_dir);
      if (write(fds[1], "ready\n", 6) < 0) _exit(3);  // the kill moment counts from here, whatever the load
      for (int k = 0;; ++k) {
        const std::string id = "t" + std::to_string(trial) + "-" + std::to_string(k);
        s.commit(sample_unit(id, k));
        const std::string line = id + "\n";  // acknowledged only after commit returned
        if (write(fds[1], line.data(), line.size()) < 0) _exit(3);
        if (k % 3 == 2) s.rebuild_consolidated();
      }
    }
    close(fds[1]);
    char ready[6];
    REQUIRE(read(fds[0], ready, sizeof ready) == 6);
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, 30000)(rng)));
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    killed_mid_run += WIFSIGNALED(status) ? 1 : 0;
    std::string acks;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) acks.append(buf, static_cast<std::size_t>(n));
    close(fds[0]);
    for (std::size_t p = 0, e; (e = acks.find('\n', p)) != std::string::npos; p = e + 1)
      if (acks.compare(p, e - p, "ready") != 0) acknowledged.insert(acks.substr(p, e - p));
  }
  CHECK(killed_mid_run == trials);
  Store r = Store::open_read(store_dir);
  const auto ids = r.committed_units();
  const std::set<std::string> visible(ids.begin(), ids.end());
  for (const auto& id : acknowledged) CHECK(visible.count(id) == 1);  // nothing committed is lost
  for (const auto& id : ids) CHECK_NOTHROW(r.read_unit(id));          // nothing partial is visible
  if (std::filesystem::exists(r.consolidated_path()))
    CHECK_NOTHROW(read_consolidated_table(r.consolidated_path(), "fits"));
  INFO("acknowledged " << acknowledged.size() << ", visible " << ids.size());
  CHECK(acknowledged.size() > 0);
  // Temporary files of killed writers are cleared by the next writer.
  { Store w = Store::open_write(store_dir); }
  for (const auto& e : std::filesystem::directory_iterator(store_dir + "/units"))
    CHECK(e.path().filename().string().rfind(".tmp-", 0) != 0);
}

TEST_CASE("bad_: a corrupted consolidated file or a newer store is refused; rebuild restores it") {
  ScratchDir dir;
  Store s = Store::open_write(dir / "store");
  s.commit(sample_unit("u1", 1));
  s.rebuild_consolidated();
  test::write_text(s.consolidated_path(), "garbage");
  CHECK_THROWS_WITH(read_consolidated_table(s.consolidated_path(), "fits"), ContainsSubstring("rebuild"));
  s.rebuild_consolidated();
  CHECK(read_consolidated_table(s.consolidated_path(), "fits").rows.size() == 2);
  test::write_text(dir / "store/store.json", R"({"format": "linsweep-store", "schema_version": 99})");
  CHECK_THROWS_WITH(Store::open_read(dir / "store"), ContainsSubstring("newer than this build"));
}

TEST_CASE("readers see only whole committed units while a writer commits") {
  ScratchDir dir;
  const std::string store_dir = dir / "store";
  { Store::open_write(store_dir); }
  pid_t child = fork();
  if (child == 0) {
    Store s = Store::open_write(store_dir);
    for (int k = 0; k < 40; ++k) s.commit(sample_unit("w" + std::to_string(k), k));
    _exit(0);
  }
  Store r = Store::open_read(store_dir);
  std::size_t last = 0, reads = 0;
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    const Table t = r.read_table("all_linear");  // throws on any partial unit
    CHECK(t.rows.size() % 2 == 0);               // two rows per unit, never half a unit
    CHECK(t.rows.size() >= last);
    last = t.rows.size();
    ++reads;
  }
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(r.read_table("all_linear").rows.size() == 80);
  CHECK(reads > 0);
}

TEST_CASE("stage and commit_staged: a worker's file becomes the unit; a wrong or truncated one is refused") {
  ScratchDir dir;
  Store s = Store::open_write(dir / "store");
  const Store worker = Store::open_read(dir / "store");
  const std::string staged = worker.stage(sample_unit("u1", 1), 4);
  CHECK(s.committed_units().empty());  // staged files are not units
  s.commit_staged(staged, "u1", 2.0, 4, 1024, "n2");
  CHECK(s.committed_units() == std::vector<std::string>{"u1"});
  CHECK(s.read_unit("u1").tables[0].rows == sample_unit("u1", 1).tables[0].rows);
  const auto events = s.journal_events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].rank == 4);
  CHECK(events[0].host == "n2");  // the worker's host, not the committing process's
  CHECK(events[0].tokens == 1024);
  SECTION("bad_: a staged file that holds another unit") {
    const std::string other = worker.stage(sample_unit("u2", 2), 5);
    CHECK_THROWS_WITH(s.commit_staged(other, "u3", 0, 5), ContainsSubstring("holds unit u2, not u3"));
    CHECK(!s.is_committed("u3"));
  }
  SECTION("bad_: a truncated staged file") {
    const std::string cut = worker.stage(sample_unit("u2", 2), 5);
    std::filesystem::resize_file(cut, std::filesystem::file_size(cut) / 2);
    CHECK_THROWS_AS(s.commit_staged(cut, "u2", 0, 5), StorageError);
    CHECK(!s.is_committed("u2"));
  }
}

TEST_CASE("unit logs append timestamped lines; readers cannot write them") {
  ScratchDir dir;
  Store s = Store::open_write(dir / "store");
  s.append_unit_log("u1", "attempt 1 started");
  s.append_unit_log("u1", "committed");
  const std::string text = test::read_text(s.unit_log_path("u1"));
  CHECK(text.find("Z attempt 1 started\n") != std::string::npos);
  CHECK(text.find("Z committed\n") != std::string::npos);
  const Store r = Store::open_read(dir / "store");
  CHECK_THROWS_WITH(s.append_unit_log("../x", "y"), ContainsSubstring("not a safe file name"));
}

TEST_CASE("write errors: ENOSPC and EDQUOT are DiskFullError, others StorageError; stage leaves nothing behind") {
  CHECK_THROWS_AS(throw_write_error("x", ENOSPC), DiskFullError);
  CHECK_THROWS_AS(throw_write_error("x", EDQUOT), DiskFullError);
  CHECK_THROWS_WITH(throw_write_error("f", ENOSPC), "f: No space left on device");
  try {
    throw_write_error("f", EACCES);
  } catch (const DiskFullError&) {
    FAIL("EACCES is not a full disk");
  } catch (const StorageError& e) {
    CHECK(e.exit_code() == ExitCode::kUnitsFailed);
  }
  // A stage that fails midway (an array with too few values) removes its partial file.
  ScratchDir dir;
  Store s = Store::open_write(dir / "store");
  UnitResult bad = sample_unit("u1", 1);
  bad.arrays["x"] = ArrayData{{2, 2}, {1, 2, 3}};  // 3 values for 4: write_unit_file throws midway
  CHECK_THROWS_AS(s.stage(bad, 1), StorageError);
  CHECK(!std::filesystem::exists(s.staging_path("u1", 1)));
}

TEST_CASE("bad_: a store whose entries are symbolic links is refused before anything is written") {
  struct Case {
    const char* name;
    const char* entry;  // replaced by a link to a directory or file outside the store
    bool directory;
  };
  const Case cases[] = {
      {"bad_units", "units", true},
      {"bad_logs", "logs", true},
      {"bad_slurm", "slurm", true},
      {"bad_activations", "activations", true},
      {"bad_journal", "journal.jsonl", false},
      {"bad_lock", "lock", false},
      {"bad_run_json", "run.json", false},
      {"bad_store_h5", "store.h5", false},
      {"bad_unit_activations", "activations/u1", true},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    ScratchDir dir;
    const std::string store = dir / "store", outside = dir / "outside";
    {
      Store s = Store::open_write(store);
      s.commit(sample_unit("u1", 1));
      s.rebuild_consolidated();
    }
    std::filesystem::create_directories(store + "/activations/u1");
    std::filesystem::create_directories(outside);
    const std::string target = outside + "/" + std::filesystem::path(c.entry).filename().string();
    if (c.directory)
      std::filesystem::create_directories(target);
    else
      test::write_text(target, "");
    std::filesystem::remove_all(store + "/" + c.entry);
    std::filesystem::create_symlink(target, store + "/" + c.entry);
    try {
      Store::open_write(store);
      FAIL("accepted " << c.name);
    } catch (const StorageError& e) {
      CHECK(e.exit_code() == ExitCode::kBadInput);
      CHECK_THAT(e.what(), ContainsSubstring(std::string("/") + c.entry + ": is a symbolic link (to " + target + ")") &&
                               ContainsSubstring("linsweep writes only inside"));
    }
    // Nothing was written through the link.
    if (c.directory)
      CHECK(std::filesystem::is_empty(target));
    else
      CHECK(test::read_text(target).empty());
  }
  // The store directory itself may be a link (runs/ on a scratch file system).
  ScratchDir dir;
  std::filesystem::create_directories(dir / "real");
  std::filesystem::create_directory_symlink(dir / "real", dir / "link");
  Store s = Store::open_write(dir / "link");
  s.commit(sample_unit("u1", 1));
  CHECK(std::filesystem::exists(dir / "real/units/u1.h5"));
}

TEST_CASE("bad_: a journal line longer than 1 MiB is refused, not read whole") {
  ScratchDir dir;
  {
    Store s = Store::open_write(dir / "store");
    s.commit(sample_unit("u1", 1));
  }
  {
    std::ofstream out(dir / "store/journal.jsonl", std::ios::app);
    out << std::string((1u << 20) + 1, 'x') << "\n";
  }
  CHECK_THROWS_WITH(Store::open_read(dir / "store").journal_events(),
                    ContainsSubstring("journal.jsonl:2: line longer than 1048576 bytes"));
  // Our own lines stay short: an error message is cut at 64 KiB.
  ScratchDir other;
  Store s = Store::open_write(other / "store");
  s.journal({.event = "failed", .unit = "u1", .error = std::string(1u << 20, 'e')});
  const auto events = s.journal_events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].error.size() < (70u << 10));
}
