// llama (Llama 1-3, TinyLlama, stories): pre-norm attention with normal
// (interleaved-pair) RoPE, optionally divided by llama3's rope_freqs.weight,
// and a SwiGLU feed-forward. The reference everything else here varies.
#include "engine/arch/families.h"

namespace engine::arch {

Architecture llama() {
  Architecture a;
  a.name = "llama";
  a.keys = llama_converter_keys();
  a.tensors = transformer_tensors();
  a.layer = transformer_layer;
  return a;
}

}  // namespace engine::arch
