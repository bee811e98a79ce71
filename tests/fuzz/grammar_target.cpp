// Grammars from the input: GBNF text, or (mode bit 0) a JSON Schema converted
// to GBNF; then the input's remaining bytes matched one at a time by the
// engine's matcher and by the plain stack-copying matcher of the tests, which
// must agree byte for byte, and the token mask over a small vocabulary, which
// must equal each token's bytes through a copy of the matcher.
//
// Input: a mode byte, the grammar text up to a NUL, then the text to match.
#include <string>
#include <vector>

#include "engine/grammar/gbnf.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/token_mask.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/targets.h"
#include "tests/grammar/reference_matcher.h"

namespace engine_fuzz {
namespace {

const std::vector<std::string>& vocabulary() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> pieces;
    for (int b = 0; b < 256; ++b) pieces.emplace_back(1, static_cast<char>(b));
    for (const char* s : {"{\"", "\": ", "\",", "true", "null", "12", "\xC3\xA9", "\xE4\xB8", "\xAD\"", " a", "ab",
                          "\\u00", "[]", "}\n"}) {
      pieces.emplace_back(s);
    }
    return pieces;
  }();
  return v;
}

}  // namespace

int grammar(const uint8_t* data, size_t size) {
  FuzzInput in({data, size});
  const bool schema = in.flag();
  const std::string text(in.string(4096));
  engine::grammar::Grammar g;
  try {
    g = engine::grammar::parse_gbnf(schema ? engine::grammar::json_schema_to_gbnf(text) : text);
  } catch (const engine::Error&) {
    return 0;  // a grammar or schema refused by name
  }
  static const engine::grammar::TokenTrie trie(vocabulary());
  engine::grammar::TokenBits allowed;
  try {
    engine::grammar::ParseStates states(g);
    engine::grammar::GrammarMatcher m(states);
    engine::grammar::testing::ReferenceMatcher ref(g);
    for (size_t step = 0; !in.empty() && step < 64; ++step) {
      if (step % 8 == 0) {  // the mask now and then: it costs a walk of the vocabulary
        trie.allowed(m, allowed);
        for (size_t id = 0; id < vocabulary().size(); ++id) {
          engine::grammar::GrammarMatcher copy = m;
          if (engine::grammar::token_bit(allowed, id) != copy.accept_bytes(vocabulary()[id])) {
            broken("the mask and the matcher disagree on token " + std::to_string(id));
          }
        }
      }
      const uint8_t b = in.byte();
      const bool fast = m.accept_byte(b);
      if (fast != ref.accept_bytes(std::string(1, static_cast<char>(b)))) {
        broken("the matchers disagree on byte " + std::to_string(b) + " at step " + std::to_string(step));
      }
      if (m.can_end() != ref.can_end() || m.can_continue() != ref.can_continue()) {
        broken("the matchers disagree on the end after step " + std::to_string(step));
      }
    }
  } catch (const engine::grammar::GrammarError&) {
    return 0;  // too many parse states or stacks: refused by name
  } catch (const engine::grammar::testing::ReferenceMatcher::TooManyStacks&) {
    return 0;  // the reference cannot follow this grammar (reference_matcher.h)
  }
  return 0;
}

}  // namespace engine_fuzz
