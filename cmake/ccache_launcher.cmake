# linsweep_ccache_launcher(ROOT): compile C and C++ through ccache, when it is installed, so that
# every clone of the tree shares compiled objects with every other one on the machine.
#
# - CCACHE_BASEDIR=ROOT: ccache rewrites paths under the checkout to paths relative to the build
#   directory, so that two clones compile the same command line;
# - CCACHE_NOHASHDIR: the build directory stays out of the hash (debug info then names the first
#   clone's directory, which no test reads);
# - CCACHE_SLOPPINESS: what ccache's manual asks for to cache objects that use a precompiled
#   header (pch_defines, time_macros), and include_file_mtime/ctime because that header is
#   written during the same build, so it is always newer than the compilations that read it;
#   with GCC, -fpch-preprocess lets ccache hash the precompiled header itself.
# The settings travel in the launcher, not the caller's environment: every script that builds
# (build.sh, sanitize.sh, fuzz.sh, a user's own cmake) gets them.
function(linsweep_ccache_launcher root)
  find_program(CCACHE_PROGRAM ccache)
  if(NOT CCACHE_PROGRAM)
    return()
  endif()
  set(launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${root} CCACHE_NOHASHDIR=1
               CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime ${CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${launcher} PARENT_SCOPE)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher} PARENT_SCOPE)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-fpch-preprocess)
  endif()
endfunction()
