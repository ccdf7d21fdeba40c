// What the command line passes to a sweep run (`linsweep run`, `resume`, and their MPI form).
#pragma once

#include <string>
#include <vector>

namespace linsweep {

struct RunOptions {
  std::string store_override;          // --store
  int threads = 0;                     // 0: spec's runtime.threads, then the default
  bool quiet = false;                  // no per-unit lines on stderr
  std::string units_file;              // --units: run only these unit ids (one per line), shared store lock
  std::vector<std::string> overrides;  // key.path=value ... applied to the spec (spec_overrides.hpp)
  std::string command = "run";         // what the plan record names: "run" or "resume"
};

}  // namespace linsweep
