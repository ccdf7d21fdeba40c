// linsweep's own version (build_info.hpp), apart from the libraries' versions so that the
// torch-free store commands' executable can name it.
#include "linsweep_version.hpp"
#include "orchestrator/build_info.hpp"

namespace linsweep {

std::string linsweep_version() { return LINSWEEP_VERSION; }

}  // namespace linsweep
