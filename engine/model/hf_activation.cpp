// HF activation names, read and written.
#include "engine/model/hf_activation.hpp"

#include "common/enum_names.hpp"
#include "common/errors.hpp"

namespace linsweep {
namespace {

// The first name of each activation is the one written.
constexpr EnumName<Activation> kNames[] = {
    {Activation::kGeluExact, "gelu"},     {Activation::kGeluTanh, "gelu_new"},
    {Activation::kGeluTanh, "gelu_fast"}, {Activation::kGeluTanh, "gelu_pytorch_tanh"},
    {Activation::kSilu, "silu"},          {Activation::kSilu, "swish"}};

}  // namespace

Activation parse_hf_activation(const std::string& name, const std::string& path, const char* field) {
  if (auto a = parse_enum(kNames, name)) return *a;
  throw ModelError(path + ": " + field + " '" + name + "' is not supported (" + enum_names_list(kNames) + ")");
}

const char* hf_activation_name(Activation a) noexcept { return enum_name(kNames, a); }

}  // namespace linsweep
