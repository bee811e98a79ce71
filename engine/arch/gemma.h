// What Gemma 2 and Gemma 3 share (engine/arch/gemma2.cpp, gemma3.cpp): the
// sandwich-normed GeGLU layer with NeoX RoPE, embeddings scaled by
// sqrt(n_embd), and the query scale llama.cpp picks by the model's size.
#pragma once

#include "engine/arch/arch.h"
#include "engine/model/model_config.h"

namespace engine::arch {

// llama's layer with NeoX RoPE (no frequency factors), GELU-tanh gated FFN,
// RMSNorm after attention and after the FFN as well as before, and the query
// scale: 1/sqrt(n_embd / n_head) for the 27B models (`layers_27b` layers,
// gemma_pytorch's query_pre_attn_scalar), 1/sqrt(key_length) otherwise.
LayerSpec gemma_layer(const ModelConfig& c, uint32_t il, uint32_t layers_27b);
// sqrt(n_embd) as a float, as llama.cpp scales the embeddings.
void scale_gemma_embeddings(ModelConfig& c);
// The keys both converters write: llama's plus the head size, the sliding
// window and its pattern, the final soft-cap and the local RoPE base.
std::vector<KeySpec> gemma_keys();

}  // namespace engine::arch
