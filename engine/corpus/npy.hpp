// Reader of NumPy .npy token arrays (int32, int64, uint16; little or big endian).
#pragma once

#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"

namespace linsweep {

// Reads a C-order .npy array of integer tokens (any shape, flattened). Validates the magic,
// version (1–3), header length, the header dictionary (descr in <i4 <i8 <u2 and their
// big-endian forms, fortran_order False, shape) and that the data size equals
// prod(shape)·itemsize before allocating. Values must lie in [0, 2^31). Throws InputError
// naming the file on any problem.
std::vector<TokenId> read_npy_tokens(const std::string& path);

// The same checks but the token values, without reading the data (cheap at any size: for
// validating a spec before any work starts); returns the number of tokens. Throws InputError
// naming the file.
std::int64_t check_npy_tokens(const std::string& path);

// Writes a 1-D little-endian int32 .npy (for tests, benchmarks and tools). Throws InputError.
void write_npy_tokens(const std::string& path, const std::vector<TokenId>& tokens);

}  // namespace linsweep
