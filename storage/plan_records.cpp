// Plan records: one JSON file per planning, written atomically.
#include "storage/plan_records.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/errors.hpp"
#include "common/file_io.hpp"

namespace linsweep {
namespace {

constexpr std::size_t kMaxRecordBytes = 64u << 20;  // ~100 bytes a unit: hundreds of thousands of units

// The seqs of the records in `dir`: files named <digits>.json.
std::vector<std::int64_t> record_seqs(const std::string& dir) {
  std::vector<std::int64_t> seqs;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (n.size() <= 5 || n.compare(n.size() - 5, 5, ".json") != 0) continue;
    const std::string digits = n.substr(0, n.size() - 5);
    if (digits.size() > 15 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    seqs.push_back(std::stoll(digits));
  }
  std::sort(seqs.begin(), seqs.end());
  return seqs;
}

std::string record_path(const std::string& dir, std::int64_t seq) { return dir + "/" + std::to_string(seq) + ".json"; }

PlanRecord parse_record(const std::string& path, std::int64_t seq) {
  nlohmann::json j;
  try {
    j = read_json_file(path, kMaxRecordBytes);
  } catch (const InputError& e) {
    throw StorageError(e.what(), ExitCode::kBadInput);
  }
  auto bad = [&](const std::string& why) {
    return StorageError(path + ": not a plan record: " + why, ExitCode::kBadInput);
  };
  if (!j.is_object() || !j.contains("slots") || !j["slots"].is_object()) throw bad("no \"slots\" object");
  PlanRecord r;
  r.seq = seq;
  if (j.contains("time") && j["time"].is_number()) r.time = j["time"].get<double>();
  if (j.contains("command") && j["command"].is_string()) r.command = j["command"].get<std::string>();
  if (j.contains("spec") && j["spec"].is_string()) r.spec = j["spec"].get<std::string>();
  if (j.contains("spec_text") && j["spec_text"].is_string()) r.spec_text = j["spec_text"].get<std::string>();
  if (j.contains("overrides") && j["overrides"].is_array())
    for (const auto& o : j["overrides"])
      if (o.is_string()) r.overrides.push_back(o.get<std::string>());
  for (const auto& [slot, id] : j["slots"].items()) {
    if (!id.is_string()) throw bad("slot '" + printable(slot) + "' names no unit id");
    r.slots.emplace(slot, id.get<std::string>());
  }
  return r;
}

}  // namespace

std::int64_t append_plan_record(const std::string& plans_dir, PlanRecord record) {
  if (::mkdir(plans_dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw StorageError(plans_dir + ": cannot create directory: " + std::strerror(errno));
  if (record.time == 0)
    record.time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // Written whole under a temporary name, then hard-linked to the first free <seq>.json:
  // link() fails with EEXIST when another writer took that seq, so two plannings racing
  // (submit beside a running job) get distinct seqs and no reader sees half a record.
  const std::string tmp = plans_dir + "/.tmp-plan-" + std::to_string(::getpid()) + ".json";
  const nlohmann::json slots(record.slots);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::vector<std::int64_t> seqs = record_seqs(plans_dir);
    record.seq = seqs.empty() ? 1 : seqs.back() + 1;
    const nlohmann::json j = {{"seq", record.seq},   {"time", record.time},           {"command", record.command},
                              {"spec", record.spec}, {"overrides", record.overrides}, {"spec_text", record.spec_text},
                              {"slots", slots}};
    atomic_write_text(tmp, j.dump() + "\n");
    const std::string path = record_path(plans_dir, record.seq);
    if (::link(tmp.c_str(), path.c_str()) == 0) {
      ::unlink(tmp.c_str());
      sync_directory(plans_dir);
      return record.seq;
    }
    if (errno != EEXIST) {
      const int err = errno;
      ::unlink(tmp.c_str());
      throw_write_error(path + ": cannot create the plan record", err);
    }
  }
  ::unlink(tmp.c_str());
  throw StorageError(plans_dir + ": no free plan record number after 1000 tries");
}

std::map<std::string, std::string> latest_slots(const std::vector<PlanRecord>& records) {
  std::map<std::string, std::string> out;
  for (const auto& r : records)  // by seq: later records overwrite earlier ones
    for (const auto& [slot, id] : r.slots) out[slot] = id;
  return out;
}

std::vector<PlanRecord> read_plan_records(const std::string& plans_dir) {
  std::vector<PlanRecord> out;
  for (const std::int64_t seq : record_seqs(plans_dir)) out.push_back(parse_record(record_path(plans_dir, seq), seq));
  return out;
}

}  // namespace linsweep
