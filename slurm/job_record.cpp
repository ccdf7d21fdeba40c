// Submitted-job records of a store.
#include "slurm/job_record.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "common/json_lines.hpp"

namespace linsweep {
namespace {

// A record lists its job's unit ids: 64 MiB holds over a million of them.
constexpr std::size_t kMaxRecordBytes = 64u << 20;

// The fields of a record; its lists keep only their strings.
JobRecord job_record(const nlohmann::json& j) {
  JobRecord r;
  r.job_id = j["job_id"].get<std::string>();
  r.name = j.value("name", "");
  r.script = j.value("script", "");
  r.units_file = j.value("units_file", "");
  if (j.contains("units") && j["units"].is_array())
    for (const auto& u : j["units"])
      if (u.is_string()) r.units.push_back(u.get<std::string>());
  if (j.contains("after") && j["after"].is_array())
    for (const auto& a : j["after"])
      if (a.is_string()) r.after.push_back(a.get<std::string>());
  r.time = j.value("time", 0.0);
  if (j.contains("tasks") && j["tasks"].is_array())
    for (const auto& t : j["tasks"]) {
      r.tasks.emplace_back();
      if (t.is_array())
        for (const auto& u : t)
          if (u.is_string()) r.tasks.back().push_back(u.get<std::string>());
    }
  return r;
}

}  // namespace

void append_job_record(const std::string& store_dir, const JobRecord& r) {
  const std::string dir = store_dir + "/slurm";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw SlurmError(dir + ": cannot create: " + ec.message());
  nlohmann::json j = {{"job_id", r.job_id}, {"name", r.name},   {"script", r.script}, {"units_file", r.units_file},
                      {"units", r.units},   {"after", r.after}, {"time", r.time}};
  if (!r.tasks.empty()) j["tasks"] = r.tasks;
  const std::string line = j.dump() + "\n";
  const std::string path = dir + "/jobs.jsonl";
  const int fd = open_for_append(path);
  if (fd < 0) throw SlurmError(path + ": cannot open: " + std::strerror(errno));
  const int err = append_line(fd, line, /*durable=*/true);
  ::close(fd);
  if (err != 0) throw SlurmError(path + ": write failed: " + std::strerror(err));
}

std::vector<ScheduledJob> scheduled_jobs(const std::vector<JobRecord>& records) {
  std::vector<ScheduledJob> out;
  for (const auto& r : records) {
    if (r.tasks.empty()) {
      out.push_back({r.job_id, &r, r.units});
      continue;
    }
    for (std::size_t t = 0; t < r.tasks.size(); ++t)
      out.push_back({r.job_id + "_" + std::to_string(t), &r, r.tasks[t]});
  }
  return out;
}

std::vector<JobRecord> read_job_records(const std::string& store_dir) {
  std::vector<JobRecord> out;
  const std::string path = store_dir + "/slurm/jobs.jsonl";
  // A complete record without its '\n' still names a job that was submitted.
  const std::size_t too_long =
      read_json_lines(path, {.max_line_bytes = kMaxRecordBytes, .key = "job_id", .read_unterminated = true},
                      [&](const nlohmann::json& j, std::size_t) { out.push_back(job_record(j)); });
  if (too_long != 0)
    throw SlurmError(
        path + ":" + std::to_string(too_long) + ": line longer than " + std::to_string(kMaxRecordBytes) + " bytes",
        ExitCode::kBadInput);
  return out;
}

}  // namespace linsweep
