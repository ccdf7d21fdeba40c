// linsweep's SentencePiece module: the one file that sees libsentencepiece, built as a shared
// module and loaded by sentencepiece_loader.cpp (why: sentencepiece_abi.hpp). Nothing here
// throws across the interface.
#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/sentencepiece_abi.hpp"

struct LinsweepSpmModel {
  sentencepiece::SentencePieceProcessor sp;
};

namespace {

void set_error(char* err, std::size_t cap, const std::string& message) {
  if (err == nullptr || cap == 0) return;
  const std::size_t n = std::min(cap - 1, message.size());
  std::memcpy(err, message.data(), n);
  err[n] = '\0';
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) LinsweepSpmModel* linsweep_spm_load(const char* bytes, std::size_t size,
                                                                           char* err, std::size_t err_cap) {
  try {
    auto model = std::make_unique<LinsweepSpmModel>();
    const auto status = model->sp.LoadFromSerializedProto(std::string_view(bytes, size));
    if (!status.ok()) {
      set_error(err, err_cap, status.ToString());
      return nullptr;
    }
    return model.release();
  } catch (const std::exception& e) {
    set_error(err, err_cap, e.what());
    return nullptr;
  }
}

__attribute__((visibility("default"))) void linsweep_spm_free(LinsweepSpmModel* model) { delete model; }

__attribute__((visibility("default"))) int linsweep_spm_piece_count(const LinsweepSpmModel* model) {
  return model->sp.GetPieceSize();
}
__attribute__((visibility("default"))) int linsweep_spm_bos_id(const LinsweepSpmModel* model) {
  return model->sp.bos_id();
}
__attribute__((visibility("default"))) int linsweep_spm_eos_id(const LinsweepSpmModel* model) {
  return model->sp.eos_id();
}

__attribute__((visibility("default"))) int linsweep_spm_piece(const LinsweepSpmModel* model, int id, const char** text,
                                                              std::size_t* size, int* flags) {
  if (id < 0 || id >= model->sp.GetPieceSize()) return -1;
  const std::string& piece = model->sp.IdToPiece(id);
  *text = piece.data();
  *size = piece.size();
  *flags = (model->sp.IsControl(id) ? kLinsweepSpmControl : 0) | (model->sp.IsByte(id) ? kLinsweepSpmByte : 0) |
           (model->sp.IsUnknown(id) ? kLinsweepSpmUnknown : 0);
  return 0;
}

__attribute__((visibility("default"))) int linsweep_spm_encode(const LinsweepSpmModel* model, const char* text,
                                                               std::size_t size, int* ids, std::size_t cap,
                                                               std::size_t* count, char* err, std::size_t err_cap) {
  try {
    std::vector<int> out;
    const auto status = model->sp.Encode(std::string_view(text, size), &out);
    if (!status.ok()) {
      set_error(err, err_cap, status.ToString());
      return -1;
    }
    *count = out.size();
    std::copy_n(out.begin(), std::min(cap, out.size()), ids);
    return 0;
  } catch (const std::exception& e) {
    set_error(err, err_cap, e.what());
    return -1;
  }
}

}  // extern "C"
