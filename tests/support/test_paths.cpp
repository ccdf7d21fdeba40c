#include "support/test_paths.hpp"

#if !defined(LINSWEEP_TEST_DATA) || !defined(LINSWEEP_SOURCE_DIR)
#error "LINSWEEP_TEST_DATA and LINSWEEP_SOURCE_DIR must name tests/data and the checkout"
#endif
#ifndef LINSWEEP_BINARY
#define LINSWEEP_BINARY ""
#endif

namespace linsweep::test {

const char* test_data_path() { return LINSWEEP_TEST_DATA; }
const char* source_path() { return LINSWEEP_SOURCE_DIR; }
const char* linsweep_binary() { return LINSWEEP_BINARY; }

}  // namespace linsweep::test
