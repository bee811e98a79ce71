// synth's gemma-3-1b shape with the cache of Gemma 3 1B (26 layers, 5 local :
// 1 global, window 512, 1 KV head of 256) and the widths that do not size the
// cache (n_embd, n_ff, the vocabulary) shrunk, so a test writes it in a
// moment and a session of it at 32k context is real.
#pragma once

#include <stdexcept>
#include <string>

#include "tools/common/model_writing/synth_model.h"
#include "tools/common/model_writing/synth_shapes.h"

namespace engine_test {

inline tools::SynthShape gemma3_1b_cache_shape() {
  const tools::SynthShape* s = tools::find_shape("gemma-3-1b");
  if (s == nullptr) throw std::logic_error("synth has no gemma-3-1b shape");
  tools::SynthShape shape = *s;
  shape.n_embd = 64;
  shape.n_ff = 64;
  shape.n_vocab = 320;
  return shape;
}

// Writes that shape as Q8_0 (the narrow widths are multiples of its 32-value blocks).
inline void write_gemma3_1b_cache_model(const std::string& path) {
  tools::SynthOptions o;
  o.shape = gemma3_1b_cache_shape();
  o.type = "Q8_0";
  o.output = path;
  o.out = nullptr;
  tools::synth_model(o);
}

}  // namespace engine_test
