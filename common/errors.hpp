// Typed exceptions thrown at library boundaries and mapped to process exit codes in main.
#pragma once

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace linsweep {

// Exit codes of every `linsweep` command (docs/cli.md, "Exit codes").
enum class ExitCode : int {
  kDone = 0,         // everything requested finished
  kUnitsFailed = 1,  // ran, but some work failed (or an internal/runtime failure)
  kBadInput = 2,     // bad usage or bad input: nothing was changed
  kInterrupted = 3,  // stopped by a signal; resumable
};

// Base of all project errors. `what()` is one line meant for the user: it names the
// file (or argument) and the problem. Thread safety: immutable after construction.
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, ExitCode code) : std::runtime_error(message), code_(code) {}
  ExitCode exit_code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

// An error of one kind: `Kind` tells the kinds apart for catch clauses, `kDefault` is the
// exit code it maps to unless the thrower says otherwise.
template <class Kind, ExitCode kDefault>
class KindOfError : public Error {
 public:
  explicit KindOfError(const std::string& m, ExitCode c = kDefault) : Error(m, c) {}
};

// Invalid command line or an input file that cannot be used (corpus, tokenizer, text).
using InputError = KindOfError<struct InputErrorKind, ExitCode::kBadInput>;

// A unit stopped on request (SIGUSR1/SIGTERM before a time limit or preemption) after saving
// what it needs to resume: not a failure, the run exits 3.
using InterruptedError = KindOfError<struct InterruptedErrorKind, ExitCode::kInterrupted>;

// Invalid sweep spec (file, line and field in the message).
using SpecError = KindOfError<struct SpecErrorKind, ExitCode::kBadInput>;

// A model directory that cannot be loaded: config, weights, shapes, architecture.
using ModelError = KindOfError<struct ModelErrorKind, ExitCode::kBadInput>;

// Store problems. Defaults to a runtime failure; a malformed store file given by the
// user is bad input and is thrown with ExitCode::kBadInput.
using StorageError = KindOfError<struct StorageErrorKind, ExitCode::kUnitsFailed>;

// The file system holding the store has no space left (ENOSPC, or EDQUOT for a quota) while
// writing. Not a unit failure: retrying cannot help, so a run stops dispatching, keeps what is
// committed and exits 1 with this message; a resume continues once space is freed.
class DiskFullError : public StorageError {
 public:
  explicit DiskFullError(const std::string& m) : StorageError(m) {}
};

// True for the errno values that mean no space is left for a write: ENOSPC, and EDQUOT (quota).
inline bool is_disk_full_errno(int e) noexcept { return e == ENOSPC || e == EDQUOT; }

// Throws "<what>: <strerror(e)>" as DiskFullError when `e` says the disk is full, else as
// StorageError (a runtime failure).
[[noreturn]] inline void throw_write_error(const std::string& what, int e) {
  const std::string m = what + ": " + std::strerror(e);
  if (is_disk_full_errno(e)) throw DiskFullError(m);
  throw StorageError(m);
}

// Scheduler interaction failed (sbatch, squeue, scontrol, sacct).
using SlurmError = KindOfError<struct SlurmErrorKind, ExitCode::kUnitsFailed>;

// A collective (MPI, NCCL, CUDA) failed; ranks agree on failure before throwing.
using CommError = KindOfError<struct CommErrorKind, ExitCode::kUnitsFailed>;

}  // namespace linsweep
