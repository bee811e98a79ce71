// The Unicode layer and the pre-tokenizers without a test-vector vocabulary
// here (llama3, qwen2, deepseek-coder, default): splits checked against the
// tokenizer.json regexes evaluated with Python's `regex` module.
#include <gtest/gtest.h>

#include "engine/tokenizer/pretokenizer.h"
#include "engine/tokenizer/unicode.h"

namespace {

namespace td = engine::tokenizer_detail;
namespace uc = engine::unicode;

TEST(Unicode, Classes) {
  EXPECT_TRUE(uc::is_letter('a'));
  EXPECT_TRUE(uc::is_letter(0x00E9));   // é
  EXPECT_TRUE(uc::is_letter(0x6211));   // 我
  EXPECT_TRUE(uc::is_letter(0x1E900));  // Adlam
  EXPECT_FALSE(uc::is_letter('1'));
  EXPECT_TRUE(uc::is_number('7'));
  EXPECT_TRUE(uc::is_number(0x00BD));  // ½ (No)
  EXPECT_TRUE(uc::is_number(0x0661));  // Arabic-Indic one
  EXPECT_TRUE(uc::classify('!').is_punctuation());
  EXPECT_TRUE(uc::classify(0x3001).is_punctuation());  // 、
  EXPECT_EQ(uc::classify('+').category, uc::Category::symbol);
  EXPECT_EQ(uc::classify(0x1F601).category, uc::Category::symbol);  // 😁
  EXPECT_EQ(uc::classify(0x0301).category, uc::Category::mark);
  EXPECT_EQ(uc::classify(0x200D).category, uc::Category::control);  // ZWJ is Cf
  EXPECT_EQ(uc::classify(0x0378).category, uc::Category::undefined);
  EXPECT_EQ(uc::classify(0x110000).category, uc::Category::undefined);
  for (uint32_t ws : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x1680u, 0x2000u, 0x200Au, 0x2028u,
                      0x2029u, 0x202Fu, 0x205Fu, 0x3000u}) {
    EXPECT_TRUE(uc::is_whitespace(ws)) << std::hex << ws;
  }
  for (uint32_t not_ws : {0x1Cu, 0x1Fu, 0x200Bu, 0xFEFFu, 0x61u}) EXPECT_FALSE(uc::is_whitespace(not_ws)) << not_ws;
  EXPECT_STRNE(uc::data_version(), "");
}

TEST(Unicode, Utf8Decoding) {
  using K = uc::Utf8Step;
  auto step = [](std::string_view s) { return uc::decode_utf8(s, 0); };
  EXPECT_EQ(step("A").kind, K::complete);
  EXPECT_EQ(step("\xC3\xA9").cp, 0xE9u);
  EXPECT_EQ(step("\xF0\x9F\x98\x81").cp, 0x1F601u);
  EXPECT_EQ(step("\xF0\x9F\x98").kind, K::incomplete);
  EXPECT_EQ(step("\xF0\x9F\x98").length, 3);
  EXPECT_EQ(step("\xC0\x80").kind, K::invalid);      // overlong
  EXPECT_EQ(step("\xE0\x80\x80").kind, K::invalid);  // overlong
  EXPECT_EQ(step("\xED\xA0\x80").kind, K::invalid);  // surrogate
  EXPECT_EQ(step("\xF4\x90\x80\x80").kind, K::invalid);  // above U+10FFFF
  EXPECT_EQ(step("\x80").kind, K::invalid);
  EXPECT_EQ(step("\xE2\x82" "A").kind, K::invalid);
  EXPECT_EQ(step("\xE2\x82" "A").length, 2);  // the maximal ill-formed subpart
}

TEST(Unicode, Gpt2ByteAlphabet) {
  EXPECT_EQ(uc::byte_to_codepoint('A'), static_cast<uint32_t>('A'));
  EXPECT_EQ(uc::byte_to_codepoint(' '), 0x120u);   // Ġ
  EXPECT_EQ(uc::byte_to_codepoint('\n'), 0x10Au);  // Ċ
  EXPECT_EQ(uc::byte_to_codepoint(0xAD), 0x143u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(uc::codepoint_to_byte(uc::byte_to_codepoint(static_cast<uint8_t>(b))), b);
  EXPECT_EQ(uc::codepoint_to_byte(0x144), -1);
  EXPECT_EQ(uc::codepoint_to_byte(0x20), -1);
}

struct SplitCase {
  const char* pre;
  std::string text;
  std::vector<std::string> words;
};

// Expected words: the regexes llama.cpp lists for each pre-tokenizer, applied
// in sequence with Python's `regex` module.
const SplitCase kCases[] = {
    {"llama3", "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～", {"Hello", ",", " y", "'all", "!", " How", " are", " you", " 😁", " ?", "我想在apple工作", "131", "415", "1", "天", "～"}},
    {"llama3", "It'S I'LL we'Re", {"It", "'S", " I", "'LL", " we", "'Re"}},
    {"llama3", "x  \r\n  y\n\n", {"x", "  \r\n", " ", " y", "\n\n"}},
    {"llama3", "  ?!  3333333", {" ", " ?!", " ", " ", "333", "333", "3"}},
    {"qwen2", "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～", {"Hello", ",", " y", "'all", "!", " How", " are", " you", " 😁", " ?", "我想在apple工作", "1", "3", "1", "4", "1", "5", "1", "天", "～"}},
    {"qwen2", "x  \r\n  y\n\n", {"x", "  \r\n", " ", " y", "\n\n"}},
    {"qwen2", "12345 abc", {"1", "2", "3", "4", "5", " abc"}},
    {"deepseek-coder", "Hello, world! 123 中文 한국어", {"Hello", ",", " world", "!", " ", "1", "2", "3", " ", "中文", " ", "한국어"}},
    {"deepseek-coder", "a\nb\r\nc  d", {"a", "\n", "b", "\r", "\n", "c", " ", " d"}},
    {"default", "Hello, world!! 1234567 $x+=y", {"Hello", ",", " world", "!!", " ", "123", "456", "7", " ", "$", "x", "+=", "y"}},
    {"default", "don't stop", {"don", "'", "t", " stop"}},
    {"gpt-2", "It's 'tis I'VE  x  ", {"It", "'s", " '", "tis", " I", "'", "VE", " ", " x", "  "}},
    {"gpt-2", " \t\n  a", {" \t\n ", " a"}},
};

std::vector<std::string> split(td::PreTokenizer pre, std::string_view text) {
  const td::DecodedText d = td::decode_for_split(text);
  std::vector<std::string> words;
  for (const td::UnitSpan& w : td::pre_tokenize(pre, d)) {
    words.emplace_back(text.substr(d.offsets[w.begin], d.offsets[w.end] - d.offsets[w.begin]));
  }
  return words;
}

td::PreTokenizer family(std::string_view name) {
  for (const td::PreTokenizerName& n : td::pre_tokenizer_names()) {
    if (n.name == name) return n.pre;
  }
  ADD_FAILURE() << "no pre-tokenizer " << name;
  return td::PreTokenizer::default_bpe;
}

TEST(PreTokenizer, SplitsLikeTheReferenceRegexes) {
  for (const SplitCase& c : kCases) {
    EXPECT_EQ(split(family(c.pre), c.text), c.words) << c.pre << ": '" << c.text << "'";
  }
}

// Every family covers every byte of any input exactly once, in order.
TEST(PreTokenizer, WordsCoverArbitraryBytes) {
  const std::string inputs[] = {std::string("\0a\xFF\xC3 b\xE2\x82\n\n", 11), std::string(2000, ' ') + "x",
                                "\xF0\x9F\x98 \xF0\x9F\x98\x81\xF0"};
  for (const td::PreTokenizerName& n : td::pre_tokenizer_names()) {
    for (const std::string& in : inputs) {
      std::string joined;
      for (const std::string& w : split(n.pre, in)) {
        EXPECT_FALSE(w.empty()) << n.name;
        joined += w;
      }
      EXPECT_EQ(joined, in) << n.name;
    }
  }
}

}  // namespace
