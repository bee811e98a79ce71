// A family described in the tests alone, with what llama lacks (sliding
// windows, GeGLU, post-norms, Q/K norms, its own attention scale, soft-caps of
// the scores and of the logits, a scaled embedding), and a plain
// double-precision forward pass written from the layer specs' definitions
// (engine/arch/layer_spec.h) to check the engine against: every position's
// keys kept, the window applied as a mask (a full cache).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/arch/registry.h"
#include "engine/model/model_config.h"
#include "gguf/file.h"
#include "tools/common/model_writing/synth_shapes.h"

namespace toy {

// The toy's layers without their window.
engine::LayerSpec layer_without_window(const engine::ModelConfig& c, uint32_t il);

// A description's layer function is a plain function pointer: the window
// and the pattern (engine::arch::is_sliding_layer: of every kPattern layers
// all but the last are windowed; 0: every layer) are template arguments.
template <uint32_t kWindow, uint32_t kPattern>
engine::LayerSpec layer(const engine::ModelConfig& c, uint32_t il) {
  engine::LayerSpec l = layer_without_window(c, il);
  l.attention.window = engine::arch::is_sliding_layer(il, kPattern) ? kWindow : 0;
  return l;
}

// The family `name` with the layers of layer_fn.
engine::arch::Architecture architecture(const std::string& name,
                                        engine::LayerSpec (*layer_fn)(const engine::ModelConfig&, uint32_t));

// A small shape of the family `arch`: 64 wide, 4 heads of 16 sharing 2 KV heads.
tools::SynthShape shape(const std::string& arch, uint32_t n_layer, uint32_t n_ctx);

using Vec = std::vector<double>;

// The plain forward pass, every weight read from an F32 file.
class Reference {
 public:
  Reference(const std::string& path, const engine::ModelConfig& c) : f_(gguf::File::open(path)), c_(c) {}

  // The logits of every token of `tokens` evaluated from position 0; without
  // `windows`, every layer attends to every earlier position.
  std::vector<Vec> logits(const std::vector<int32_t>& tokens, bool windows = true) const;

 private:
  const float* data(const std::string& name) const;
  Vec row(const std::string& name, size_t r, size_t n) const;
  Vec matvec(const std::string& name, const Vec& x) const;
  Vec norm(const Vec& x, const std::string& weight, size_t offset = 0, size_t n = 0) const;
  void head(Vec& v, uint32_t h, const std::string& norm_weight, const engine::AttentionSpec& a, size_t pos) const;

  gguf::File f_;
  const engine::ModelConfig& c_;
};

// The largest difference of `got` ((tokens, n_vocab) floats) from the
// reference over every logit, in units of the logits' own scale (1 + |reference|).
double worst(const std::vector<float>& got, const std::vector<Vec>& want);

}  // namespace toy
