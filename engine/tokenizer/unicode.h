// Unicode helpers for the tokenizer: code point classes (from a generated range
// table, no ICU), UTF-8 decoding that never fails, and GPT-2's byte <-> code
// point mapping used by byte-level BPE vocabularies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace engine::unicode {

// General-category groups, as the pre-tokenizer regexes name them.
enum class Category : uint8_t {
  undefined = 0,    // Cn: unassigned
  number = 1,       // \p{N}
  letter = 2,       // \p{L}
  separator = 3,    // \p{Z}
  mark = 4,         // \p{M}
  punctuation = 5,  // \p{P}
  symbol = 6,       // \p{S}
  control = 7,      // \p{C} without Cn
};

struct CodepointClass {
  Category category = Category::undefined;
  bool whitespace = false;  // the Unicode White_Space property (what \s means here)

  bool is_letter() const { return category == Category::letter; }
  bool is_number() const { return category == Category::number; }
  bool is_punctuation() const { return category == Category::punctuation; }
};

CodepointClass classify(uint32_t cp);
inline bool is_whitespace(uint32_t cp) { return classify(cp).whitespace; }
inline bool is_letter(uint32_t cp) { return classify(cp).is_letter(); }
inline bool is_number(uint32_t cp) { return classify(cp).is_number(); }

// Version of the Unicode data the class table was generated from.
const char* data_version();

inline constexpr uint32_t kReplacementChar = 0xFFFD;

// One step of UTF-8 decoding at `pos` (< s.size()).
struct Utf8Step {
  enum Kind : uint8_t {
    complete,    // a well-formed sequence of `length` bytes encoding `cp`
    incomplete,  // s ends inside a sequence whose `length` bytes so far are well-formed
    invalid,     // `length` bytes (the maximal ill-formed subpart) decode to nothing
  };
  Kind kind;
  uint8_t length;
  uint32_t cp;
};
// Well-formed means Unicode's Table 3-7: no overlong forms, no surrogates,
// nothing above U+10FFFF.
Utf8Step decode_utf8(std::string_view s, size_t pos);

void append_utf8(std::string& out, uint32_t cp);  // cp <= 0x10FFFF

// Appends the complete characters at the front of `s` to `out`, each maximal
// ill-formed subpart as U+FFFD; returns the bytes consumed. What is left is
// the start of an unfinished character (at most 3 bytes), for streaming text
// whose characters may be split across pieces.
size_t append_complete_utf8(std::string_view s, std::string& out);

// GPT-2's byte-level alphabet: each byte maps to a printable code point (bytes
// that are printable Latin-1 map to themselves, the others to U+0100 + n).
uint32_t byte_to_codepoint(uint8_t byte);
// The byte a code point of that alphabet stands for, or -1.
int codepoint_to_byte(uint32_t cp);

}  // namespace engine::unicode
