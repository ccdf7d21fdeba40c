# SentencePiece (Debian's libsentencepiece-dev) reads tokenizer.model files: PkgConfig::SENTENCEPIECE.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SENTENCEPIECE IMPORTED_TARGET sentencepiece)
if(NOT SENTENCEPIECE_FOUND)
  message(FATAL_ERROR "SentencePiece not found (pkg-config sentencepiece): install Debian's libsentencepiece-dev "
                      "(scripts/setup.sh does)")
endif()
