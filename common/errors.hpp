// Typed exceptions thrown at library boundaries and mapped to process exit codes in main.
#pragma once

#include <stdexcept>
#include <string>

namespace linsweep {

// Exit codes of every `linsweep` command (DESIGN §8).
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

// Invalid command line or an input file that cannot be used (corpus, tokenizer, text).
class InputError : public Error {
 public:
  explicit InputError(const std::string& m) : Error(m, ExitCode::kBadInput) {}
};

// A unit stopped on request (SIGUSR1/SIGTERM before a time limit or preemption) after saving
// what it needs to resume: not a failure, the run exits 3.
class InterruptedError : public Error {
 public:
  explicit InterruptedError(const std::string& m) : Error(m, ExitCode::kInterrupted) {}
};

// Invalid sweep spec (file, line and field in the message).
class SpecError : public Error {
 public:
  explicit SpecError(const std::string& m) : Error(m, ExitCode::kBadInput) {}
};

// A model directory that cannot be loaded: config, weights, shapes, architecture.
class ModelError : public Error {
 public:
  explicit ModelError(const std::string& m) : Error(m, ExitCode::kBadInput) {}
};

// Store problems. Defaults to a runtime failure; a malformed store file given by the
// user is bad input and is thrown with ExitCode::kBadInput.
class StorageError : public Error {
 public:
  explicit StorageError(const std::string& m, ExitCode c = ExitCode::kUnitsFailed) : Error(m, c) {}
};

// Scheduler interaction failed (sbatch, squeue, scontrol, sacct).
class SlurmError : public Error {
 public:
  explicit SlurmError(const std::string& m, ExitCode c = ExitCode::kUnitsFailed) : Error(m, c) {}
};

// A collective (MPI, NCCL, CUDA) failed; ranks agree on failure before throwing.
class CommError : public Error {
 public:
  explicit CommError(const std::string& m) : Error(m, ExitCode::kUnitsFailed) {}
};

}  // namespace linsweep
