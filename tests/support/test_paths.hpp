// Where the tests find the checkout, its test data and the built binary.
//
// The paths are compiled into one file (test_paths.cpp), not into every test source: a test
// object then names no checkout, so clones of the tree share compiled test objects (ccache).
// Every path is absolute; linsweep_binary() is empty in builds that have no linsweep binary
// (the fuzz project). Thread-safe: constants.
#pragma once

namespace linsweep::test {

const char* test_data_path();   // tests/data
const char* source_path();      // the checkout's root
const char* linsweep_binary();  // the `linsweep` executable of this build

}  // namespace linsweep::test
