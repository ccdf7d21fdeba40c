// One committed unit's results in its own HDF5 file: table rows, arrays, provenance.
#pragma once

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

struct UnitResult {
  std::string unit_id;  // content id (DESIGN §5); also the file name
  std::string kind;     // experiment name, e.g. "fit", "all_linear"
  std::string params;   // canonical JSON of the unit's parameters
  std::vector<Table> tables;                // rows for known tables (schema of table_schemas())
  std::map<std::string, ArrayData> arrays;  // '/'-separated names become groups under /arrays
};

// Writes `unit` to `path` (not atomically: Store::commit adds the temporary file, fsync and
// rename). Layout: attributes schema_version, unit_id, kind, params; /tables/<name>
// compound datasets; /arrays/<name> float64 datasets. Throws StorageError.
void write_unit_file(const std::string& path, const UnitResult& unit);

// Reads a unit file back. First checks its seal (unit_seal.hpp) over every byte, so libhdf5
// never parses a damaged file. Throws StorageError(kBadInput) naming `path` when the seal is
// missing or does not match (truncated, corrupted, not a unit file), a required attribute is
// missing, or it was written by a newer schema version than this build knows.
UnitResult read_unit_file(const std::string& path);

// The attributes that identify a unit file (unit_id, kind, params; no tables or arrays), after
// the same seal and schema checks. Throws like read_unit_file. Parses only the root attributes,
// but the seal check still reads the whole file once. Used to validate a staged unit before
// it is committed.
UnitResult read_unit_header(const std::string& path);

// Only the `params` attribute of a unit file (after the same seal and schema checks); for
// planning, which must not parse every unit's arrays (it still reads each file once for the
// seal). Throws like read_unit_file.
std::string read_unit_params_file(const std::string& path);

}  // namespace linsweep
