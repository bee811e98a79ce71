// Small models written by synth for the family tests, and a tensor's values
// read back from the file.
#pragma once

#include <string>
#include <vector>

#include "gguf/file.h"
#include "tests/quantize/test_util.h"
#include "tools/common/model_writing/synth_model.h"

namespace engine_test {

// dir/name, written by synth in F32 (seed 1).
inline std::string write_synth(const quantize_test::TempDir& dir, const tools::SynthShape& s, const std::string& name) {
  tools::SynthOptions o;
  o.shape = s;
  o.type = "F32";
  o.output = dir / name;
  o.out = nullptr;
  tools::synth_model(o);
  return o.output;
}

// The values of an F32 tensor of the file.
inline std::vector<float> f32_values(const gguf::File& f, const char* name) {
  const gguf::TensorInfo& t = f.tensor(name);
  const auto* x = reinterpret_cast<const float*>(f.tensor_data(t));
  return {x, x + t.n_elements};
}

}  // namespace engine_test
