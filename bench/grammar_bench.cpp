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
#include <unordered_map>
#include <vector>

#include "engine/grammar/gbnf.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/token_constraint.h"
#include "engine/grammar/token_mask.h"
#include "engine/runtime/sampler.h"

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

// A whole reply under the grammar, as a generation meets it: a JSON document
// of records (strings, numbers, nested arrays, 1.3 KB), its tokens by
// longest match in the vocabulary; at each token the sampler, with its
// default settings (temperature 0.8, top-k 40, top-p 0.95, min-p 0.05) or
// greedy, picks from logits of N(0, 1) noise with the document's next token
// 12 above, so the reply follows the document and the grammar computes the
// masks a real reply needs, from a fresh constraint (no mask kept from
// before). The twin without a grammar is the baseline: the difference per
// token is the grammar's cost. Reported as time per token.
const std::string& reply_document() {
  static const std::string doc = [] {
    std::string d = "{\"people\": [";
    const char* names[] = {"Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Barbara Liskov",
                           "Donald Knuth", "Frances Allen", "Ken Thompson"};
    for (int i = 0; i < 8; ++i) {
      if (i > 0) d += ", ";
      d += "{\"name\": \"" + std::string(names[i]) + "\", \"born\": " + std::to_string(1815 + 13 * i) +
           ", \"score\": " + std::to_string(i * 7.25 + 0.5).substr(0, 5) + ", \"tags\": [\"computing\", \"prize " +
           std::to_string(i) + "\"], \"active\": " + (i % 2 ? "true" : "false") + "}";
    }
    return d + "], \"count\": 8}";
  }();
  return doc;
}

std::vector<int32_t> longest_match_tokens(const std::string& text, const std::vector<std::string>& vocab) {
  std::unordered_map<std::string, int32_t> ids;
  for (size_t i = 0; i < vocab.size(); ++i) ids.emplace(vocab[i], static_cast<int32_t>(i));
  std::vector<int32_t> out;
  for (size_t at = 0; at < text.size();) {
    for (size_t len = std::min<size_t>(12, text.size() - at); len > 0; --len) {
      const auto it = ids.find(text.substr(at, len));
      if (it == ids.end()) continue;
      out.push_back(it->second);
      at += len;
      break;
    }
  }
  return out;
}

void reply(benchmark::State& state, bool with_grammar, bool greedy) {
  Fixture& f = fixture();
  // One more token: the end of generation, which ends the reply.
  static const auto vocabulary = [&] {
    std::vector<std::string> pieces = f.vocab;
    pieces.emplace_back();
    return std::make_shared<engine::grammar::TokenVocabulary>(std::move(pieces),
                                                              std::vector<int32_t>{static_cast<int32_t>(kVocab)});
  }();
  std::vector<int32_t> tokens = longest_match_tokens(reply_document(), f.vocab);
  tokens.push_back(static_cast<int32_t>(kVocab));
  // Noise drawn once, 8 rows of it taken in turn (drawing it per token took
  // the benchmark's time).
  static const std::vector<std::vector<float>> noise = [] {
    std::mt19937 rng(1);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<std::vector<float>> rows(8, std::vector<float>(kVocab + 1));
    for (auto& row : rows) {
      for (float& x : row) x = d(rng);
    }
    return rows;
  }();
  std::vector<float> logits(kVocab + 1);
  engine::SamplerParams params;
  if (greedy) params.temperature = 0.0f;
  params.seed = 1;
  for (auto _ : state) {
    engine::Sampler sampler(params);
    if (with_grammar) sampler.set_grammar(std::make_unique<engine::grammar::TokenConstraint>(f.g, vocabulary));
    for (size_t t = 0; t < tokens.size(); ++t) {
      const int32_t want = tokens[t];
      state.PauseTiming();
      logits = noise[t % noise.size()];
      logits[static_cast<size_t>(want)] += 12.0f;
      state.ResumeTiming();
      if (sampler.sample(logits) != want) {
        state.SkipWithError("the reply left the document");
        return;
      }
    }
  }
  state.counters["tokens"] = static_cast<double>(tokens.size());
  state.counters["per_token"] = benchmark::Counter(static_cast<double>(tokens.size()),
                                                   benchmark::Counter::kIsIterationInvariantRate |
                                                       benchmark::Counter::kInvert);
}

BENCHMARK_CAPTURE(reply, sampled_grammar, true, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(reply, sampled_free, false, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(reply, greedy_grammar, true, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(reply, greedy_free, false, true)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
