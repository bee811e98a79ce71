// Replays the committed fuzz inputs (tests/fuzz/regressions/<target>/*: each
// one a crash or a broken invariant the fuzzers found, fixed since) through
// the same target functions, in every normal build: native, ASan+UBSan and
// each qemu CPU. A target that crashes again fails this suite.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "engine/support/log.h"
#include "engine/model/model.h"
#include "gguf/file.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/model_synth.h"
#include "tests/fuzz/targets.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;
using Target = int (*)(const uint8_t*, size_t);

const std::map<std::string, Target>& targets() {
  static const std::map<std::string, Target> t = {
      {"gguf_reader", engine_fuzz::gguf_reader},         {"model_loader", engine_fuzz::model_loader},
      {"tokenizer_spm", engine_fuzz::tokenizer_spm},     {"tokenizer_bpe", engine_fuzz::tokenizer_bpe},
      {"sampler_params", engine_fuzz::sampler_params},   {"chat_template", engine_fuzz::chat_template},
      {"session_file", engine_fuzz::session_file},       {"grammar", engine_fuzz::grammar},
#if ENGINE_FUZZ_SERVE
      {"serve_request", engine_fuzz::serve_request},
#endif
  };
  return t;
}

std::vector<uint8_t> read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class FuzzRegressions : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { engine::set_log_level(engine::LogLevel::off); }
  void TearDown() override { engine::set_log_level(engine::LogLevel::info); }
};

TEST_P(FuzzRegressions, ReplayWithoutCrashing) {
  const std::string& name = GetParam();
  if (name.rfind("tokenizer", 0) == 0) {
    ENGINE_REQUIRE_SHARED(vocab, name == "tokenizer_spm" ? "models/vocab/ggml-vocab-llama-spm.gguf"
                                                         : "models/vocab/ggml-vocab-gpt-2.gguf");
  }
  const fs::path dir = fs::path(ENGINE_FUZZ_REGRESSIONS_DIR) / name;
  size_t replayed = 0;
  if (fs::is_directory(dir)) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      SCOPED_TRACE(entry.path().string());
      const std::vector<uint8_t> bytes = read(entry.path());
      // Exactly sized, as libFuzzer passes it: ASan sees a read past the end.
      const std::unique_ptr<uint8_t[]> exact(new uint8_t[bytes.size()]);
      std::copy(bytes.begin(), bytes.end(), exact.get());
      EXPECT_EQ(targets().at(name)(exact.get(), bytes.size()), 0);
      ++replayed;
    }
  }
  // The empty input is every target's simplest case.
  EXPECT_EQ(targets().at(name)(nullptr, 0), 0);
  RecordProperty("replayed", static_cast<int>(replayed));
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzRegressions,
                         ::testing::Values("gguf_reader", "model_loader", "tokenizer_spm", "tokenizer_bpe",
                                           "sampler_params", "session_file", "grammar"
#if ENGINE_FUZZ_SERVE
                                           ,
                                           "serve_request"
#endif
                                           ),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// The session target's seeds are real saved sessions that load; the same
// files edited (a token outside the vocabulary, a count past the context, a
// cut) and resealed reach the checks behind the checksum and are refused,
// with the session, which has a history of its own, left as it was (the
// target aborts otherwise).
TEST(FuzzSessionFile, SeedsLoadAndEditedOnesAreRefusedLeavingTheSession) {
  for (const uint32_t n : {0u, 5u, 12u}) {
    for (const bool f32 : {false, true}) {
      std::vector<uint8_t> seed = engine_fuzz::saved_session_seed(n, f32);
      ASSERT_GT(seed.size(), 60u);  // mode byte, magic, header
      EXPECT_EQ(engine_fuzz::session_file(seed.data(), seed.size()), 0);
      seed[0] |= 4;  // the session now has tokens of its own before the load
      EXPECT_EQ(engine_fuzz::session_file(seed.data(), seed.size()), 0);
      for (const size_t at : {size_t{9}, size_t{30}, size_t{45}, seed.size() / 2, seed.size() - 12}) {
        std::vector<uint8_t> edited = seed;
        edited[at] ^= 0x5a;
        EXPECT_EQ(engine_fuzz::session_file(edited.data(), edited.size()), 0) << "byte " << at;
      }
      std::vector<uint8_t> cut(seed.begin(), seed.end() - 20);
      EXPECT_EQ(engine_fuzz::session_file(cut.data(), cut.size()), 0);
    }
  }
}

// The synthesizer's default (an input of zeros) is a consistent model: the
// loader fuzz target starts from models that load.
TEST(FuzzModelSynth, ZerosGiveAModelThatLoads) {
  for (const std::vector<uint8_t>& choices : {std::vector<uint8_t>{}, {1, 1}, {2, 2}, {0, 3}, {1, 8}, {2, 10}}) {
    engine_fuzz::FuzzInput in(choices);
    const std::vector<uint8_t> bytes = engine_fuzz::synthesize_model(in);
    EXPECT_NO_THROW(engine::Model::load(gguf::File::parse(bytes, "synth.gguf")));
  }
}

}  // namespace
