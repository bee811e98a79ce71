// SDOT by element over codes interleaved in 4-byte runs (arm/neon/packed.h,
// interleave_4x4_runs): a vector holds the same 4 consecutive codes of the 4
// columns of a tile, so that SDOT by element leaves one column per lane.
// Header-only, internal linkage, compiled with the dotprod tier's flags.
#pragma once

#include <arm_neon.h>

namespace kernels::arm {
namespace {

// acc + the 4 columns' sums over 16 elements: v[j] holds elements 4j..4j+3 of
// the columns, a the activation codes of the 16.
__attribute__((always_inline)) inline int32x4_t sdot_runs16(int32x4_t acc, const int8x16_t* v, int8x16_t a) {
  acc = vdotq_laneq_s32(acc, v[0], a, 0);
  acc = vdotq_laneq_s32(acc, v[1], a, 1);
  acc = vdotq_laneq_s32(acc, v[2], a, 2);
  return vdotq_laneq_s32(acc, v[3], a, 3);
}

// The 4 columns' sums over 32 elements: v[0..3] against codes 0..15 (a0),
// v[4..7] against 16..31 (a1).
__attribute__((always_inline)) inline int32x4_t sdot_runs32(const int8x16_t* v, int8x16_t a0, int8x16_t a1) {
  return sdot_runs16(sdot_runs16(vdupq_n_s32(0), v, a0), v + 4, a1);
}

// The Codes and dot of a block type (arm/neon/block_tile.h) whose codes are in
// 4-byte runs: v[j] (j < 4) elements 4j..4j+3 of the 4 columns, v[4 + j]
// elements 16+4j..16+4j+3.
struct RunsDot {
  struct Codes {
    int8x16_t v[8];
  };
  __attribute__((always_inline)) static int32x4_t dot(const Codes& w, int8x16_t a0, int8x16_t a1) {
    return sdot_runs32(w.v, a0, a1);
  }
};

}  // namespace
}  // namespace kernels::arm
