// Byte counts that saturate at UINT64_MAX instead of wrapping: a size too
// large to exist must compare as too large, never as a small number.
#pragma once

#include <cstdint>

namespace engine {

inline uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
inline uint64_t saturating_mul(uint64_t a, uint64_t b) { return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b; }

}  // namespace engine
