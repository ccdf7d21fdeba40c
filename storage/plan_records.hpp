// Which unit the sweep planned for each slot, each time it was planned: the record that decides
// which committed units are current (unit_standing.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace linsweep {

// One planning of the store's sweep by `linsweep run`, `resume` or `submit` (not by a job's
// `run --units`, which runs part of a plan already recorded). Stored as STORE/plans/<seq>.json.
struct PlanRecord {
  std::int64_t seq = 0;                      // 1, 2, ...: the order of the plannings
  double time = 0;                           // unix seconds
  std::string command;                       // "run", "resume", "submit"
  std::map<std::string, std::string> slots;  // slot -> the unit id planned for it
  // What was planned from (empty in records written before they were kept): the spec file,
  // the command line's overrides, and the spec's text with them applied.
  std::string spec;
  std::vector<std::string> overrides;
  std::string spec_text;
};

// Writes `record` as the next plan record (its seq: one more than the last) atomically and
// returns the seq. Safe without the store's lock: concurrent appenders get distinct seqs.
// Throws StorageError, DiskFullError.
std::int64_t append_plan_record(const std::string& plans_dir, PlanRecord record);

// slot -> the unit the latest record listing that slot planned for it.
std::map<std::string, std::string> latest_slots(const std::vector<PlanRecord>& records);

// Every plan record, by seq. A missing directory is none. Throws StorageError(kBadInput) naming
// a record that is not one (over 64 MiB, not JSON, or the wrong shape).
std::vector<PlanRecord> read_plan_records(const std::string& plans_dir);

}  // namespace linsweep
