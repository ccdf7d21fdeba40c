# SentencePiece (Debian's libsentencepiece-dev) reads tokenizer.model files, inside linsweep's
# SentencePiece module only: linsweep::sentencepiece. Found by path (CMAKE_PREFIX_PATH too), so
# that an unpacked bundle of Debian packages serves as well as /usr (scripts/gpu_bundle.sh).
find_path(SENTENCEPIECE_INCLUDE_DIR sentencepiece_processor.h)
find_library(SENTENCEPIECE_LIBRARY NAMES sentencepiece)
if(NOT SENTENCEPIECE_INCLUDE_DIR OR NOT SENTENCEPIECE_LIBRARY)
  message(FATAL_ERROR "SentencePiece not found (sentencepiece_processor.h, libsentencepiece.so): install Debian's "
                      "libsentencepiece-dev (scripts/setup.sh does)")
endif()
if(NOT TARGET linsweep::sentencepiece)
  add_library(linsweep::sentencepiece UNKNOWN IMPORTED)
  set_target_properties(linsweep::sentencepiece PROPERTIES IMPORTED_LOCATION ${SENTENCEPIECE_LIBRARY}
                                                           INTERFACE_INCLUDE_DIRECTORIES ${SENTENCEPIECE_INCLUDE_DIR})
endif()

# linsweep's SentencePiece module (engine/tokenizer/sentencepiece_abi.hpp says why it is a
# module): liblinsweep_sentencepiece.so at the top of the build directory, where
# sentencepiece_loader.cpp looks for it. Never sanitized: it runs in a link namespace of its own,
# where a second sanitizer runtime could not start.
function(linsweep_sentencepiece_module source_dir)
  add_library(linsweep_sentencepiece MODULE ${source_dir}/engine/tokenizer/sentencepiece_module.cpp)
  target_include_directories(linsweep_sentencepiece PRIVATE ${source_dir})
  target_link_libraries(linsweep_sentencepiece PRIVATE linsweep::sentencepiece)
  target_compile_options(linsweep_sentencepiece PRIVATE -fno-sanitize=all)
  target_link_options(linsweep_sentencepiece PRIVATE -fno-sanitize=all)
  set_target_properties(linsweep_sentencepiece PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
                                                          CXX_VISIBILITY_PRESET hidden)
endfunction()
