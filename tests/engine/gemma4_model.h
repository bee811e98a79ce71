// models.json's gemma4 reference model (tests/reference/llamacpp): sliding
// windows of 8, two head sizes, V from K, per-layer inputs, and the last three
// layers reading earlier layers' caches. Written by synth in F32.
#pragma once

#include <string>
#include <vector>

#include "tests/quantize/test_util.h"
#include "tools/common/model_writing/synth_args.h"
#include "tools/common/model_writing/synth_model.h"

namespace engine_test {

// models.json's gemma4-d256: layers 2 and 5 global, the last 3 share caches.
inline const char* kGemma4Args[] = {
    "synth", "--arch", "gemma4", "--n-embd", "256", "--n-layer", "6", "--n-head", "16", "--n-head-kv", "2",
    "--head-dim", "32", "--n-ff", "512", "--n-vocab", "320", "--ctx", "256", "--rms-eps", "1e-6", "--tied",
    "--rope-base", "1000000", "--rope-partial", "0.25", "--k-eq-v",
    "--set", "attention.sliding_window=8", "--set", "attention.sliding_window_pattern=1,1,0,1,1,0",
    "--set", "attention.key_length_swa=16", "--set", "attention.value_length_swa=16",
    "--set", "rope.dimension_count_swa=16", "--set", "rope.freq_base_swa=10000",
    "--set", "attention.shared_kv_layers=3", "--set", "embedding_length_per_layer_input=256",
    "--set", "final_logit_softcapping=3", "--seed", "203", "--type", "F32", "-o", "", "--no-progress"};

inline std::string write_gemma4_model(const quantize_test::TempDir& dir) {
  std::vector<char*> argv;
  const std::string out = dir / "gemma4.gguf";
  for (const char* a : kGemma4Args) argv.push_back(const_cast<char*>(*a == '\0' ? out.c_str() : a));
  tools::SynthCommand cmd = tools::parse_synth_command(static_cast<int>(argv.size()), argv.data());
  cmd.options.out = nullptr;
  tools::synth_model(cmd.options);
  return out;
}

}  // namespace engine_test
