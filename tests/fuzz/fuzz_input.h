// Reads typed choices from a fuzzer's input bytes, front to back. When the
// bytes run out every read returns 0 (or the low end of its range), so any
// input, the empty one included, describes a complete case: short inputs are
// the simple cases, and the fuzzer grows them to reach the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace engine_fuzz {

class FuzzInput {
 public:
  explicit FuzzInput(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  size_t remaining() const { return bytes_.size() - pos_; }
  bool empty() const { return remaining() == 0; }

  uint8_t byte() { return pos_ < bytes_.size() ? bytes_[pos_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{byte()} << (8 * i);
    return v;
  }
  uint64_t u64() { return u32() | (uint64_t{u32()} << 32); }
  bool flag() { return (byte() & 1) != 0; }
  // lo..hi inclusive; one byte when the range fits in one, else four.
  uint32_t range(uint32_t lo, uint32_t hi) {
    const uint64_t span = uint64_t{hi} - lo + 1;
    const uint64_t raw = span <= 256 ? byte() : u32();
    return lo + static_cast<uint32_t>(raw % span);
  }
  float f32() {
    const uint32_t bits = u32();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  // Up to max_len bytes, ended early by a 0 byte (consumed, not included).
  std::string_view string(size_t max_len) {
    const size_t start = pos_;
    while (pos_ < bytes_.size() && pos_ - start < max_len && bytes_[pos_] != 0) ++pos_;
    const std::string_view s(reinterpret_cast<const char*>(bytes_.data()) + start, pos_ - start);
    if (pos_ < bytes_.size() && bytes_[pos_] == 0) ++pos_;
    return s;
  }
  // Everything not read yet.
  std::span<const uint8_t> rest() {
    const auto r = bytes_.subspan(pos_);
    pos_ = bytes_.size();
    return r;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

}  // namespace engine_fuzz
