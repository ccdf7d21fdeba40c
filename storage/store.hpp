// A result store directory: atomic unit commits, journal, frozen spec, lock, consolidated file.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "storage/journal.hpp"
#include "storage/plan_records.hpp"
#include "storage/store_layout.hpp"
#include "storage/store_lock.hpp"
#include "storage/table.hpp"
#include "storage/unit_file.hpp"

namespace linsweep {

// Its layout is StoreLayout's (docs/store.md).
//
// Readers never take the lock and see only committed units (whole files that were renamed
// into units/). A writer holds the lock for its lifetime. Not thread safe: one thread per
// Store object.
class Store {
 public:
  // Opens an existing store for reading. Throws StorageError(kBadInput) when `dir` is not a
  // store or was written by a newer schema version.
  static Store open_read(const std::string& dir);
  // Opens (creating if needed) a store for writing and takes its lock. `spec_text` is
  // frozen into spec.yaml when the store is created; an existing spec.yaml is kept.
  // `shared`: the lock is taken shared (StoreLock), for one of several jobs that each run a
  // disjoint set of units; such a writer leaves other writers' temporary files alone.
  static Store open_write(const std::string& dir, const std::string& spec_text = "", bool shared = false);

  const std::string& dir() const noexcept { return dir_; }
  bool writable() const noexcept { return lock_ != nullptr; }
  // When open_write took over a lock left by a dead process: its record.
  std::optional<std::string> recovered_stale_lock() const;

  // What an exclusive open_write found when it compared the journal with units/: the unit
  // files that had no "committed" line (a writer killed between the rename and its journal
  // line; each now has one, marked "recovered"), and the committed lines whose unit file is
  // gone (reported only: the unit is pending again and reruns). Empty for readers and for
  // shared writers, whose peers may be between a rename and its line right now.
  struct Reconciliation {
    std::vector<std::string> recovered;
    std::vector<std::string> missing;
  };
  const Reconciliation& reconciliation() const noexcept { return reconciliation_; }

  // Commits atomically: the unit's arrays file (when it has arrays) and then its unit file are
  // each written to a temporary file, fsynced and renamed into units/ (unit_file.hpp), and the
  // directory fsynced; then a "committed" journal event is appended. The unit file's rename
  // is the commit.
  // A crash at any point leaves either no unit or the whole unit. Re-committing an id
  // replaces it. Throws StorageError; requires a writable store.
  void commit(const UnitResult& unit, double duration_seconds = 0, int rank = 0, std::int64_t tokens = 0);
  // Deletes STORE/checkpoints/<id>/ (a training unit's checkpoints); done by both commits
  // once the unit is durable. Missing is fine.
  void remove_unit_checkpoints(const std::string& unit_id);
  // Commits a unit file another process wrote and fsynced at `staged` (Store::stage): checks
  // its header (not truncated, the right unit id), renames it to units/<id>.h5, fsyncs the
  // directory and journals "committed" with the `host` and `rank` that ran it (empty host:
  // this one's). Throws StorageError when the file is not that unit.
  void commit_staged(const std::string& staged, const std::string& unit_id, double duration_seconds, int rank,
                     std::int64_t tokens = 0, const std::string& host = "");
  // Where a worker writes a unit for commit_staged (inside units/, ignored until renamed).
  std::string staging_path(const std::string& unit_id, int rank) const;
  // Writes `unit` to staging_path(unit.unit_id, rank) and fsyncs it; returns that path. Works
  // on a read-only handle (a worker's): nothing becomes visible until commit_staged.
  std::string stage(const UnitResult& unit, int rank) const;
  void journal(const JournalEvent& event);
  // Appends "<UTC time> <line>" to logs/<id>.log (not fsynced: a diagnostic). Writer only.
  void append_unit_log(const std::string& unit_id, const std::string& line);
  std::string unit_log_path(const std::string& unit_id) const;
  std::vector<JournalEvent> journal_events() const;

  // Ids of committed units, sorted.
  std::vector<std::string> committed_units() const;
  bool is_committed(const std::string& unit_id) const;
  UnitResult read_unit(const std::string& unit_id) const;
  // Only the unit's `params` attribute (its provenance), without reading tables or arrays.
  std::string read_unit_params(const std::string& unit_id) const;

  // Records a planning of the sweep (plan_records.hpp): `record.slots` maps each planned slot
  // to its unit id; from now on those units are the slots' current ones (unit_standing.hpp).
  // Its seq and (when 0) time are filled here. Returns the record's seq. Needs no lock
  // (`submit` records beside a running job). Throws StorageError, DiskFullError.
  std::int64_t record_plan(PlanRecord record);

  // The rows of every known table from the committed units (each unit file read once; arrays
  // files never), each with a trailing `unit` string column, in unit-id order, plus the `units`
  // table (units_table.hpp). kCurrent: the current unit of each slot only; kAll: every
  // committed unit, each table with two more columns, `current` (1 or 0) and `planned_by`.
  // When a unit has a sweep's setting, every table then gains the setting columns
  // (setting_columns.hpp). Throws StorageError(kBadInput) naming the file of a corrupted unit.
  enum class Scope { kCurrent, kAll };
  std::map<std::string, Table> read_tables(Scope scope = Scope::kCurrent) const;
  // read_tables() of one table; StorageError(kBadInput) listing the known ones for another name.
  Table read_table(const std::string& name, Scope scope = Scope::kCurrent) const;

  // Rebuilds STORE/store.h5 from the unit files (temporary file, fsync, rename, fsync dir)
  // and returns the number of units in it. Requires a writable store, or `force` for a
  // reader that knows no writer runs (`linsweep rebuild`).
  std::size_t rebuild_consolidated(bool force = false);
  std::string consolidated_path() const { return layout_.consolidated(); }
  std::string spec_path() const { return layout_.frozen_spec(); }
  const StoreLayout& layout() const noexcept { return layout_; }

 private:
  explicit Store(std::string dir) : dir_(std::move(dir)), layout_(dir_) {}
  void check_marker() const;
  void reconcile_journal();
  void remove_orphan_arrays();

  std::string dir_;
  StoreLayout layout_;
  std::unique_ptr<StoreLock> lock_;
  std::unique_ptr<JournalWriter> journal_;  // the writer's open journal
  Reconciliation reconciliation_;
};

// Reads the consolidated file's table `name` (with its `unit` column, and the setting columns
// the file holds for a sweep's settings). Throws
// StorageError(kBadInput) when the file is missing, corrupted or from a newer schema.
Table read_consolidated_table(const std::string& path, const std::string& name);

// Refuses (StorageError, exit 2) a store directory whose own entries (units/, logs/, slurm/,
// journal.jsonl, lock, ..., and the per-unit directories below activations/, checkpoints/ and
// models/) are symbolic links: writes through them would land outside the store. The store
// directory itself may be a link. open_write calls it before taking the lock; `submit`, and
// `tables`/`plot` writing their default STORE/report and STORE/figures, call it too.
void require_store_confined(const std::string& dir);

// Creates an output directory (`tables --out`, `plot --out`) and its parents. Throws
// StorageError, with kBadInput when the path or a parent exists and is not a directory.
void make_output_dir(const std::string& dir);

}  // namespace linsweep
