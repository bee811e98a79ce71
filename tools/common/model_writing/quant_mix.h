// Which ggml type each tensor of a model gets when it is written as a given
// target type ("Q4_K_M", "Q8_0", ...): llama.cpp's per-tensor rules, so a file
// written here has the tensor types (and, with the bit-exact ref quantizers,
// the bytes) of the file `llama-quantize` writes from the same input.
//
// The facts come from llama.cpp's src/llama-quant.cpp (tensor_allows_quantization,
// llama_tensor_get_type_impl, tensor_type_fallback, llama_ftype_get_default_type,
// read at llama.cpp commit 007dbbf; the reference files made with 3f545bec in
// ../shared/models/reference are reproduced byte for byte):
//
// - Only tensors with 2+ dimensions whose name ends in "weight" are quantized,
//   never "*_norm.weight" (nor a few arch-specific small tensors); all others
//   keep their input type (norms and biases stay F32).
// - F16/BF16 targets: every quantizable tensor gets that type, nothing else.
// - Quantized targets, unless --pure: the LM head (output.weight, or
//   token_embd.weight when there is no output.weight: tied embeddings) becomes
//   Q6_K (Q8_0 if the target is Q8_0 or on falcon, or when its row length is
//   not a multiple of the target's block size).
//   Q4_K_M and Q5_K_M also give Q6_K to attn_v (and attn_qkv/attn_kv_b) and
//   ffn_down of the layers where use_more_bits(i, n) holds:
//     i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2
//   (for 4 layers: layers 2 and 3; for 32: 0-3, 6, 9, ..., 27, 28-31).
//   Model-specific extras: llama 70B (80 layers, GQA) attn_v Q4_K -> Q5_K;
//   8-expert models attn_v/attn_k -> Q8_0 and, for Q4_K_M, attn_output -> Q5_K;
//   falcon Q4_K_M ffn_down: first n/16 layers Q6_K, use_more_bits Q5_K.
// - The low-bit mixes (n_gqa = n_head / n_head_kv):
//     Q2_K   attn_v Q4_K if n_gqa >= 4 else Q3_K; ffn_down and attn_output Q3_K.
//     Q3_K_S only 8-expert models' attn_output -> Q5_K.
//     Q3_K_M attn_v Q5_K for the first two, then Q4_K; ffn_down Q5_K in the
//            first n/16 layers, then Q4_K (falcon: Q3_K unless use_more_bits);
//            attn_output Q4_K.
//     Q3_K_L attn_v and attn_output Q5_K, ffn_down Q5_K (falcon: Q4_K, and
//            attn_output Q4_K).
//     Q2_K_S attn_v Q4_K if n_gqa >= 4; ffn_down Q4_K in the first n/8
//            layers. Its Q2_K tensors need an importance matrix
//            (requires_imatrix): without one llama-quantize refuses the file.
//     IQ4_NL, IQ4_XS: attn_v Q5_K if n_gqa >= 4; ffn_down Q5_K in the first
//            n/8 layers, only without an importance matrix.
//     Q4_0, Q5_0 with an importance matrix: ffn_down Q4_1 / Q5_1 in the first
//            n/8 layers.
//   8-expert models give attn_output Q5_K under Q2_K, Q3_K_S, Q3_K_M, IQ4_NL,
//   IQ4_XS (and Q4_K_M), and llama 70B's attn_v goes from Q3_K or Q4_K to Q5_K.
// - Then, also with --pure: a row length that is not a multiple of the
//   chosen type's block size falls back: Q2_K, Q3_K -> Q4_0, Q4_K -> Q5_0,
//   Q5_K -> Q5_1, Q6_K -> Q8_0, IQ4_XS -> IQ4_NL, and to F16 if even that does
//   not fit; the legacy types and IQ4_NL have no fallback (an error, as in
//   llama.cpp).
//
// Targets Q4_K, Q5_K and Q3_K are this engine's single-type files: every
// quantizable tensor Q4_K (Q5_K, Q3_K) except the LM head rule above, as
// llama.cpp does for Q4_0 or Q6_K. (llama-quantize's "Q4_K"/"Q5_K"/"Q3_K" are
// aliases of the _M mixes; ask for Q4_K_M/Q5_K_M/Q3_K_M to get those.) Q2_K,
// IQ4_NL and IQ4_XS are llama.cpp's mixes of those names; --pure gives the
// single type.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/ggml_types.h"

namespace tools {

enum class Mix { none, q4_k_m, q5_k_m, q2_k, q2_k_s, q3_k_s, q3_k_m, q3_k_l, iq4_nl, iq4_xs };

// A target type as users name it, with what llama.cpp records for it.
struct QuantTarget {
  std::string_view name;        // "Q4_K_M"
  gguf::GgmlType default_type;  // the type most tensors get
  uint32_t file_type;           // llama_ftype, stored in general.file_type
  Mix mix;
};

// Case-insensitive; nullptr when unknown.
const QuantTarget* find_target(std::string_view name);
// "F32, F16, BF16, Q8_0, ..." for messages and help.
std::string target_names();
// "unknown type 'Q3_X'; known types: F32, ...".
std::string unknown_target_message(std::string_view name);
std::span<const QuantTarget> all_targets();

// What the rules need to know about the model (from its metadata).
struct MixModel {
  std::string arch;       // general.architecture
  uint32_t n_layer = 0;   // <arch>.block_count
  uint32_t n_head = 0;    // <arch>.attention.head_count
  uint32_t n_head_kv = 0; // <arch>.attention.head_count_kv
  uint32_t n_expert = 0;  // <arch>.expert_count (0: dense)
};

struct TensorDesc {
  std::string name;
  uint32_t n_dims = 0;
  std::array<uint64_t, 4> ne{1, 1, 1, 1};
  gguf::GgmlType type = gguf::GgmlType::F32;  // the type it has now
};

struct TypeChoice {
  gguf::GgmlType type = gguf::GgmlType::F32;
  bool quantizable = false;  // false: the tensor keeps its type (norms, biases, 1-D)
  std::string fallback;      // non-empty when the row length forced another type: why
};

class MixError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// llama.cpp's tensor order: tensors outside blocks first, then block by block
// (blk.N in numeric order), each group sorted by name. The rules count attn_v
// tensors in this order, and llama-quantize writes its files in it.
std::vector<size_t> llama_cpp_order(std::span<const TensorDesc> tensors);

// The type of each tensor (same indices as `tensors`, which must already be
// in llama_cpp_order). has_imatrix: an importance matrix is given (two rules
// depend on it). Throws MixError when a row length fits no type.
std::vector<TypeChoice> choose_types(const QuantTarget& target, bool pure, const MixModel& model,
                                     std::span<const TensorDesc> tensors, bool has_imatrix = false);

// Whether a tensor written as `type` in `target` needs an importance matrix to
// be usable (llama.cpp's tensor_requires_imatrix): of the types written here,
// the Q2_K tensors of a Q2_K_S file, never the LM head or token embeddings.
bool requires_imatrix(const QuantTarget& target, std::string_view name, gguf::GgmlType type);

// Empty when no tensor of `choices` requires an importance matrix; else a
// message naming the first one ("Q2_K_S needs an importance matrix: tensor
// 'blk.0.attn_k.weight' (and 23 more) would be Q2_K, ...").
std::string imatrix_needed(const QuantTarget& target, std::span<const TensorDesc> tensors,
                           std::span<const TypeChoice> choices);

// Bits per weight of a type (block bytes * 8 / block size).
double bits_per_weight(gguf::GgmlType type);

}  // namespace tools
