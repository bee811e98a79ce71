// The ggml tensor type table: every type id a GGUF file may hold, with its block
// size (elements per block), bytes per block and name, including the types the
// engine does not compute, so tools can still describe such files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gguf {

// Ids as stored in GGUF tensor infos (ggml's enum ggml_type).
enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q4_2 = 4,  // removed from ggml before GGUF existed: no layout
  Q4_3 = 5,  // removed from ggml before GGUF existed: no layout
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  Q4_0_4_4 = 31,  // interleaved Q4_0 variants, no longer written by llama.cpp
  Q4_0_4_8 = 32,
  Q4_0_8_8 = 33,
  TQ1_0 = 34,
  TQ2_0 = 35,
  IQ4_NL_4_4 = 36,  // interleaved IQ4_NL variants, no longer written by llama.cpp
  IQ4_NL_4_8 = 37,
  IQ4_NL_8_8 = 38,
  MXFP4 = 39,
  NVFP4 = 40,
  Q1_0 = 41,
  Q2_0 = 42,
};

inline constexpr uint32_t kGgmlTypeIdCount = 43;

struct GgmlTypeTraits {
  GgmlType type;
  const char* name;      // as llama.cpp prints it: "Q4_K", "F16", ...
  uint32_t block_size;   // elements per block; 0 for ids without a layout
  uint32_t block_bytes;  // bytes per block; 0 for ids without a layout
  bool quantized;
  bool deprecated;       // valid in old files, no longer written
};

// Traits for a raw id from a file, or nullptr when the id is not a ggml type.
const GgmlTypeTraits* ggml_type_traits(uint32_t id);
// Traits for a known type (never null).
const GgmlTypeTraits& traits(GgmlType type);
std::string_view type_name(GgmlType type);
// Case-insensitive lookup by name ("q4_k", "F16"); nullopt when unknown.
std::optional<GgmlType> type_from_name(std::string_view name);

// Bytes of one row of `n` elements; nullopt when `n` is not a multiple of the
// block size, the type has no layout, or the size does not fit in 64 bits.
std::optional<uint64_t> row_bytes(GgmlType type, uint64_t n);

}  // namespace gguf
