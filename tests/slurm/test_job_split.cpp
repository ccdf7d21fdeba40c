// Splitting pending units into Slurm jobs: whole, per model, by dependency depth into job
// arrays; and the job records that remember array tasks.
#include <filesystem>
#include <random>

#include "common/errors.hpp"
#include "slurm/job_record.hpp"
#include "slurm/job_split.hpp"
#include "support/catch.hpp"

using namespace linsweep;

namespace {

// The plan of a sweep over models × corpora with fit and all_linear: per (model, corpus) a
// chain stats -> fit -> all_linear, in plan order.
std::vector<SplitUnit> chains(int models, int corpora) {
  std::vector<SplitUnit> out;
  for (int m = 0; m < models; ++m)
    for (int c = 0; c < corpora; ++c) {
      const std::string slot = "m" + std::to_string(m) + "c" + std::to_string(c);
      out.push_back({"stats-" + slot, "m" + std::to_string(m), {}});
      out.push_back({"fit-" + slot, "m" + std::to_string(m), {"stats-" + slot}});
      out.push_back({"all_linear-" + slot, "m" + std::to_string(m), {"fit-" + slot}});
    }
  return out;
}

std::vector<std::vector<std::string>> ids(const std::vector<SplitUnit>& units, const SplitJob& job) {
  std::vector<std::vector<std::string>> out;
  for (const auto& task : job.tasks) {
    out.emplace_back();
    for (std::size_t u : task) out.back().push_back(units[u].id);
  }
  return out;
}

}  // namespace

TEST_CASE("split units:K: one job array per dependency depth, each depth after the one before", "[slurm]") {
  const auto units = chains(2, 2);
  const auto jobs = split_units(units, "units:3");
  REQUIRE(jobs.size() == 3);  // stats, fit, all_linear
  CHECK(jobs[0].array);
  CHECK(ids(units, jobs[0]) ==
        std::vector<std::vector<std::string>>{{"stats-m0c0", "stats-m0c1", "stats-m1c0"}, {"stats-m1c1"}});
  CHECK(jobs[0].after.empty());
  CHECK(ids(units, jobs[1]) ==
        std::vector<std::vector<std::string>>{{"fit-m0c0", "fit-m0c1", "fit-m1c0"}, {"fit-m1c1"}});
  CHECK(jobs[1].after == std::set<std::size_t>{0});
  CHECK(jobs[2].after == std::set<std::size_t>{1});
  SECTION("a depth that fits one job is a plain job") {
    const auto whole = split_units(units, "units:4");
    REQUIRE(whole.size() == 3);
    for (const auto& j : whole) CHECK_FALSE(j.array);
    CHECK(whole[2].after == std::set<std::size_t>{1});
  }
  SECTION("units whose dependencies are committed (not among the pending) are depth 0") {
    std::vector<SplitUnit> rest;
    for (const auto& u : units)
      if (u.id.rfind("all_linear", 0) == 0) rest.push_back(u);
    const auto one = split_units(rest, "units:1");
    REQUIRE(one.size() == 1);
    CHECK(one[0].array);
    CHECK(one[0].tasks.size() == 4);
    CHECK(one[0].after.empty());
  }
  SECTION("a unit deeper in one chain than in another waits for every depth before it") {
    std::vector<SplitUnit> mixed = {{"a", "m", {}}, {"b", "m", {"a"}}, {"c", "m", {}}, {"d", "m", {"b", "c"}}};
    const auto j = split_units(mixed, "units:1");
    REQUIRE(j.size() == 3);
    CHECK(ids(mixed, j[0]) == std::vector<std::vector<std::string>>{{"a"}, {"c"}});
    CHECK(ids(mixed, j[1]) == std::vector<std::vector<std::string>>{{"b"}});
    CHECK(ids(mixed, j[2]) == std::vector<std::vector<std::string>>{{"d"}});
    CHECK(j[2].after == std::set<std::size_t>{0, 1});
  }
}

TEST_CASE("split none and model: plain jobs, never arrays", "[slurm]") {
  const auto units = chains(2, 1);
  const auto none = split_units(units, "none");
  REQUIRE(none.size() == 1);
  CHECK(none[0].tasks.size() == 1);
  CHECK(none[0].tasks[0].size() == units.size());
  const auto model = split_units(units, "model");
  REQUIRE(model.size() == 2);
  CHECK_FALSE(model[0].array);
  CHECK(ids(units, model[1]) == std::vector<std::vector<std::string>>{{"stats-m1c0", "fit-m1c0", "all_linear-m1c0"}});
  CHECK(model[1].after.empty());
}

TEST_CASE("bad_: split modes other than none, model and units:K are refused naming --split", "[slurm]") {
  for (const char* bad : {"bogus", "units:", "units:0", "units:-2", "units:2x", "units:abc"})
    CHECK_THROWS_WITH(split_units(chains(1, 1), bad),
                      Catch::Matchers::StartsWith("--split: '" + std::string(bad) + "'"));
}

TEST_CASE("job records keep array tasks; scheduled_jobs names each task <id>_<task>", "[slurm]") {
  std::random_device rd;
  const std::string dir = std::filesystem::temp_directory_path() / ("linsweep-records-" + std::to_string(rd()));
  append_job_record(dir, {"41", "ls-a-0", "/s/ls-a-0.sh", "", {}, {}, 1.0, {}});
  append_job_record(
      dir,
      {"42", "ls-a-1", "/s/ls-a-1.sh", "/s/ls-a-1.", {"u1", "u2", "u3"}, {"afterok:41"}, 2.0, {{"u1", "u2"}, {"u3"}}});
  const auto records = read_job_records(dir);
  REQUIRE(records.size() == 2);
  CHECK(records[1].tasks == std::vector<std::vector<std::string>>{{"u1", "u2"}, {"u3"}});
  const auto jobs = scheduled_jobs(records);
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].id == "41");
  CHECK(jobs[0].units.empty());  // every pending unit
  CHECK(jobs[1].id == "42_0");
  CHECK(jobs[1].units == std::vector<std::string>{"u1", "u2"});
  CHECK(jobs[2].id == "42_1");
  CHECK(jobs[2].record->job_id == "42");
  std::filesystem::remove_all(dir);
}
