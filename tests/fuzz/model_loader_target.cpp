// The model loader and a short forward pass on fuzzed models. Loading either
// succeeds or throws engine::Error / gguf::Error naming the problem; a model
// that loads evaluates tokens, and an evaluation that succeeds has finite
// logits (NaN or Inf must have been reported as an error naming the layer).
#include <cmath>
#include <span>
#include <vector>

#include "engine/support/error.h"
#include "engine/model/model.h"
#include "engine/runtime/sampler.h"
#include "engine/runtime/session.h"
#include "engine/tokenizer/tokenizer.h"
#include "gguf/file.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/model_synth.h"
#include "tests/fuzz/targets.h"

namespace engine_fuzz {
namespace {

// Sessions, prompts and sampling on a model that loaded.
void exercise(const engine::Model& model, FuzzInput& in, uint8_t mode) {
  const uint32_t n_vocab = model.config().n_vocab;
  std::vector<int32_t> prompt;
  try {
    const engine::Tokenizer tok = engine::Tokenizer::from_gguf(model.file());
    const std::string_view text = in.string(16);
    prompt = tok.encode(text, tok.bos() >= 0 && (mode & 2) != 0, (mode & 4) != 0);
    for (int32_t id : prompt) {
      if (id < 0 || id >= tok.n_vocab()) broken("the tokenizer gave id " + std::to_string(id));
      (void)tok.token_piece(id);
    }
  } catch (const engine::Error&) {
    // A bad vocabulary: the model still runs on ids.
  }
  // Ids straight from the input, a few of them outside the vocabulary.
  const uint32_t n_ids = in.range(0, 4);
  for (uint32_t i = 0; i < n_ids; ++i) prompt.push_back(static_cast<int32_t>(in.range(0, n_vocab + 1)) - (mode & 8 ? 1 : 0));
  if (prompt.empty()) prompt.push_back(0);

  engine::SessionParams sp;
  sp.n_ctx = in.range(0, 16);  // 0: the model's context_length, which may be 0 too
  sp.n_batch = in.range(0, 8);
  sp.kv_type = (mode & 16) != 0 ? engine::KvType::f32 : engine::KvType::f16;
  sp.memory_limit = 64u << 20;  // the engine refuses more, instead of the fuzzer's malloc limit tripping
  engine::Session s(model, sp);
  engine::Sampler sampler({.temperature = (mode & 32) != 0 ? 0.8f : 0.0f, .seed = 1});
  const bool all_logits = (mode & 64) != 0;
  const uint32_t steps = in.range(0, 2);
  for (uint32_t step = 0; step <= steps; ++step) {
    const uint32_t before = s.n_past();
    try {
      s.eval(prompt, all_logits);
    } catch (const engine::Error&) {
      if (s.n_past() != before) broken("a failed eval changed n_past");
      if (!s.logits().empty()) broken("a failed eval left logits");
      return;
    }
    const size_t rows = all_logits ? prompt.size() : 1;
    if (s.logits().size() != rows * n_vocab) broken("logits of the wrong size");
    for (float v : s.logits()) {
      if (!std::isfinite(v)) broken("eval succeeded with a non-finite logit");
    }
    const int32_t next = sampler.sample(s.logits().subspan(s.logits().size() - n_vocab));
    if (next < 0 || static_cast<uint32_t>(next) >= n_vocab) broken("the sampler gave id " + std::to_string(next));
    prompt.assign(1, next);
  }
}

}  // namespace

int model_loader(const uint8_t* data, size_t size) {
  FuzzInput in({data, size});
  const uint8_t mode = in.byte();
  // Odd: the input's own bytes are the file (mutations of the seed models);
  // even: a file synthesized from the input's choices.
  std::vector<uint8_t> bytes;
  if (mode & 1) {
    const auto raw = in.rest();
    bytes.assign(raw.begin(), raw.end());
  } else {
    bytes = synthesize_model(in);
  }
  std::unique_ptr<engine::Model> model;
  try {
    model = engine::Model::load(gguf::File::parse(bytes, "fuzz-model.gguf"));
  } catch (const engine::Error&) {
    return 0;
  } catch (const gguf::Error&) {
    return 0;
  }
  try {
    exercise(*model, in, mode);
  } catch (const engine::Error&) {
  }
  return 0;
}

}  // namespace engine_fuzz
