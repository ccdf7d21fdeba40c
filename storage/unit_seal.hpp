// The seal of a unit file: a checksum over its bytes, checked before libhdf5 parses any of them.
#pragma once

#include <cstddef>
#include <string>

namespace linsweep {

// Why: libhdf5 (1.10) is not safe on damaged files. A mutated attribute or datatype message
// makes it read or copy outside its buffers inside H5Aexists, H5Dread and friends (found by
// tests/fuzz/fuzz_unit_file.cpp), before our code can validate anything. So every unit file
// carries, in an HDF5 user block that the library skips, its length and CRC-32 + Adler-32 of
// everything after the block; a reader verifies them first, and a truncated, damaged or foreign
// file is refused without libhdf5 ever seeing it. This guards against damage (partial copies,
// bit rot, a file from elsewhere), not against someone who rewrites both file and seal: a store
// is data you trust, and libhdf5 must not be given crafted files (docs/reliability.md).
//
// Layout of the first kUnitSealBytes bytes (little-endian): "LINSWEEP UNIT v1" (16 bytes),
// uint64 length of the whole file, uint32 CRC-32 then uint32 Adler-32 (zlib's) of the bytes
// from kUnitSealBytes to the end, zeros to kUnitSealBytes.
inline constexpr std::size_t kUnitSealBytes = 512;  // H5Pset_userblock: a power of two >= 512

// Writes the seal of the closed HDF5 file at `path`, which must have been created with a user
// block of kUnitSealBytes. Throws StorageError (DiskFullError when the disk is full, InputError
// when it cannot be mapped) naming `path`.
void write_unit_seal(const std::string& path);

// Checks the seal of the file at `path` against its bytes. Returns normally when they match;
// throws StorageError(kBadInput) saying what is wrong (not a unit file, truncated, damaged)
// otherwise, without the path (the unit-file reader prefixes it). Maps the file (MappedFile)
// and reads every byte once, so its cost grows with the file, not with what the caller reads.
void verify_unit_seal(const std::string& path);

}  // namespace linsweep
