// The tokenizer on a real model (stories260K: prompt ids and the documented
// greedy text), streaming detokenization, special tokens, and input that is not
// clean UTF-8.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "engine/support/error.h"
#include "tests/support/shared_data.h"
#include "tests/tokenizer/test_util.h"

namespace {

using tokenizer_test::ids_string;
using tokenizer_test::is_valid_utf8;
using tokenizer_test::read_file;
using tokenizer_test::tokenizer_of;

// Values from ../shared/models/expected/stories260K.expected.json (the
// llama.cpp server tests' prompts; ids derived with the reference tokenizer).
struct PromptIds {
  const char* prompt;
  std::vector<int32_t> ids_with_bos;
};
const PromptIds kStoriesPrompts[] = {
    {"Once upon a time", {1, 403, 407, 261, 378}},
    {"I believe the meaning of life is",
     {1, 359, 329, 421, 417, 411, 360, 265, 284, 411, 303, 299, 373, 397, 431, 411, 410, 293}},
    {"Write a joke about AI from a very long prompt which will not be truncated",
     {1,   410, 448, 420, 275, 411, 261, 410, 449, 414, 354, 261, 430, 408, 410, 447,
      442, 272, 420, 287, 261, 399, 278, 289, 428, 282, 420, 287, 427, 413, 263, 415,
      417, 402, 263, 290, 421, 297, 309, 329, 259, 420, 379, 429, 294, 266}},
    {"What is the capital of France?",
     {1, 410, 448, 415, 294, 410, 293, 265, 280, 412, 427, 275, 412, 421, 373, 410, 453, 420, 303, 331, 450}},
    {"What is the capital of Germany?",
     {1, 410, 448, 415, 294, 410, 293, 265, 280, 412, 427, 275, 412, 421, 373, 410, 463, 285, 423, 303, 422, 450}},
};

TEST(Stories260K, VocabularyFacts) {
  const std::filesystem::path path = ::engine_test::default_model();
  const engine::Tokenizer& tok = tokenizer_of(path);
  EXPECT_EQ(tok.n_vocab(), 512);
  EXPECT_EQ(tok.bos(), 1);
  EXPECT_EQ(tok.eos(), 2);
  EXPECT_TRUE(tok.add_bos());  // SentencePiece default: the file has no add_bos_token
  EXPECT_FALSE(tok.add_eos());
  EXPECT_TRUE(tok.is_end_of_generation(2));
  EXPECT_FALSE(tok.is_end_of_generation(1));
  EXPECT_FALSE(tok.is_end_of_generation(403));
  EXPECT_TRUE(tok.is_control(1));
  EXPECT_EQ(tok.model_name(), "spm");
}

TEST(Stories260K, PromptIds) {
  const std::filesystem::path path = ::engine_test::default_model();
  const engine::Tokenizer& tok = tokenizer_of(path);
  for (const PromptIds& p : kStoriesPrompts) {
    EXPECT_EQ(ids_string(tok.encode(p.prompt, true, false)), ids_string(p.ids_with_bos)) << p.prompt;
    EXPECT_EQ(tok.decode(p.ids_with_bos), p.prompt);
  }
  // The llama.cpp server README: 'á' (C3 A1) is spelled with byte-fallback tokens, id = byte + 3.
  const std::vector<int32_t> ids = tok.encode("\xC3\xA1", false, false);
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[ids.size() - 2], 0xC3 + 3);
  EXPECT_EQ(ids[ids.size() - 1], 0xA1 + 3);
}

// The ids of the documented greedy run decode, token by token, to the
// documented text (llama2.c's expected output).
TEST(Stories260K, GreedyTextDecodes) {
  const std::filesystem::path path = ::engine_test::default_model();
  ENGINE_REQUIRE_SHARED(expected, "models/expected/stories260K.expected.json");
  const std::string json = read_file(expected);
  // Two values of the JSON file, found by key (each key occurs once).
  const size_t ids_key = json.find("\"greedy_from_bos_200_token_ids\"");
  ASSERT_NE(ids_key, std::string::npos);
  std::vector<int32_t> ids;
  {
    std::istringstream list(json.substr(json.find('[', ids_key) + 1, json.find(']', ids_key) - json.find('[', ids_key) - 1));
    std::string item;
    while (std::getline(list, item, ',')) ids.push_back(std::stoi(item));
  }
  ASSERT_EQ(ids.size(), 200u);
  const size_t text_key = json.find("\"greedy_from_bos_200_steps_text\"");
  ASSERT_NE(text_key, std::string::npos);
  std::string text;  // the JSON string, unescaped (\" \\ \n are all it uses)
  for (size_t i = json.find('"', json.find(':', text_key)) + 1; i < json.size() && json[i] != '"'; ++i) {
    if (json[i] == '\\' && i + 1 < json.size()) {
      ++i;
      text += json[i] == 'n' ? '\n' : json[i];
    } else {
      text += json[i];
    }
  }
  ASSERT_TRUE(text.starts_with("Once upon a time, there was a little girl named Lily."));

  const engine::Tokenizer& tok = tokenizer_of(path);
  engine::Tokenizer::StreamDecoder decoder = tok.stream_decoder();
  std::string streamed = decoder.push(tok.bos());  // generation starts after BOS
  for (int32_t id : ids) streamed += decoder.push(id);
  streamed += decoder.flush();
  EXPECT_EQ(streamed, text);
}

TEST(Stories260K, SpecialTokensParsedOnlyWhenAsked) {
  const std::filesystem::path path = ::engine_test::default_model();
  const engine::Tokenizer& tok = tokenizer_of(path);
  const std::vector<int32_t> parsed = tok.encode("Hi</s><s>Hi", false, true);
  // SentencePiece puts a space before the text and after each special token.
  const std::vector<int32_t> hi = tok.encode("Hi", false, false);
  std::vector<int32_t> expected = hi;
  expected.push_back(2);
  expected.push_back(1);
  expected.insert(expected.end(), hi.begin(), hi.end());
  EXPECT_EQ(ids_string(parsed), ids_string(expected));
  const std::vector<int32_t> plain = tok.encode("Hi</s><s>Hi", false, false);
  for (int32_t id : plain) EXPECT_FALSE(tok.is_control(id)) << ids_string(plain);
  EXPECT_EQ(tok.decode(plain), "Hi</s><s>Hi");
  // Control tokens are not text; render_special shows them.
  EXPECT_EQ(tok.token_piece(2), "");
  EXPECT_EQ(tok.token_piece(2, true), "</s>");
  EXPECT_EQ(tok.decode(parsed), "Hi Hi");  // the space SentencePiece added after the special tokens
}

TEST(Tokenizer, SpecialTokensInByteLevelBpe) {
  ENGINE_REQUIRE_SHARED(path, "models/vocab/ggml-vocab-gpt-2.gguf");
  const engine::Tokenizer& tok = tokenizer_of(path);
  EXPECT_EQ(ids_string(tok.encode("Hello<|endoftext|> world", false, true)), "15496 50256 995");
  const std::vector<int32_t> plain = tok.encode("Hello<|endoftext|> world", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 50256), 0) << ids_string(plain);
  EXPECT_EQ(tok.decode(plain), "Hello<|endoftext|> world");
  EXPECT_TRUE(tok.is_end_of_generation(50256));
  EXPECT_FALSE(tok.add_bos());  // byte-level BPE default
  EXPECT_EQ(tok.pre_tokenizer(), "gpt-2");
}

// User-defined tokens (added, non-special) are split off even without
// parse_special, as HF tokenizers and llama.cpp do.
TEST(Tokenizer, UserDefinedTokensAlwaysMatch) {
  ENGINE_REQUIRE_SHARED(path, "models/vocab/ggml-vocab-deepseek-llm.gguf");
  const engine::Tokenizer& tok = tokenizer_of(path);
  ASSERT_EQ(tok.token_text(102396), "[PAD102396]");
  const std::vector<int32_t> ids = tok.encode("a[PAD102396]b", false, false);
  EXPECT_NE(std::find(ids.begin(), ids.end(), 102396), ids.end()) << ids_string(ids);
  EXPECT_EQ(tok.decode(ids), "a[PAD102396]b");
  // Control tokens are plain text unless parsing is asked for.
  const std::string bos_text(tok.token_text(tok.bos()));
  EXPECT_EQ(ids_string(tok.encode(bos_text, false, true)), std::to_string(tok.bos()));
  EXPECT_GT(tok.encode(bos_text, false, false).size(), 1u);
}

// A character split across tokens comes out whole, never as broken bytes.
TEST(StreamDecoder, HoldsSplitCharactersUntilComplete) {
  const std::filesystem::path path = ::engine_test::default_model();
  const engine::Tokenizer& tok = tokenizer_of(path);
  // "x😁y" spelled with byte fallback: 😁 is F0 9F 98 81.
  const std::string text = "x\xF0\x9F\x98\x81y";
  const std::vector<int32_t> ids = tok.encode(text, false, false);
  engine::Tokenizer::StreamDecoder decoder = tok.stream_decoder();
  std::vector<std::string> outputs;
  for (int32_t id : ids) outputs.push_back(decoder.push(id));
  outputs.push_back(decoder.flush());
  std::string joined;
  for (const std::string& o : outputs) {
    EXPECT_TRUE(is_valid_utf8(o)) << ids_string(ids);
    joined += o;
  }
  EXPECT_EQ(joined, text);
  EXPECT_TRUE(std::find(outputs.begin(), outputs.end(), "\xF0\x9F\x98\x81") != outputs.end() ||
              std::find(outputs.begin(), outputs.end(), "\xF0\x9F\x98\x81y") != outputs.end());
}

TEST(StreamDecoder, ByteLevelPiecesOfOneCharacter) {
  ENGINE_REQUIRE_SHARED(path, "models/vocab/ggml-vocab-gpt-2.gguf");
  const engine::Tokenizer& tok = tokenizer_of(path);
  const std::string text = " this is 🦙.cpp 😶‍🌫️ 我想在apple工作";
  const std::vector<int32_t> ids = tok.encode(text, false, false);
  engine::Tokenizer::StreamDecoder decoder = tok.stream_decoder();
  std::string joined;
  size_t held = 0;
  for (int32_t id : ids) {
    const std::string out = decoder.push(id);
    EXPECT_TRUE(is_valid_utf8(out));
    held += !tok.token_piece(id).empty() && out.empty();
    joined += out;
  }
  joined += decoder.flush();
  EXPECT_EQ(joined, text);
  EXPECT_GT(held, 0u) << "no token split a character: the test text does not test streaming";
}

TEST(StreamDecoder, IllFormedBytesBecomeReplacementCharacters) {
  const std::filesystem::path path = ::engine_test::default_model();
  const engine::Tokenizer& tok = tokenizer_of(path);
  const auto byte = [](int b) { return b + 3; };  // stories260K: <0xNN> is id NN + 3
  const std::string fffd = "\xEF\xBF\xBD";
  {
    engine::Tokenizer::StreamDecoder d = tok.stream_decoder();
    EXPECT_EQ(d.push(byte(0xFF)), fffd);  // never valid
    EXPECT_EQ(d.push(byte(0xC3)), "");    // waits for its continuation
    EXPECT_EQ(d.push(byte('A')), fffd + "A");
    EXPECT_EQ(d.push(byte(0xE2)), "");
    EXPECT_EQ(d.push(byte(0x82)), "");
    EXPECT_EQ(d.flush(), fffd);  // the stream ended inside a character
    EXPECT_EQ(d.flush(), "");
  }
  {
    engine::Tokenizer::StreamDecoder d = tok.stream_decoder();
    EXPECT_EQ(d.push(byte(0xED)), "");
    EXPECT_EQ(d.push(byte(0xA0)), fffd + fffd);  // a surrogate: ill-formed
    EXPECT_EQ(d.push(byte(0xC0)), fffd);          // overlong lead byte
  }
  EXPECT_THROW(tok.stream_decoder().push(512), engine::Error);
  EXPECT_THROW(tok.stream_decoder().push(-1), engine::Error);
  EXPECT_THROW(tok.token_piece(100000), engine::Error);
}

// Any bytes tokenize: ill-formed UTF-8, NULs, long inputs. Byte-level BPE
// keeps every byte, so its pieces give the input back exactly; SentencePiece
// does for UTF-8 text (it spells bad bytes with byte tokens too, but its "▁"
// escaping can land inside an ill-formed sequence, as in the reference).
TEST(Tokenizer, ArbitraryBytesRoundTrip) {
  ENGINE_REQUIRE_SHARED(spm_path, "models/vocab/ggml-vocab-llama-spm.gguf");
  ENGINE_REQUIRE_SHARED(bpe_path, "models/vocab/ggml-vocab-gpt-2.gguf");
  std::mt19937 rng(7);
  std::vector<std::string> inputs = {
      std::string("\0\0a\0", 4), "\xFF\xFE\xC3", "\xE2\x82", "\xF4\x90\x80\x80 \xC0\x80 \xED\xA0\x80",
      "<s></s><unk>\xC3<|endoftext|>\x80", std::string(3000, ' ') + "x", std::string(5000, '\n'),
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\xA6\x99",
  };
  for (int n : {1, 2, 3, 17, 300, 20000}) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng() & 0xFF);
    inputs.push_back(s);
  }
  for (const auto& path : {spm_path, bpe_path}) {
    const engine::Tokenizer& tok = tokenizer_of(path);
    const bool spm = tok.model_name() == "spm";
    for (const std::string& in : inputs) {
      for (bool special : {false, true}) {
        const std::vector<int32_t> ids = tok.encode(in, false, special);
        for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok.n_vocab());
        const std::string back = tok.decode(ids);
        EXPECT_TRUE(is_valid_utf8(back));
        if (special) continue;
        if (is_valid_utf8(in)) {
          EXPECT_EQ(back, in) << path.filename();
        }
        if (!spm) {
          std::string raw;
          for (int32_t id : ids) raw += tok.token_piece(id);
          EXPECT_TRUE(raw == in) << path.filename() << " " << ids_string(ids);
        }
      }
    }
  }
}

TEST(Tokenizer, EmptyTextAndBos) {
  ENGINE_REQUIRE_SHARED(path, "models/vocab/ggml-vocab-gpt-2.gguf");
  const engine::Tokenizer& tok = tokenizer_of(path);
  EXPECT_TRUE(tok.encode("", false, false).empty());
  EXPECT_EQ(ids_string(tok.encode("", true, false)), "50256");
  EXPECT_EQ(tok.decode({}), "");
}

}  // namespace
