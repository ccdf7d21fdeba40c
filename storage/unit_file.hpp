// One committed unit's results in its own HDF5 file: table rows, arrays, provenance.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "storage/table.hpp"

namespace linsweep {

// An n-dimensional float64 array (C order), e.g. a surrogate's W or its XcᵀXc.
struct ArrayData {
  std::vector<std::int64_t> shape;
  std::vector<double> values;  // product(shape) values
};

// Who computed a unit, where and when (attributes of its unit file; the store's `units` table).
struct UnitProvenance {
  std::string version;  // linsweep's version (`linsweep --version`)
  std::string host;     // the host of the rank that staged it
  int rank = 0;         // that rank in MPI_COMM_WORLD (0 in one process)
  int group_ranks = 1;  // ranks that computed it together
  // How they summed: "mpi", "nccl", or "none" (one rank, no all-reduce); "" in files written
  // before linsweep recorded it.
  std::string communicator;
  double started = 0;   // unix seconds
  double finished = 0;  // unix seconds
  // The precision its numbers come from: its model's compute dtype, and the dtype of the
  // activation shards it wrote or its inputs were computed from ("" when none); both "" in
  // files written before linsweep recorded them.
  std::string dtype, activation_dtype;
  // Peak memory while it ran, MiB: the resident memory of the rank that staged it, and the
  // device memory torch allocated there (NaN on a CPU, and in files written before).
  double peak_host_mib = std::nan("");
  double peak_device_mib = std::nan("");
};

struct UnitResult {
  std::string unit_id;                      // content id (docs/spec.md, "Units and content ids"); also the file name
  std::string kind;                         // experiment name, e.g. "fit", "all_linear"
  std::string params;                       // canonical JSON of the unit's parameters
  std::vector<Table> tables;                // rows for known tables (schema of table_schemas())
  std::map<std::string, ArrayData> arrays;  // '/'-separated names become groups under /arrays
  UnitProvenance provenance;
};

// What names a unit file, without its tables or arrays.
struct UnitHeader {
  std::string unit_id, kind, params;
  std::int64_t arrays = 0;  // arrays in its arrays file (0: it has none)
  UnitProvenance provenance;
};

// A unit is two files so that reading its tables never touches its arrays: the unit file
// (identity, provenance, /tables/<name> compound datasets) and, when it has arrays, the arrays
// file beside it (/arrays/<name> float64 datasets), "<x>.h5" and "<x>.arrays.h5". Both are
// sealed (unit_seal.hpp). The arrays file is written first and renamed into place first, so a
// unit file never exists without the arrays it names.
std::string unit_arrays_path(const std::string& unit_path);

// Writes `unit` to unit_arrays_path(path) (when it has arrays), then to `path` (not atomically:
// Store::commit and Store::stage add temporary files, fsync and rename). Throws StorageError.
void write_unit_file(const std::string& path, const UnitResult& unit);
// The two halves alone, for callers that place each file themselves.
void write_unit_main_file(const std::string& path, const UnitResult& unit);
void write_unit_arrays_file(const std::string& path, const UnitResult& unit);

// Reads a unit back: its unit file and, when it names arrays, its arrays file. First checks
// each file's seal over every byte, so libhdf5 never parses a damaged file. Throws
// StorageError(kBadInput) naming the file when a seal is missing or does not match (truncated,
// corrupted, not a unit file), the arrays file is missing, a required attribute is missing, or
// it was written by a newer schema version than this build knows. Reads the /arrays group of a
// schema-1 unit file (one file per unit) too.
UnitResult read_unit_file(const std::string& path);

// Identity, provenance and tables of a unit: reads (and seals) the unit file only, never the
// arrays file. Throws like read_unit_file.
UnitResult read_unit_tables(const std::string& path);

// The attributes of a unit file (no tables or arrays), after the same seal and schema checks
// of the unit file alone. Used to validate a staged unit before it is committed, and by
// planning. Throws like read_unit_file.
UnitHeader read_unit_header(const std::string& path);

// Only the `params` attribute of a unit file (its provenance for planning). Throws like
// read_unit_file.
std::string read_unit_params_file(const std::string& path);

}  // namespace linsweep
