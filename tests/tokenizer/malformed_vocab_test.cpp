// Broken and unsupported vocabularies give an engine::Error naming the file
// and the key, never a crash. Each case writes a small GGUF with gguf::Writer.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "engine/support/error.h"
#include "engine/support/log.h"
#include "engine/tokenizer/tokenizer.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;

// A small valid byte-level BPE vocabulary: the 256 byte characters plus a few
// merged tokens.
void write_bpe(gguf::Writer& w) {
  std::vector<std::string> tokens;  // token b is byte b
  uint32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    const uint32_t cp = printable ? static_cast<uint32_t>(b) : next++;
    std::string s;
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    tokens.push_back(s);
  }
  tokens.push_back("he");
  tokens.push_back("ll");
  tokens.push_back("hell");
  tokens.push_back("<|endoftext|>");
  const std::vector<std::string> merges = {"h e", "l l", "he ll"};
  std::vector<int32_t> types(tokens.size(), 1);
  types.back() = 3;
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", "gpt-2");
  w.set_array_strings("tokenizer.ggml.tokens", tokens);
  w.set_array_i32("tokenizer.ggml.token_type", types);
  w.set_array_strings("tokenizer.ggml.merges", merges);
  w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(tokens.size() - 1));
}

// A small valid SentencePiece vocabulary with byte fallback.
void write_spm(gguf::Writer& w) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    tokens.push_back(buf);
    types.push_back(6);
  }
  for (const char* t : {"\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab"}) {
    tokens.push_back(t);
    types.push_back(1);
  }
  std::vector<float> scores(tokens.size(), 0.0f);
  scores[scores.size() - 2] = -1.0f;
  scores[scores.size() - 1] = -2.0f;
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_array_strings("tokenizer.ggml.tokens", tokens);
  w.set_array_f32("tokenizer.ggml.scores", scores);
  w.set_array_i32("tokenizer.ggml.token_type", types);
}

class MalformedVocab : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = engine_test::temp_dir("tokenizer-vocab"); }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes the vocabulary (base, then `edit`) and loads it.
  engine::Tokenizer load(const std::function<void(gguf::Writer&)>& base,
                         const std::function<void(gguf::Writer&)>& edit = {}) {
    gguf::Writer w;
    base(w);
    if (edit) edit(w);
    const std::string path = (dir_ / "vocab.gguf").string();
    w.write(path);
    const gguf::File file = gguf::File::open(path);
    return engine::Tokenizer::from_gguf(file);
  }

  // Expects load() to fail with a message naming the file, `key` and `what`.
  void expect_error(const std::function<void(gguf::Writer&)>& base, const std::function<void(gguf::Writer&)>& edit,
                    const std::string& key, const std::string& what) {
    try {
      load(base, edit);
      ADD_FAILURE() << "loaded; expected an error about " << key << ": " << what;
    } catch (const engine::Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("vocab.gguf"), std::string::npos) << msg;
      EXPECT_NE(msg.find(key), std::string::npos) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  }

  fs::path dir_;
};

TEST_F(MalformedVocab, ValidVocabulariesLoad) {
  const engine::Tokenizer bpe = load(write_bpe);
  EXPECT_EQ(bpe.n_vocab(), 260);
  EXPECT_EQ(bpe.encode("hello", false, false), (std::vector<int32_t>{258, 'o'}));
  EXPECT_EQ(bpe.decode(bpe.encode("hello \xFF\x01", false, false)), "hello \xEF\xBF\xBD\x01");
  EXPECT_EQ(bpe.encode("<|endoftext|>", false, true), (std::vector<int32_t>{259}));
  EXPECT_TRUE(bpe.is_end_of_generation(259));

  const engine::Tokenizer spm = load(write_spm);
  EXPECT_EQ(spm.bos(), 1);
  EXPECT_EQ(spm.eos(), 2);
  EXPECT_TRUE(spm.add_bos());
  // "▁ab": ▁a (-1) beats ab (-2); b has no merge left. "c" is spelled as a byte.
  EXPECT_EQ(spm.encode("abc", true, false), (std::vector<int32_t>{1, 262, 261, 'c' + 3}));
  EXPECT_EQ(spm.decode(spm.encode("abc", false, false)), "abc");
}

TEST_F(MalformedVocab, MissingOrUnsupportedModel) {
  expect_error(write_bpe, [](gguf::Writer& w) { w.remove("tokenizer.ggml.model"); }, "tokenizer.ggml.model",
               "missing");
  expect_error(write_bpe, [](gguf::Writer& w) { w.set_string("tokenizer.ggml.model", "bert"); },
               "tokenizer.ggml.model", "'bert' (WordPiece) vocabularies are not supported");
  expect_error(write_bpe, [](gguf::Writer& w) { w.set_string("tokenizer.ggml.model", "t5"); },
               "tokenizer.ggml.model", "'t5' is not a supported tokenizer");
  expect_error(write_bpe, [](gguf::Writer& w) { w.set_u32("tokenizer.ggml.model", 7); }, "tokenizer.ggml.model",
               "expected a string");
}

TEST_F(MalformedVocab, BadTokenList) {
  expect_error(write_spm, [](gguf::Writer& w) { w.remove("tokenizer.ggml.tokens"); }, "tokenizer.ggml.tokens",
               "missing");
  expect_error(write_spm, [](gguf::Writer& w) { w.set_array_strings("tokenizer.ggml.tokens", std::vector<std::string>{}); },
               "tokenizer.ggml.tokens", "empty");
  expect_error(write_spm, [](gguf::Writer& w) { w.set_array_i32("tokenizer.ggml.tokens", std::vector<int32_t>{1, 2}); },
               "tokenizer.ggml.tokens", "expected strings");
  expect_error(
      write_bpe,
      [](gguf::Writer& w) {
        w.set_array_strings("tokenizer.ggml.tokens", std::vector<std::string>{"a", "b", "a"});
        w.remove("tokenizer.ggml.token_type");
        w.set_array_strings("tokenizer.ggml.merges", std::vector<std::string>{});
      },
      "tokenizer.ggml.tokens", "tokens 0 and 2 are both 'a' (duplicate tokens)");
  expect_error(
      write_bpe,
      [](gguf::Writer& w) {
        w.set_array_strings("tokenizer.ggml.tokens", std::vector<std::string>{"a", "b\xFF"});
        w.remove("tokenizer.ggml.token_type");
      },
      "tokenizer.ggml.tokens", "token 1 'b\\xff' is not UTF-8");
}

TEST_F(MalformedVocab, ArraysOfTheWrongLength) {
  expect_error(write_spm, [](gguf::Writer& w) { w.set_array_f32("tokenizer.ggml.scores", std::vector<float>(5)); },
               "tokenizer.ggml.scores", "has 5 entries but tokenizer.ggml.tokens has 264");
  expect_error(write_spm, [](gguf::Writer& w) { w.set_array_i32("tokenizer.ggml.token_type", std::vector<int32_t>(300, 1)); },
               "tokenizer.ggml.token_type", "has 300 entries");
  expect_error(write_spm,
               [](gguf::Writer& w) { w.set_array_strings("tokenizer.ggml.scores", std::vector<std::string>(264, "x")); },
               "tokenizer.ggml.scores", "expected numbers");
  expect_error(write_spm, [](gguf::Writer& w) { w.set_string("tokenizer.ggml.token_type", "normal"); },
               "tokenizer.ggml.token_type", "expected an array");
  expect_error(
      write_spm,
      [](gguf::Writer& w) {
        std::vector<float> scores(264, 0.0f);
        scores[262] = NAN;
        w.set_array_f32("tokenizer.ggml.scores", scores);
      },
      "tokenizer.ggml.scores", "token 262 has the score NaN");
}

TEST_F(MalformedVocab, BadTokenTypes) {
  expect_error(
      write_spm,
      [](gguf::Writer& w) {
        std::vector<int32_t> types(264, 1);
        types[7] = 9;
        w.set_array_i32("tokenizer.ggml.token_type", types);
      },
      "tokenizer.ggml.token_type", "token 7 has type 9, expected 0..6");
  expect_error(
      write_spm,
      [](gguf::Writer& w) {
        std::vector<int32_t> types(264, 6);  // "<unk>" typed as a byte token
        w.set_array_i32("tokenizer.ggml.token_type", types);
      },
      "tokenizer.ggml.token_type", "token 0 '<unk>' has type byte (6) but is not of the form <0xNN>");
}

TEST_F(MalformedVocab, BadMerges) {
  expect_error(write_bpe, [](gguf::Writer& w) { w.remove("tokenizer.ggml.merges"); }, "tokenizer.ggml.merges",
               "missing");
  expect_error(write_bpe,
               [](gguf::Writer& w) { w.set_array_strings("tokenizer.ggml.merges", std::vector<std::string>{"h e", "hx"}); },
               "tokenizer.ggml.merges", "merge 1 'hx' is not two tokens separated by a space");
  expect_error(
      write_bpe,
      [](gguf::Writer& w) { w.set_array_strings("tokenizer.ggml.merges", std::vector<std::string>{"h e", "he zz"}); },
      "tokenizer.ggml.merges", "merge 1 'he zz' names 'zz', which is not a token");
}

TEST_F(MalformedVocab, PreTokenizer) {
  // Unknown: an error listing what is supported (another split gives other ids).
  expect_error(write_bpe, [](gguf::Writer& w) { w.set_string("tokenizer.ggml.pre", "tekken-9000"); },
               "tokenizer.ggml.pre", "'tekken-9000' is not a supported pre-tokenizer (supported: default, gpt-2");
  // Missing: the default split, with a warning (old files predate the key).
  std::vector<std::string> warnings;
  engine::set_log_sink(
      [](engine::LogLevel level, std::string_view message, void* user) {
        if (level == engine::LogLevel::warning) static_cast<std::vector<std::string>*>(user)->emplace_back(message);
      },
      &warnings);
  const engine::Tokenizer tok = load(write_bpe, [](gguf::Writer& w) { w.remove("tokenizer.ggml.pre"); });
  engine::set_log_sink(nullptr, nullptr);
  EXPECT_EQ(tok.pre_tokenizer(), "default");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("tokenizer.ggml.pre is missing"), std::string::npos) << warnings[0];
}

TEST_F(MalformedVocab, SpecialTokenIds) {
  // add_bos_token without a BOS token is an error; an id outside the vocabulary is ignored.
  expect_error(write_bpe, [](gguf::Writer& w) { w.set_bool("tokenizer.ggml.add_bos_token", true); },
               "tokenizer.ggml.add_bos_token", "is true but the vocabulary has no BOS token");
  const engine::Tokenizer tok = load(write_bpe, [](gguf::Writer& w) {
    w.set_u32("tokenizer.ggml.bos_token_id", 0xFFFFFFFFu);
    w.set_u32("tokenizer.ggml.eot_token_id", 100000);
  });
  EXPECT_EQ(tok.bos(), -1);
  EXPECT_THROW(tok.encode("x", true, false), engine::Error);
  expect_error(write_bpe, [](gguf::Writer& w) { w.set_string("tokenizer.ggml.bos_token_id", "1"); },
               "tokenizer.ggml.bos_token_id", "expected an integer");
}

}  // namespace
