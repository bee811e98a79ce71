// The grammar token mask on a 150k-token vocabulary (Qwen's size): the time
// TokenTrie::allowed takes at points of a JSON grammar where few tokens fit
// (an object's start), many (inside a string: nearly all), and some (a
// number). The vocabulary is synthetic, shaped like a byte-level BPE one:
// every single byte, then pieces of 2-12 bytes, most of them letters with a
// leading space, some digits and punctuation, 5% CJK; no ../shared needed.
//
//   grammar_bench                      # all states
//   grammar_bench --benchmark_filter=string
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/grammar/gbnf.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/token_mask.h"

namespace {

constexpr size_t kVocab = 151936;

const char* kJson = R"(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= "-"? [0-9]+ ("." [0-9]+)? ([eE] [-+]? [0-9]+)? ws
ws ::= | " " | "\n" [ \t]{0,20}
)";

std::vector<std::string> vocabulary() {
  std::vector<std::string> v;
  for (int b = 0; b < 256; ++b) v.push_back(std::string(1, static_cast<char>(b)));
  std::mt19937 rng(7);
  const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const std::string punct = "{}[]\":,.-_()<>/\\'!?;=+*#";
  while (v.size() < kVocab) {
    std::string s;
    const unsigned kind = rng() % 100;
    const size_t len = 2 + rng() % 11;
    if (kind < 5) {
      for (size_t i = 0; i < 1 + len / 4; ++i) {  // CJK: U+4E00.. as 3 bytes
        const uint32_t cp = 0x4E00 + rng() % 0x5000;
        s += static_cast<char>(0xE0 | (cp >> 12));
        s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (cp & 0x3F));
      }
    } else if (kind < 15) {
      for (size_t i = 0; i < len; ++i) s += static_cast<char>('0' + rng() % 10);
    } else if (kind < 25) {
      for (size_t i = 0; i < len; ++i) s += punct[rng() % punct.size()];
    } else {
      if (kind < 80) s += ' ';
      for (size_t i = 0; i < len; ++i) s += letters[rng() % letters.size()];
    }
    v.push_back(s);
  }
  return v;
}

struct Fixture {
  engine::grammar::Grammar g = engine::grammar::parse_gbnf(kJson);
  std::vector<std::string> vocab = vocabulary();
  engine::grammar::TokenTrie trie{vocab};
};
Fixture& fixture() {
  static Fixture f;
  return f;
}

// warm: the grammar's parse states already met (every mask after the first
// at a place the generation has been before); cold: a fresh ParseStates each
// time, so every transition of the walk is worked out (the first mask of a
// generation at that place).
void mask_after(benchmark::State& state, const char* text, bool warm) {
  Fixture& f = fixture();
  auto states = std::make_unique<engine::grammar::ParseStates>(f.g);
  engine::grammar::TokenBits allowed;
  size_t n = 0;
  for (auto _ : state) {
    if (!warm) states = std::make_unique<engine::grammar::ParseStates>(f.g);
    engine::grammar::GrammarMatcher m(*states);
    if (!m.accept_bytes(text)) {
      state.SkipWithError("the text leaves the grammar");
      return;
    }
    n = f.trie.allowed(m, allowed);
    benchmark::DoNotOptimize(allowed.data());
  }
  state.counters["allowed"] = static_cast<double>(n);
  state.counters["trie_nodes"] = static_cast<double>(f.trie.n_nodes());
  state.counters["parse_states"] = static_cast<double>(states->n_sets());
}

#define MASK_BENCHMARK(name, text)                                                  \
  BENCHMARK_CAPTURE(mask_after, name##_warm, text, true)->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(mask_after, name##_cold, text, false)->Unit(benchmark::kMillisecond)

MASK_BENCHMARK(object_start, "");
MASK_BENCHMARK(string, "{\"name\": \"ab");
MASK_BENCHMARK(number, "{\"n\": 12");
MASK_BENCHMARK(after_value, "{\"n\": 12, \"s\": \"x\"");

}  // namespace

BENCHMARK_MAIN();
