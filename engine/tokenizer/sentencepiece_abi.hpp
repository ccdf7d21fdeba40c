// The C interface of linsweep's SentencePiece module (sentencepiece_module.cpp), which
// sentencepiece_loader.cpp loads into a namespace of its own (docs/models.md, "Tokenizers").
//
// Why a module: Debian's libsentencepiece carries its own copy of protobuf 3.14, exported under
// protobuf's own names, while Debian's LibTorch loads the system protobuf 3.21. In one namespace
// whichever is loaded first takes the other's calls, and the process crashes before main.
// Across this interface only C types pass; the module owns what it allocates and frees it.
#pragma once

#include <cstddef>

extern "C" {

struct LinsweepSpmModel;  // opaque: a loaded sentencepiece::SentencePieceProcessor

// Piece kinds, as bit flags.
inline constexpr int kLinsweepSpmControl = 1;
inline constexpr int kLinsweepSpmByte = 2;
inline constexpr int kLinsweepSpmUnknown = 4;

// Loads a serialized ModelProto. Returns the model, or null with a message in err (at most
// err_cap bytes, NUL-terminated).
using LinsweepSpmLoadFn = LinsweepSpmModel* (*)(const char* bytes, std::size_t size, char* err, std::size_t err_cap);
using LinsweepSpmFreeFn = void (*)(LinsweepSpmModel* model);
// Pieces in the vocabulary; bos_id and eos_id (−1 when the model has none).
using LinsweepSpmCountFn = int (*)(const LinsweepSpmModel* model);
// Piece `id`'s text (valid while the model lives) and its kind flags; 0 on success, −1 when id
// is out of range.
using LinsweepSpmPieceFn = int (*)(const LinsweepSpmModel* model, int id, const char** text, std::size_t* size,
                                   int* flags);
// Encodes UTF-8 text into ids[0..cap); *count receives the number of ids, which may exceed cap
// (then nothing past cap was written and the caller calls again with more room). 0 on success,
// −1 with a message in err. Thread safe for one model.
using LinsweepSpmEncodeFn = int (*)(const LinsweepSpmModel* model, const char* text, std::size_t size, int* ids,
                                    std::size_t cap, std::size_t* count, char* err, std::size_t err_cap);

}  // extern "C"
