// OpenBLAS's thread count through its exported functions, looked up once.
#include "engine/blas_threads.hpp"

#include <dlfcn.h>

namespace linsweep {
namespace {

struct OpenBlasThreads {
  using Set = void (*)(int);
  using Get = int (*)();
  Set set = reinterpret_cast<Set>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  Get get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  bool found() const noexcept { return set != nullptr && get != nullptr; }
};

const OpenBlasThreads& openblas() {
  static const OpenBlasThreads functions;
  return functions;
}

}  // namespace

bool blas_threads_settable() { return openblas().found(); }

int blas_threads() { return openblas().found() ? openblas().get() : 0; }

bool set_blas_threads(int threads) {
  const auto& o = openblas();
  if (!o.found() || threads < 1) return false;
  if (o.get() != threads) o.set(threads);
  return true;
}

BlasThreadsScope::BlasThreadsScope(int threads) {
  const int previous = blas_threads();
  if (set_blas_threads(threads)) previous_ = previous;
}

BlasThreadsScope::~BlasThreadsScope() {
  if (active()) set_blas_threads(previous_);
}

}  // namespace linsweep
