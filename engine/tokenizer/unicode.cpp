#include "engine/tokenizer/unicode.h"

#include <algorithm>
#include <array>
#include <iterator>

namespace engine::unicode {
namespace {

#include "engine/tokenizer/unicode_tables.inc"

CodepointClass unpack(uint32_t entry) {
  return {static_cast<Category>(entry & 7u), (entry & 8u) != 0};
}

// Most text is ASCII: answer it from a small table instead of a binary search.
const std::array<CodepointClass, 128>& ascii_classes() {
  static const std::array<CodepointClass, 128> table = [] {
    std::array<CodepointClass, 128> t{};
    size_t r = 0;
    for (uint32_t cp = 0; cp < 128; ++cp) {
      while (r + 1 < std::size(kCodepointRanges) && (kCodepointRanges[r + 1] >> 4) <= cp) ++r;
      t[cp] = unpack(kCodepointRanges[r]);
    }
    return t;
  }();
  return table;
}

struct ByteAlphabet {
  std::array<uint32_t, 256> to_cp{};
  std::array<int16_t, 512> to_byte{};  // every code point of the alphabet is < 0x144
};

const ByteAlphabet& byte_alphabet() {
  static const ByteAlphabet alphabet = [] {
    ByteAlphabet a;
    a.to_byte.fill(-1);
    auto printable = [](int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; };
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const uint32_t cp = printable(b) ? static_cast<uint32_t>(b) : next++;
      a.to_cp[b] = cp;
      a.to_byte[cp] = static_cast<int16_t>(b);
    }
    return a;
  }();
  return alphabet;
}

}  // namespace

CodepointClass classify(uint32_t cp) {
  if (cp < 128) return ascii_classes()[cp];
  if (cp >= 0x110000) return {};
  // The last range starting at or before cp.
  const uint32_t key = (cp << 4) | 0xFu;
  const uint32_t* it = std::upper_bound(std::begin(kCodepointRanges), std::end(kCodepointRanges), key);
  return unpack(*(it - 1));
}

const char* data_version() { return ENGINE_UNICODE_VERSION; }

Utf8Step decode_utf8(std::string_view s, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t b0 = byte(pos);
  if (b0 < 0x80) return {Utf8Step::complete, 1, b0};
  size_t need;
  uint32_t cp;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte (Table 3-7)
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    cp = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;  // no overlong forms
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    cp = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;  // no overlong forms
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return {Utf8Step::invalid, 1, 0};  // a continuation byte, C0, C1 or F5..FF
  }
  for (size_t i = 1; i < need; ++i) {
    if (pos + i >= s.size()) return {Utf8Step::incomplete, static_cast<uint8_t>(i), 0};
    const uint8_t b = byte(pos + i);
    const bool ok = i == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) return {Utf8Step::invalid, static_cast<uint8_t>(i), 0};
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return {Utf8Step::complete, static_cast<uint8_t>(need), cp};
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

size_t append_complete_utf8(std::string_view s, std::string& out) {
  size_t pos = 0;
  while (pos < s.size()) {
    const Utf8Step step = decode_utf8(s, pos);
    if (step.kind == Utf8Step::incomplete) break;  // wait for the rest
    if (step.kind == Utf8Step::complete) {
      out.append(s, pos, step.length);
    } else {
      append_utf8(out, kReplacementChar);
    }
    pos += step.length;
  }
  return pos;
}

uint32_t byte_to_codepoint(uint8_t byte) { return byte_alphabet().to_cp[byte]; }

int codepoint_to_byte(uint32_t cp) {
  return cp < byte_alphabet().to_byte.size() ? byte_alphabet().to_byte[cp] : -1;
}

}  // namespace engine::unicode
