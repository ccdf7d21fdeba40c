# linsweep_fast_linker(): links with lld when the compiler can use it (scripts/setup.sh installs
# it). The programs link LibTorch, MPI, HDF5 and, in the sanitizer and fuzz builds, the
# sanitizers' runtimes, and a warm build is mostly their links, which ccache does not cache; lld
# links them in a fraction of GNU ld's time (measured: bench/linkers.sh, docs/benchmarks.md).
# LINSWEEP_LINKER=bfd (or gold) picks another linker; "" or "default", the compiler's own.
function(linsweep_fast_linker)
  set(LINSWEEP_LINKER "lld" CACHE STRING "Linker for -fuse-ld= (lld, gold, bfd); lld when the compiler accepts it")
  if(LINSWEEP_LINKER STREQUAL "" OR LINSWEEP_LINKER STREQUAL "default")
    return()
  endif()
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=${LINSWEEP_LINKER}" LINSWEEP_LINKER_WORKS_${LINSWEEP_LINKER})
  if(LINSWEEP_LINKER_WORKS_${LINSWEEP_LINKER})
    add_link_options("-fuse-ld=${LINSWEEP_LINKER}")
  else()
    message(STATUS "Linker: -fuse-ld=${LINSWEEP_LINKER} does not work here; the compiler's default links")
  endif()
endfunction()
