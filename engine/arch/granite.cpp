// granite (Granite 3.x dense): llama's layers with four multipliers from the
// file: embedding_scale on the embeddings, residual_scale on each block's
// output before it joins the residual stream, attention.scale as the q.k
// scale (instead of 1 / sqrt(head size)), and logit_scale dividing the
// logits (required, as llama.cpp requires it). llama.cpp's
// src/models/granite.cpp is the specification; its MoE and vision variants
// (granitemoe, deepstack) are other architectures.
#include "engine/arch/families.h"

namespace engine::arch {

Architecture granite() {
  using P = Param;
  Architecture a;
  a.name = "granite";
  // The converter is llama's, then the multipliers of config.json.
  a.keys = llama_converter_keys();
  a.keys.push_back({"attention.scale", P::attention_scale});
  a.keys.push_back({"embedding_scale", P::embedding_scale});
  a.keys.push_back({"residual_scale", P::residual_scale});
  a.keys.push_back({"logit_scale", P::logit_scale, true});
  a.tensors = transformer_tensors();
  // transformer_layer reads the scalings from the config (attention.scale,
  // residual_scale); the embedding and logit scales are the config's own.
  a.layer = transformer_layer;
  return a;
}

}  // namespace engine::arch
