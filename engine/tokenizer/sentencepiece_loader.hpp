// Finds and loads linsweep's SentencePiece module (sentencepiece_abi.hpp says why it is one).
#pragma once

#include "engine/tokenizer/sentencepiece_abi.hpp"

namespace linsweep {

// The module's entry points. Loaded once per process, into a link namespace of its own
// (dlmopen), so that the protobuf inside libsentencepiece and the one LibTorch loads never see
// each other; it stays loaded until the process exits.
struct SentencePieceModule {
  LinsweepSpmLoadFn load;
  LinsweepSpmFreeFn free;
  LinsweepSpmCountFn piece_count, bos_id, eos_id;
  LinsweepSpmPieceFn piece;
  LinsweepSpmEncodeFn encode;
};

// liblinsweep_sentencepiece.so, the module the build writes at its top directory, found in the
// running executable's directory or one of its two parents. Thread safe (the first call loads it). Throws Error (exit
// 1: an installation fault, not bad input) naming the paths tried and dlerror()'s message when neither loads or a
// symbol is missing.
const SentencePieceModule& sentencepiece_module();

}  // namespace linsweep
