// synth: a GGUF model of a real shape with random weights, for benchmarks and
// tests that need a model of a real size without downloading one.
//
// Weights: matrices ~ N(0, 1/sqrt(fan_in)) with fan_in = the row length
// (GGUF ne[0]), token_embd and an untied output 1/sqrt(n_embd), norm weights
// 1 + N(0, 0.1), qwen2 biases N(0, 0.5) (as ../shared/models/reference was
// made), so activations stay finite through every layer and the logits have
// std ~1. The normal deviates are an Irwin-Hall sum of four 16-bit uniforms
// scaled to unit variance (within +-3.46 sigma): integer arithmetic from a
// counter-based generator keyed by (seed, tensor name, row), so every row can
// be produced on any thread, the bytes are the same on every run and every
// platform for a seed, and a tensor's values do not depend on the layer
// count, the type or the other tensors.
//
// Tensors are generated and converted a batch of rows at a time straight
// into the writer (row_stream.h): no F32 copy of the model exists, a 7B file
// is written in well under 1 GiB. Types follow the same rules as quantize
// (quant_mix.h), so `synth --type F32` then `quantize ... Q4_K_M` gives the
// same bytes as `synth --type Q4_K_M`.
//
// Tokenizer: a byte-level SentencePiece vocabulary (<unk>, <s>, </s>, the 256
// <0xNN> byte tokens, "▁" for the space, then filler tokens "<tNNN>" up to
// the shape's vocab size: any text tokenizes to bytes and spaces, any sampled
// token prints), or the tokenizer.* keys of another GGUF file (the vocab size
// then comes from that file).
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/common/model_writing/plan.h"
#include "tools/common/model_writing/synth_shapes.h"

namespace tools {

class SynthError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SynthOptions {
  SynthShape shape;
  std::string output;      // may be empty with dry_run
  std::string type;        // a target name (quant_mix.h)
  bool pure = false;
  uint64_t seed = 1;
  std::string vocab_file;  // copy its tokenizer.* keys; empty: the byte-level vocabulary
  bool dry_run = false;
  size_t n_threads = 0;    // 0: the engine's default
  bool progress = false;
  bool verbose = false;
  FILE* out = stdout;      // the plan and the summary; nullptr: silent
};

struct SynthResult {
  std::vector<PlannedTensor> plan;
  uint64_t output_file_bytes = 0;
  uint32_t n_vocab = 0;
};

// The vocabulary size of the GGUF file `path` (its tokenizer.ggml.tokens), as
// --vocab takes it. Throws gguf::Error for a file that is not GGUF and
// SynthError for one without a vocabulary, both naming the file.
uint32_t vocab_size(const std::string& path);

// Throws SynthError when the shape is inconsistent (names the field).
void validate_shape(const SynthShape& shape, bool own_vocab);

// Throws SynthError (bad request) or gguf::Error (vocab file, write failure).
SynthResult synth_model(const SynthOptions& options);

// The generator, exposed for tests: element i of row `row` of the tensor
// keyed by tensor_key(seed, name), a deviate with mean 0 and variance 1.
uint64_t tensor_key(uint64_t seed, std::string_view name);
double synth_normal(uint64_t key, uint64_t row, uint64_t i);

}  // namespace tools
