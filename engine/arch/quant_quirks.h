// The families llama.cpp's quantization mix (llama_tensor_get_type_impl)
// treats apart, by general.architecture: quantize and synth follow those rules
// for any file, including families the engine does not run (falcon), so the
// names live here with the other descriptions instead of in the tools.
#pragma once

#include <string_view>

namespace engine::arch {

struct QuantQuirks {
  // falcon: the LM head (or the tied embeddings) stays Q8_0, never Q6_K;
  // ffn_down under Q4_K_M is Q6_K in the first 16th of the layers, then Q5_K
  // where more bits help; attn_output keeps its type with 8 experts.
  bool falcon_rules = false;
  // llama: 80 layers with grouped-query attention are the 70B, whose attn_v
  // goes from Q3_K or Q4_K to Q5_K.
  bool llama_70b_attn_v = false;
};

// No quirks for a name not listed.
QuantQuirks quant_quirks(std::string_view arch);

}  // namespace engine::arch
