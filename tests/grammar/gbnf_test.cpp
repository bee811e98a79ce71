// GBNF parsing (every construct of llama.cpp's grammar format, the errors it
// names) and matching (texts a grammar takes and refuses, code point by code
// point and as UTF-8 bytes split anywhere).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/grammar/gbnf.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/token_mask.h"
#include "tests/grammar/reference_matcher.h"

namespace {

using engine::grammar::Grammar;
using engine::grammar::GrammarError;
using engine::grammar::GrammarMatcher;
using engine::grammar::parse_gbnf;
using engine::grammar::ParseStates;
using engine::grammar::testing::ReferenceMatcher;

// Whether the whole text is a sentence of the grammar; the matcher and its
// plain twin must say the same.
bool matches(const Grammar& g, std::string_view text) {
  ParseStates states(g);
  GrammarMatcher m(states);
  ReferenceMatcher r(g);
  const bool fast = m.accept_bytes(text) && m.can_end();
  EXPECT_EQ(fast, r.accept_bytes(text) && r.can_end()) << text;
  return fast;
}
// Whether the text can begin a sentence.
bool prefix(const Grammar& g, std::string_view text) {
  ParseStates states(g);
  GrammarMatcher m(states);
  ReferenceMatcher r(g);
  const bool fast = m.accept_bytes(text);
  EXPECT_EQ(fast, r.accept_bytes(text)) << text;
  return fast;
}

TEST(Gbnf, LiteralsAlternativesAndRules) {
  const Grammar g = parse_gbnf(R"(root ::= greeting " " name
greeting ::= "hello" | "hi"   # a comment
name ::= "world" | "there"
)");
  EXPECT_TRUE(matches(g, "hello world"));
  EXPECT_TRUE(matches(g, "hi there"));
  EXPECT_FALSE(matches(g, "hi"));
  EXPECT_TRUE(prefix(g, "hi"));
  EXPECT_FALSE(prefix(g, "hey"));
  EXPECT_FALSE(matches(g, "hello world!"));
}

TEST(Gbnf, CharacterClassesAnyAndEscapes) {
  const Grammar g = parse_gbnf(R"(root ::= [a-z_] [^"\\]* "\n" . "\x41" "\u00e9" [\u4e00-\u9fff])");
  EXPECT_TRUE(matches(g, "ab\"c\n?A\xC3\xA9\xE4\xB8\xAD") == false);  // '"' is refused by [^"\\]
  EXPECT_TRUE(matches(g, "abc d\nxA\xC3\xA9\xE4\xB8\xAD"));
  EXPECT_FALSE(matches(g, "Abc\nxA\xC3\xA9\xE4\xB8\xAD"));  // uppercase first
  EXPECT_FALSE(matches(g, "a\nxA\xC3\xA9z"));                 // z is not in U+4E00..U+9FFF
}

TEST(Gbnf, Repetitions) {
  const Grammar g = parse_gbnf(R"(root ::= "a"{2,3} "b"{2} "c"{1,} "d"? "e"* ("f" | "g")+)");
  EXPECT_TRUE(matches(g, "aabbcf"));
  EXPECT_TRUE(matches(g, "aaabbcccdeeefgf"));
  EXPECT_FALSE(matches(g, "abbcf"));     // one a
  EXPECT_FALSE(matches(g, "aaaabbcf"));  // four a
  EXPECT_FALSE(matches(g, "aabcf"));     // one b
  EXPECT_FALSE(matches(g, "aabbf"));     // no c
  EXPECT_FALSE(matches(g, "aabbc"));     // no f or g
  EXPECT_FALSE(matches(g, "aabbcddf"));  // two d
}

TEST(Gbnf, GroupsSpanLinesAndAlternativesContinueAfterABar) {
  const Grammar g = parse_gbnf("root ::= (\n  \"x\"\n  \"y\"\n) |\n  \"z\"\n");
  EXPECT_TRUE(matches(g, "xy"));
  EXPECT_TRUE(matches(g, "z"));
  EXPECT_FALSE(matches(g, "x"));
}

// A JSON grammar as llama.cpp ships (recursion through value).
constexpr const char* kJson = R"(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
)";

TEST(Gbnf, RecursiveJsonLikeGrammar) {
  const Grammar g = parse_gbnf(kJson);
  EXPECT_TRUE(matches(g, R"({"a": [1, 2.5, {"b": null}], "c": "x\u00e9y"})"));
  EXPECT_TRUE(matches(g, "{}"));
  EXPECT_FALSE(matches(g, R"({"a": [1, 2,]})"));
  EXPECT_FALSE(matches(g, R"({"a" 1})"));
  EXPECT_TRUE(prefix(g, R"({"key": [tr)"));
  EXPECT_FALSE(prefix(g, R"({"key": [tx)"));
}

TEST(Gbnf, BytesSplitInsideACodePoint) {
  ParseStates states(parse_gbnf(R"(root ::= "\u00e9" "\u4e2d"+)"));
  GrammarMatcher m(states);
  EXPECT_TRUE(m.accept_bytes("\xC3"));
  EXPECT_FALSE(m.can_end());
  EXPECT_TRUE(m.accept_bytes("\xA9\xE4"));
  EXPECT_TRUE(m.accept_bytes("\xB8\xAD"));
  EXPECT_TRUE(m.can_end());
  EXPECT_TRUE(m.can_continue());
  // A refused byte leaves the matcher as it was.
  EXPECT_FALSE(m.accept_bytes("\xE4\xB8\xAE"));
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(m.accept_bytes("\xFF"));
  EXPECT_TRUE(m.accept_bytes("\xE4\xB8\xAD"));
}

// Only well-formed UTF-8 spells a code point: an overlong form of "a", a
// surrogate and a code point past U+10FFFF are refused by their first byte
// that rules them out, however permissive the grammar.
TEST(Gbnf, IllFormedUtf8IsRefused) {
  const Grammar g = parse_gbnf("root ::= .\n");
  EXPECT_TRUE(matches(g, "a"));
  EXPECT_TRUE(matches(g, "\xC3\xA9"));
  EXPECT_TRUE(matches(g, "\xF4\x8F\xBF\xBF"));  // U+10FFFF
  EXPECT_FALSE(prefix(g, "\xC1"));                // only overlong forms begin so
  EXPECT_FALSE(prefix(g, "\xE0\x80"));
  EXPECT_FALSE(prefix(g, "\xED\xA0"));            // U+D800..
  EXPECT_FALSE(prefix(g, "\xF4\x90"));            // U+110000..
  EXPECT_FALSE(prefix(g, "\xF5"));
  EXPECT_TRUE(prefix(g, "\xED\x9F"));             // U+D7C0..U+D7FF
  const Grammar letters = parse_gbnf("root ::= [a-z]+\n");
  EXPECT_FALSE(prefix(letters, "\xC1\xA1"));  // "a", overlong
  EXPECT_FALSE(prefix(letters, "\xE0"));       // a three-byte form is U+0800 or more
}

TEST(Gbnf, ErrorsNameTheProblemAndWhere) {
  auto error = [](std::string_view text) -> std::string {
    try {
      parse_gbnf(text);
    } catch (const GrammarError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error("root ::= \"a\" b\n"), "grammar: line 1, column 14: rule 'b' is used but not defined");
  EXPECT_EQ(error("root ::= \"a\"\nroot ::= \"b\"\n"), "grammar: line 2, column 1: rule 'root' is defined twice");
  EXPECT_EQ(error("start ::= \"a\"\n"), "grammar: no rule 'root' (the start rule)");
  EXPECT_EQ(error("root ::= \"abc\n"), "grammar: line 1, column 10: unterminated string");
  EXPECT_EQ(error("root ::= [ab"), "grammar: line 1, column 10: unterminated character class");
  EXPECT_EQ(error("root ::= [z-a]\n"), "grammar: line 1, column 10: a character range whose end is before its start");
  EXPECT_EQ(error("root = \"a\"\n"), "grammar: line 1, column 6: expected '::=' after the rule name 'root'");
  EXPECT_EQ(error("root ::= \"a\"{3,2}\n"), "grammar: line 1, column 18: a repetition {m,n} with n < m");
  EXPECT_EQ(error("root ::= \"\\q\"\n"), "grammar: line 1, column 11: unknown escape '\\q'");
  EXPECT_EQ(error("root ::= (\"a\"\n"), "grammar: line 1, column 10: unclosed '('");
  EXPECT_EQ(error("root ::= expr\nexpr ::= expr \"+\" \"1\" | \"1\"\n"),
            "grammar: rule 'expr' is left-recursive (it can reach itself before matching anything)");
  EXPECT_EQ(error("root ::= \"a\"{20000}\n"), "grammar: line 1, column 18: a repetition count over 10000");
  // A repetition of a repetition multiplies: refused before it copies 10^8 elements.
  EXPECT_EQ(error("root ::= \"a\"{10000}{10000}\n"),
            "grammar: line 1, column 20: repetitions unroll to more than 4194304 grammar elements (a repetition of a "
            "repetition?)");
  EXPECT_NO_THROW(parse_gbnf("root ::= \"a\"{100}{100}\n"));
  // Right recursion is fine.
  EXPECT_TRUE(matches(parse_gbnf("root ::= \"1\" (\"+\" root)?\n"), "1+1+1"));
}

TEST(Gbnf, AnotherStartRule) {
  const Grammar g = parse_gbnf("root ::= \"a\"\nother ::= \"b\"\n", "other");
  EXPECT_TRUE(matches(g, "b"));
  EXPECT_FALSE(matches(g, "a"));
}

}  // namespace

// The token mask against the brute force (each token's bytes through a copy
// of the matcher), over a vocabulary of every single byte, multi-byte pieces
// (some ending inside a code point) and random ASCII pieces, at several
// points of a JSON-like grammar.
namespace {

std::vector<std::string> test_vocabulary() {
  std::vector<std::string> v;
  v.emplace_back();  // a control token: never allowed
  for (int b = 0; b < 256; ++b) v.push_back(std::string(1, static_cast<char>(b)));
  for (const char* s : {"\xC3\xA9", "\xC3", "\xE4\xB8", "\xE4\xB8\xAD", "\xA9\"", "{\"", "\":", "\": ", "true", "tr",
                        "null", "123", "1.5e", "\"}", "]}", "[1,", "\\u00", "\\n"}) {
    v.emplace_back(s);
  }
  uint32_t x = 12345;
  const std::string alphabet = "abc{}[]\":, 0123456789.-truefalsn\\";
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    const int len = 1 + static_cast<int>((x = x * 1103515245u + 12345u) >> 16) % 6;
    for (int j = 0; j < len; ++j) s += alphabet[((x = x * 1103515245u + 12345u) >> 16) % alphabet.size()];
    v.push_back(s);
  }
  return v;
}

TEST(TokenMask, EqualsTheBruteForceAtEveryStep) {
  const Grammar g = parse_gbnf(kJson);
  const std::vector<std::string> vocab = test_vocabulary();
  const engine::grammar::TokenTrie trie(vocab);
  ASSERT_EQ(trie.n_tokens(), vocab.size());
  ParseStates states(g);
  GrammarMatcher m(states);
  ReferenceMatcher ref(g);
  engine::grammar::TokenBits allowed;
  const std::string text = "{\"k\xC3\xA9y\": [1.5e3, true, {\"a\": null}], \"s\": \"x\\n\"}";
  for (size_t i = 0; i <= text.size(); ++i) {
    SCOPED_TRACE("after " + std::to_string(i) + " bytes");
    const size_t n = trie.allowed(m, allowed);
    size_t count = 0;
    for (size_t id = 0; id < vocab.size(); ++id) {
      ReferenceMatcher copy = ref;
      const bool brute = !vocab[id].empty() && copy.accept_bytes(vocab[id]);
      ASSERT_EQ(engine::grammar::token_bit(allowed, id), brute) << "token " << id << " '" << vocab[id] << "'";
      count += brute ? 1 : 0;
    }
    EXPECT_EQ(n, count);
    EXPECT_GT(n, 0u);
    if (i < text.size()) {
      ASSERT_TRUE(m.accept_bytes(text.substr(i, 1)));
      ASSERT_TRUE(ref.accept_bytes(text.substr(i, 1)));
    }
  }
  EXPECT_TRUE(m.can_end());
}

// Random byte walks through three grammars: at each step a byte from an
// alphabet that can both continue and break the text; the matcher must take
// exactly the bytes its plain twin takes and agree on whether it can end.
TEST(GrammarMatcher, AgreesWithThePlainStackCopyingMatcherOnRandomWalks) {
  const char* grammars[] = {
      kJson,
      R"(root ::= "a"{2,3} ("b" | "bc")* [^x]? "\u00e9"+ "d")",
      "root ::= item (\",\" item)*\nitem ::= [0-9]+ | \"(\" root \")\" | \"\\u4e2d\"\n",
  };
  const std::string alphabet = "abcdx{}[]\":, 0123456789.-eE+truefalsn\\()\xC3\xA9\xE4\xB8\xAD\xFF";
  uint32_t x = 99;
  size_t total_length = 0;
  auto next = [&] { return (x = x * 1103515245u + 12345u) >> 16; };
  for (const char* text : grammars) {
    const Grammar g = parse_gbnf(text);
    for (int walk = 0; walk < 40; ++walk) {
      ParseStates states(g);
      GrammarMatcher m(states);
      ReferenceMatcher r(g);
      std::string so_far;
      for (int step = 0; step < 200; ++step) {
        // Up to 20 tries for a byte that goes on, so the walks get deep.
        for (int attempt = 0; attempt < 20; ++attempt) {
          const char b = alphabet[next() % alphabet.size()];
          const bool took = r.accept_bytes(std::string_view(&b, 1));
          ASSERT_EQ(m.accept_byte(static_cast<uint8_t>(b)), took) << text << "\nafter '" << so_far << "' byte " << int(b);
          ASSERT_EQ(m.can_end(), r.can_end()) << so_far;
          ASSERT_EQ(m.can_continue(), r.can_continue()) << so_far;
          if (took) {
            so_far += b;
            break;
          }
        }
      }
      total_length += so_far.size();
    }
  }
  EXPECT_GT(total_length, 3 * 40 * 50u);  // the walks went well into the grammars
}

// A repetition loops through the same few states: a 10 000-character string
// value reaches no more stack sets than a 10-character one.
TEST(GrammarMatcher, ARepetitionLoopsInAFixedNumberOfStates) {
  ParseStates states(parse_gbnf(kJson));
  auto sets_after = [&](size_t length) {
    GrammarMatcher m(states);
    EXPECT_TRUE(m.accept_bytes("{\"k\": \"" + std::string(length, 'x') + "\"}"));
    EXPECT_TRUE(m.can_end());
    EXPECT_LE(m.n_stacks(), 4u);
    return states.n_sets();
  };
  const size_t short_string = sets_after(10);
  EXPECT_EQ(sets_after(10000), short_string);
}

}  // namespace
