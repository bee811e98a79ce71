// llama.cpp's tokenizer test vectors (../shared/models/vocab): every string of
// every supported vocabulary must give exactly the listed ids (no BOS, special
// tokens not parsed), and decode back to itself.
#include <gtest/gtest.h>

#include "engine/support/error.h"
#include "tests/support/shared_data.h"
#include "tests/tokenizer/test_util.h"

namespace {

using tokenizer_test::ids_string;
using tokenizer_test::read_vectors;
using tokenizer_test::tokenizer_of;

class VocabVectors : public ::testing::TestWithParam<const char*> {};

TEST_P(VocabVectors, MatchExactly) {
  ENGINE_REQUIRE_SHARED(path, std::string("models/vocab/ggml-vocab-") + GetParam() + ".gguf");
  const engine::Tokenizer& tok = tokenizer_of(path);
  const auto vectors = read_vectors(path);
  ASSERT_EQ(vectors.size(), 46u) << "the .inp/.out files changed";
  size_t matched = 0;
  for (size_t i = 0; i < vectors.size(); ++i) {
    const auto& v = vectors[i];
    const std::vector<int32_t> ids = tok.encode(v.text, /*add_bos=*/false, /*parse_special=*/false);
    EXPECT_EQ(ids_string(ids), ids_string(v.ids)) << GetParam() << " vector " << i << ": '" << v.text << "'";
    matched += ids == v.ids;
  }
  std::printf("[          ] %s: %zu/%zu vectors match\n", GetParam(), matched, vectors.size());
}

TEST_P(VocabVectors, DecodeGivesTheTextBack) {
  ENGINE_REQUIRE_SHARED(path, std::string("models/vocab/ggml-vocab-") + GetParam() + ".gguf");
  const engine::Tokenizer& tok = tokenizer_of(path);
  for (const auto& v : read_vectors(path)) {
    EXPECT_EQ(tok.decode(v.ids), v.text) << GetParam() << ": " << ids_string(v.ids);
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, VocabVectors,
                         ::testing::Values("llama-spm", "phi-3", "gpt-2", "falcon", "starcoder", "deepseek-llm"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) c = (c == '-') ? '_' : c;
                           return name;
                         });

TEST(VocabVectors, WordPieceIsReportedUnsupported) {
  ENGINE_REQUIRE_SHARED(path, "models/vocab/ggml-vocab-bert-bge.gguf");
  const gguf::File file = gguf::File::open(path.string());
  try {
    engine::Tokenizer::from_gguf(file);
    FAIL() << "bert vocabulary accepted";
  } catch (const engine::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ggml-vocab-bert-bge.gguf"), std::string::npos) << what;
    EXPECT_NE(what.find("tokenizer.ggml.model"), std::string::npos) << what;
    EXPECT_NE(what.find("'bert' (WordPiece) vocabularies are not supported"), std::string::npos) << what;
  }
}

}  // namespace
