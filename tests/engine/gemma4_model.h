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

// models.json's lfm2-d256 with a smaller width: short convolutions in layers
// 0, 1, 3 and 4, attention in 2 and 5.
inline const char* kLfm2Args[] = {"synth", "--arch", "lfm2", "--n-embd", "64", "--n-layer", "6", "--n-head", "4",
                                  "--n-head-kv", "2", "--n-ff", "128", "--n-vocab", "320", "--tied", "--seed", "211",
                                  "--type", "F32", "-o", "", "--no-progress"};

// Writes the model of synth's arguments (the empty one is the output path) as NAME.gguf in dir.
template <size_t N>
std::string write_synth_args(const quantize_test::TempDir& dir, const char* const (&args)[N], const char* name) {
  std::vector<char*> argv;
  const std::string out = dir / (std::string(name) + ".gguf");
  for (const char* a : args) argv.push_back(const_cast<char*>(*a == '\0' ? out.c_str() : a));
  tools::SynthCommand cmd = tools::parse_synth_command(static_cast<int>(argv.size()), argv.data());
  cmd.options.out = nullptr;
  tools::synth_model(cmd.options);
  return out;
}

inline std::string write_gemma4_model(const quantize_test::TempDir& dir) {
  return write_synth_args(dir, kGemma4Args, "gemma4");
}
inline std::string write_lfm2_model(const quantize_test::TempDir& dir) { return write_synth_args(dir, kLfm2Args, "lfm2"); }

}  // namespace engine_test
