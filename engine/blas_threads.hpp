// OpenBLAS's own thread count, set for a scope.
#pragma once

namespace linsweep {

// While alive, OpenBLAS (when it provides the BLAS; found by symbol) runs each call on
// `threads` threads; the count it had is restored on destruction. Work split over torch's
// OpenMP pool sets 1, so that each part is one single-threaded BLAS call and OpenBLAS's
// pthreads do not contend with OpenMP's for the cores. With another BLAS it does nothing
// (active() false). The count is process-wide: one thread drives the model at a time.
class BlasThreadsScope {
 public:
  explicit BlasThreadsScope(int threads);
  ~BlasThreadsScope();
  BlasThreadsScope(const BlasThreadsScope&) = delete;
  BlasThreadsScope& operator=(const BlasThreadsScope&) = delete;

  // Whether OpenBLAS was found and set.
  bool active() const noexcept { return previous_ > 0; }

 private:
  int previous_ = 0;
};

// Whether the BLAS is OpenBLAS, whose thread count BlasThreadsScope can set.
bool blas_threads_settable();

// OpenBLAS's thread count now; 0 with another BLAS.
int blas_threads();

// Sets OpenBLAS's thread count for good (configure_threads); returns false, setting nothing,
// with another BLAS or a count below 1.
bool set_blas_threads(int threads);

}  // namespace linsweep
