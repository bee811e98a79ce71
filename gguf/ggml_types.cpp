#include "gguf/ggml_types.h"

#include <array>
#include <cctype>

namespace gguf {
namespace {

using T = GgmlType;

// Block sizes and bytes follow ggml's block_* structs (ggml-common.h): e.g.
// Q4_0 = {fp16 d; uint8 qs[16]} for 32 weights = 18 bytes.
constexpr std::array<GgmlTypeTraits, kGgmlTypeIdCount> kTable = {{
    {T::F32, "F32", 1, 4, false, false},
    {T::F16, "F16", 1, 2, false, false},
    {T::Q4_0, "Q4_0", 32, 18, true, false},
    {T::Q4_1, "Q4_1", 32, 20, true, false},
    {T::Q4_2, "Q4_2", 0, 0, true, true},
    {T::Q4_3, "Q4_3", 0, 0, true, true},
    {T::Q5_0, "Q5_0", 32, 22, true, false},
    {T::Q5_1, "Q5_1", 32, 24, true, false},
    {T::Q8_0, "Q8_0", 32, 34, true, false},
    {T::Q8_1, "Q8_1", 32, 36, true, false},
    {T::Q2_K, "Q2_K", 256, 84, true, false},
    {T::Q3_K, "Q3_K", 256, 110, true, false},
    {T::Q4_K, "Q4_K", 256, 144, true, false},
    {T::Q5_K, "Q5_K", 256, 176, true, false},
    {T::Q6_K, "Q6_K", 256, 210, true, false},
    {T::Q8_K, "Q8_K", 256, 292, true, false},
    {T::IQ2_XXS, "IQ2_XXS", 256, 66, true, false},
    {T::IQ2_XS, "IQ2_XS", 256, 74, true, false},
    {T::IQ3_XXS, "IQ3_XXS", 256, 98, true, false},
    {T::IQ1_S, "IQ1_S", 256, 50, true, false},
    {T::IQ4_NL, "IQ4_NL", 32, 18, true, false},
    {T::IQ3_S, "IQ3_S", 256, 110, true, false},
    {T::IQ2_S, "IQ2_S", 256, 82, true, false},
    {T::IQ4_XS, "IQ4_XS", 256, 136, true, false},
    {T::I8, "I8", 1, 1, false, false},
    {T::I16, "I16", 1, 2, false, false},
    {T::I32, "I32", 1, 4, false, false},
    {T::I64, "I64", 1, 8, false, false},
    {T::F64, "F64", 1, 8, false, false},
    {T::IQ1_M, "IQ1_M", 256, 56, true, false},
    {T::BF16, "BF16", 1, 2, false, false},
    {T::Q4_0_4_4, "Q4_0_4_4", 32, 18, true, true},
    {T::Q4_0_4_8, "Q4_0_4_8", 32, 18, true, true},
    {T::Q4_0_8_8, "Q4_0_8_8", 32, 18, true, true},
    {T::TQ1_0, "TQ1_0", 256, 54, true, false},
    {T::TQ2_0, "TQ2_0", 256, 66, true, false},
    {T::IQ4_NL_4_4, "IQ4_NL_4_4", 32, 18, true, true},
    {T::IQ4_NL_4_8, "IQ4_NL_4_8", 32, 18, true, true},
    {T::IQ4_NL_8_8, "IQ4_NL_8_8", 32, 18, true, true},
    {T::MXFP4, "MXFP4", 32, 17, true, false},
    {T::NVFP4, "NVFP4", 64, 36, true, false},
    {T::Q1_0, "Q1_0", 128, 18, true, false},
    {T::Q2_0, "Q2_0", 64, 18, true, false},
}};

constexpr bool table_is_indexed_by_id() {
  for (uint32_t i = 0; i < kTable.size(); ++i) {
    if (static_cast<uint32_t>(kTable[i].type) != i) return false;
  }
  return true;
}
static_assert(table_is_indexed_by_id(), "kTable must be ordered by type id");

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

const GgmlTypeTraits* ggml_type_traits(uint32_t id) {
  return id < kTable.size() ? &kTable[id] : nullptr;
}

const GgmlTypeTraits& traits(GgmlType type) { return kTable[static_cast<uint32_t>(type)]; }

std::string_view type_name(GgmlType type) { return traits(type).name; }

std::optional<GgmlType> type_from_name(std::string_view name) {
  for (const auto& t : kTable) {
    if (iequal(t.name, name)) return t.type;
  }
  return std::nullopt;
}

std::optional<uint64_t> row_bytes(GgmlType type, uint64_t n) {
  const auto& t = traits(type);
  if (t.block_size == 0 || n % t.block_size != 0) return std::nullopt;
  const uint64_t blocks = n / t.block_size;
  if (blocks > UINT64_MAX / t.block_bytes) return std::nullopt;
  return blocks * t.block_bytes;
}

}  // namespace gguf
