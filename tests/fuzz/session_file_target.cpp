// Saved sessions read back into a session of a small synthesized model: any
// bytes load or are refused with SessionFileError, and a refusal leaves the
// session as it was (its tokens and positions); a file that loads gives a
// session that evaluates the next token to finite logits. Most inputs start
// from a real saved session (the seeds) and get their checksum made right
// again, so the fuzzer reaches the checks behind it.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/session.h"
#include "engine/runtime/session_file.h"
#include "engine/support/error.h"
#include "gguf/file.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/model_synth.h"
#include "tests/fuzz/targets.h"

namespace engine_fuzz {
namespace {

constexpr uint32_t kContext = 16;

// The consistent F32 llama model an input of zeros describes (model_synth.h),
// loaded once per process: the saved sessions of the seeds are of this model.
const engine::Model& model() {
  static const std::vector<uint8_t> bytes = [] {
    FuzzInput none({});
    return synthesize_model(none);
  }();
  // The parsed file is a view of `bytes`, which live as long as the model.
  static const std::unique_ptr<engine::Model> m = engine::Model::load(gguf::File::parse(bytes, "fuzz-session-model.gguf"));
  return *m;
}

engine::Session session(bool f32) {
  engine::SessionParams sp;
  sp.n_ctx = kContext;
  sp.n_batch = 4;
  sp.kv_type = f32 ? engine::KvType::f32 : engine::KvType::f16;
  return engine::Session(model(), sp);
}

}  // namespace

std::vector<uint8_t> saved_session_seed(uint32_t n_tokens, bool f32) {
  engine::Session s = session(f32);
  std::vector<int32_t> tokens;
  for (uint32_t i = 0; i < n_tokens; ++i) tokens.push_back(static_cast<int32_t>((i * 7 + 1) % model().config().n_vocab));
  if (!tokens.empty()) s.eval(tokens);
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("fuzz-session-seed-" + std::to_string(::getpid()) + ".session");
  engine::save_session(s, path.string());
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
  std::filesystem::remove(path);
  // The mode byte session_file() reads first: reseal, the seed's KV type.
  bytes.insert(bytes.begin(), static_cast<uint8_t>(1 | (f32 ? 2 : 0)));
  return bytes;
}

int session_file(const uint8_t* data, size_t size) {
  FuzzInput in({data, size});
  const uint8_t mode = in.byte();
  const auto rest = in.rest();
  std::vector<uint8_t> file(rest.begin(), rest.end());
  if (mode & 1) engine::reseal_session_bytes(file);

  engine::Session s = session((mode & 2) != 0);
  // A session with a history of its own (bit 2), which a refused file must not touch.
  if (mode & 4) s.eval(std::vector<int32_t>{3, 1, 2});
  const std::vector<int32_t> before(s.tokens().begin(), s.tokens().end());
  const uint32_t past_before = s.n_past();
  try {
    engine::load_session_bytes(s, file, "fuzz.session");
  } catch (const engine::SessionFileError&) {
    if (s.n_past() != past_before || !std::equal(before.begin(), before.end(), s.tokens().begin(), s.tokens().end())) {
      broken("a refused session file changed the session");
    }
    return 0;
  }
  if (s.tokens().size() > kContext || s.n_past() > s.tokens().size()) broken("a loaded session holds more than fits");
  for (int32_t t : s.tokens()) {
    if (t < 0 || static_cast<uint32_t>(t) >= model().config().n_vocab) broken("a loaded session holds a bad token");
  }
  if (s.tokens().size() == kContext) return 0;  // full: nothing more to evaluate
  // Keys and values loaded are finite (load_session checks), but an edited
  // file's may still be large enough to overflow the next layer: that is an
  // error the evaluation names, with the session left as it was.
  const uint32_t past_loaded = s.n_past();
  try {
    s.eval(std::vector<int32_t>{2});
  } catch (const engine::ModelError&) {
    if (s.n_past() != past_loaded) broken("a failed evaluation after a load changed n_past");
    return 0;
  }
  for (float v : s.logits()) {
    if (!std::isfinite(v)) broken("a loaded session evaluated to a non-finite logit");
  }
  return 0;
}

}  // namespace engine_fuzz
