// Tables as HDF5 compound datasets that h5py reads without project code.
#pragma once

#include <hdf5.h>

#include <string>
#include <vector>

#include "storage/table.hpp"

namespace linsweep {

// Writes `table` as the 1-D compound dataset `group/<table.name>`: int columns as int64,
// float columns as float64, string columns as fixed-length UTF-8 (null-padded, as long as
// the longest value). Throws StorageError.
void write_table(hid_t group, const Table& table);

// Reads `group/<name>` with the columns of `schema`; every schema column must be present
// with a compatible class. At most kMaxRows rows and string widths of at most 64 KiB are
// accepted before allocating. Throws StorageError(kBadInput) on a malformed dataset.
Table read_table(hid_t group, const Table& schema);

// The schema a stored table `group/<name>` declares: its compound members in file order, int
// members as kInt, float members as kFloat, fixed strings as kString (all required). Throws
// StorageError(kBadInput) on a malformed dataset.
Table stored_schema(hid_t group, const std::string& name);

// Reads `group/<name>` with the registered schema of `name` when this build has one (columns it
// lacks read as missing_value()), else with stored_schema(). Throws like read_table.
Table read_any_table(hid_t group, const std::string& name);

// Names of the links in `group`, in name order (at most 4096). Throws StorageError(kBadInput).
std::vector<std::string> link_names(hid_t group);

inline constexpr hsize_t kMaxTableRows = hsize_t{1} << 26;

}  // namespace linsweep
