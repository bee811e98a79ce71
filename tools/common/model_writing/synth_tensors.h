// What synth writes for a shape, read from the architecture's description
// (engine/arch/): the hyperparameters as the engine would read them back, the
// metadata keys the family's converter writes, and the tensors of its table.
// synth has no description of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/arch/arch.h"
#include "engine/model/model_config.h"
#include "tools/common/model_writing/synth_shapes.h"

namespace tools {

// The config a file of this shape loads as; nullptr arch when the shape's
// architecture is not registered (validate_shape says so).
engine::ModelConfig synth_config(const SynthShape& s, uint32_t n_vocab);

struct SynthKey {
  std::string key;  // "llama.context_length"
  bool is_float = false;
  double value = 0;
  std::string text;  // a string key when not empty
};
// The <arch>.* keys the family's converter writes, in its order.
std::vector<SynthKey> synth_keys(const engine::ModelConfig& c, const SynthShape& s);

struct SynthTensor {
  std::string name;
  std::vector<uint64_t> ne;
  engine::arch::TensorKind kind;
};
// Every tensor of the table the shape has: per-layer ones where the layer's
// spec has them, the optional LM head unless tied, the llama3 rope factors
// when the shape scales RoPE.
std::vector<SynthTensor> synth_tensors(const engine::ModelConfig& c, const SynthShape& s);

}  // namespace tools
