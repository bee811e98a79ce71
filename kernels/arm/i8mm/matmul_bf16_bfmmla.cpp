// matmul_f32_bf16_bf16_8x4_bfmmla: BF16 weights x activations rounded to BF16,
// with BFMMLA (FEAT_BF16), f32 sums (kernels/matmul.h).
//
// Features: the i8mm tier's and FEAT_BF16 (asimd dotprod i8mm bf16); compiled
// with -march=armv8.2-a+dotprod+i8mm+bf16. Listed before the tier's widening
// kernel (matmul_f32_f32_bf16_4x4_i8mm, matmul_float.cpp), which a CPU with
// i8mm and no bf16 gets, the rejection logged as every other.
//
// BFMMLA takes two rows of 4 bf16 (activations) and two of the weights and
// adds their 2x2 dot products to a 2x2 f32 tile, as SMMLA does with codes:
// 16 products per instruction where the widening kernel's FMLA does 4, and no
// widening of the weights. Its products are exact in f32; the architecture
// rounds its sums to odd, with denormals flushed (the FPCR is ignored), an
// error of at most one f32 ulp per addition.
//
// LHS (pack_lhs): the activations rounded to bf16 with BFCVTN (to nearest,
// ties to even, as ggml rounds them for its BF16 dot products), so lhs_type is
// BF16 (the tier test's tolerance counts half a bf16 ulp per element). Pairs
// of rows; per chunk of 4 elements 16 bytes: row 2p's 4 bf16, then row 2p+1's
// (zeros for the odd last row's partner and past k).
//
// RHS (pack_rhs, at load): tiles of 4 weight rows; per chunk of 4 elements 32
// bytes: rows 0, 1 (4 bf16 each), then rows 2, 3, the right operands of
// BFMMLA. Missing rows of the last tile and elements past k are zero. For k a
// multiple of 4 the packed tile is exactly its 4 rows' bytes.
//
// run: n-outer by tiles; 4 pairs (8 rows) x 2 tiles at a time for a batch
// (16 accumulators; per two chunks 2 LD1 of 4 registers, 4 LDP, 32 BFMMLA),
// the pairs left over and batches under 8 rows 1 pair x 4 tiles (decode: the
// pair of the row and a zero row, half of each BFMMLA unused, as SMMLA's).
// Instructions per weight (kernel_insn, qemu max): decode 1 x 4096 x 4096
// 0.220 (the widening kernel 0.786), prefill 128 x 256 x 4096 10.06 for all
// 128 rows (57.2).
// Each output lane is the same chain of BFMMLA over the chunks whatever the
// tile it falls in, so split calls equal one call. m_step 8, n_step 4.
#include "kernels/arm/i8mm/isa_check.h"

#if !defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC)
#error "matmul_bf16_bfmmla.cpp must be compiled with -march=armv8.2-a+dotprod+i8mm+bf16"
#endif

#include <arm_neon.h>

#include <cstring>

#include "kernels/arm/i8mm/kernel_defs.h"
#include "kernels/arm/i8mm/lhs_pairs.h"  // store_cols, tile_row0/1: Advanced SIMD only, no bf16

namespace kernels::i8mm {
namespace {

constexpr size_t kRows = 4;          // weight rows per tile (n_step)
constexpr size_t kBatchPairs = 4;    // activation pairs per batch pass (m_step = 8 rows)
constexpr size_t kChunk = 4;         // elements of a row per BFMMLA operand
constexpr size_t kPairChunkBytes = 2 * kChunk * sizeof(uint16_t);  // two rows' chunk: 16

size_t chunks_of(size_t k) { return (k + kChunk - 1) / kChunk; }
size_t tiles_of(size_t n) { return (n + kRows - 1) / kRows; }
size_t pair_bytes(size_t k) { return chunks_of(k) * kPairChunkBytes; }
size_t tile_bytes(size_t k) { return chunks_of(k) * 2 * kPairChunkBytes; }

// Elements c0 .. c0 + 3 of a row of `len`, zero past the end.
template <class T>
void copy_chunk(const T* row, size_t c0, size_t len, T* out) {
  if (c0 + kChunk <= len) {
    std::memcpy(out, row + c0, kChunk * sizeof(T));
    return;
  }
  for (size_t e = 0; e < kChunk; ++e) out[e] = c0 + e < len ? row[c0 + e] : T{0};
}

void pack_rhs(size_t n, size_t k, const void* rhs, void* rhs_packed) {
  const auto* w = static_cast<const uint16_t*>(rhs);
  auto* out = static_cast<uint16_t*>(rhs_packed);
  for (size_t t = 0; t < tiles_of(n); ++t) {
    for (size_t c0 = 0; c0 < k; c0 += kChunk) {
      for (size_t r = 0; r < kRows; ++r, out += kChunk) {
        const size_t row = t * kRows + r;
        if (row < n) {
          copy_chunk(w + row * k, c0, k, out);
        } else {
          std::memset(out, 0, kChunk * sizeof(uint16_t));
        }
      }
    }
  }
}

void pack_lhs(size_t m, size_t k, const float* lhs, size_t lhs_stride, void* lhs_packed) {
  auto* out = static_cast<bfloat16_t*>(lhs_packed);
  for (size_t p = 0; p < (m + 1) / 2; ++p) {
    const float* x0 = lhs + 2 * p * lhs_stride;
    const float* x1 = 2 * p + 1 < m ? x0 + lhs_stride : nullptr;
    for (size_t c0 = 0; c0 < k; c0 += kChunk, out += 2 * kChunk) {
      float a[kChunk], b[kChunk] = {};
      copy_chunk(x0, c0, k, a);
      if (x1 != nullptr) copy_chunk(x1, c0, k, b);
      vst1q_bf16(out, vcvtq_high_bf16_f32(vcvtq_low_bf16_f32(vld1q_f32(a)), vld1q_f32(b)));
    }
  }
}

// a, b = the 32 bytes at p, then p += 16 elements: one LDP, post-indexed.
// vld1q_bf16_x2 loads two consecutive registers, and GCC 12 copied both
// elsewhere (2 MOVs a load). Declares no memory read: valid because the packed
// activations are written by pack_lhs before run(), never during it.
inline void ldp_post32(const bfloat16_t*& p, bfloat16x8_t& a, bfloat16x8_t& b) {
  asm("ldp %q0, %q1, [%2], #32" : "=w"(a), "=w"(b), "+r"(p));
}

// P pairs of activation rows (`rows` rows, 2P at most) x G tiles of weight
// rows (tile g at w + g * tile_stride; `cols` outputs in the last tile).
// Two chunks per step: a tile's two chunks are 64 contiguous bytes (one LD1 of
// 4 registers) and a pair's 32 (one LDP); with one chunk per step the loop
// spent 8 single loads, 3 pointer adds and the branch on 16 BFMMLA (P 4, G 2).
template <int P, int G>
__attribute__((noinline)) void tile(size_t nc, const uint8_t* x, size_t pair_stride, const uint8_t* w,
                                    size_t tile_stride, float* y, size_t ldy, size_t rows, size_t cols) {
  float32x4_t acc[P][G][2];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) acc[p][g][0] = acc[p][g][1] = vdupq_n_f32(0.0f);
  }
  // Each row pair and tile advances by its own pointer, post-indexed by the
  // loads: from one base and a stride, GCC 12 added the stride per tile and step.
  const bfloat16_t* xp[P];
  const bfloat16_t* wp[G];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) xp[p] = reinterpret_cast<const bfloat16_t*>(x + p * pair_stride);
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) wp[g] = reinterpret_cast<const bfloat16_t*>(w + g * tile_stride);
  // acc[p][g] += pair p's chunk xv against tile g's pairs of rows w01, w23.
  auto step = [&](int p, int g, bfloat16x8_t xv, bfloat16x8_t w01, bfloat16x8_t w23) {
    acc[p][g][0] = vbfmmlaq_f32(acc[p][g][0], xv, w01);
    acc[p][g][1] = vbfmmlaq_f32(acc[p][g][1], xv, w23);
  };
  for (size_t c = nc / 2; c > 0; --c) {
    bfloat16x8_t x0[P], x1[P];
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) ldp_post32(xp[p], x0[p], x1[p]);
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      // Each tile's registers used as soon as loaded: with all G loaded first,
      // GCC 12 moved every LD1's four registers elsewhere (a MOV per weight
      // register).
      const bfloat16x8x4_t wv = vld1q_bf16_x4(wp[g]);
      wp[g] += 4 * 8;
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        step(p, g, x0[p], wv.val[0], wv.val[1]);
        step(p, g, x1[p], wv.val[2], wv.val[3]);
      }
    }
  }
  if (nc % 2 != 0) {  // an odd last chunk
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) {
      const bfloat16x8_t xv = vld1q_bf16(xp[p]);
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) step(p, g, xv, vld1q_bf16(wp[g]), vld1q_bf16(wp[g] + 8));
    }
  }
#pragma GCC unroll 8
  for (size_t p = 0; p < P; ++p) {
#pragma GCC unroll 8
    for (size_t g = 0; g < G; ++g) {
      const size_t n_out = g + 1 == G ? cols : kRows;
      float* yr = y + 2 * p * ldy + kRows * g;
      if (2 * p < rows) store_cols(yr, tile_row0(acc[p][g][0], acc[p][g][1]), n_out);
      if (2 * p + 1 < rows) store_cols(yr + ldy, tile_row1(acc[p][g][0], acc[p][g][1]), n_out);
    }
  }
}

// Every pair of the batch against G tiles from w: 4 pairs at a time, then 1.
template <int G>
void pairs_x_tiles(size_t m, size_t nc, const uint8_t* lhs, const uint8_t* w, size_t tb, float* y,
                   size_t ldy, size_t cols) {
  const size_t pb = nc * kPairChunkBytes;
  size_t p = 0;
  for (; 2 * (p + kBatchPairs) <= m; p += kBatchPairs)
    tile<kBatchPairs, G>(nc, lhs + p * pb, pb, w, tb, y + 2 * p * ldy, ldy, 2 * kBatchPairs, cols);
  for (; 2 * p < m; ++p) tile<1, G>(nc, lhs + p * pb, pb, w, tb, y + 2 * p * ldy, ldy, m - 2 * p, cols);
}

void run(size_t m, size_t n, size_t k, const void* lhs_packed, const void* rhs_packed, float* dst,
         size_t dst_stride) {
  const size_t nc = chunks_of(k), tb = tile_bytes(k);
  const auto* lhs = static_cast<const uint8_t*>(lhs_packed);
  const auto* rhs = static_cast<const uint8_t*>(rhs_packed);
  // Tiles per pass: 2 when 4 pairs share them (16 accumulators), 4 for fewer
  // rows, so that each activation chunk loaded serves 8 BFMMLA.
  const size_t per_pass = m >= 2 * kBatchPairs ? 2 : 4;
  for (size_t t = 0; t < tiles_of(n);) {
    const size_t left = tiles_of(n) - t;
    const size_t g = left >= per_pass ? per_pass : left >= 2 ? 2 : 1;
    const size_t end = (t + g) * kRows;
    const size_t cols = (end < n ? end : n) - (end - kRows);
    const uint8_t* w = rhs + t * tb;
    float* y = dst + t * kRows;
    if (g == 4) pairs_x_tiles<4>(m, nc, lhs, w, tb, y, dst_stride, cols);
    if (g == 2) pairs_x_tiles<2>(m, nc, lhs, w, tb, y, dst_stride, cols);
    if (g == 1) pairs_x_tiles<1>(m, nc, lhs, w, tb, y, dst_stride, cols);
    t += g;
  }
}

}  // namespace

constinit const MatmulKernel kMatmulBF16Mmla{
    .name = "matmul_f32_bf16_bf16_8x4_bfmmla",
    .tier = Tier::i8mm,
    .arch = Arch::aarch64,
    .required_features = kRequiredFeaturesBf16,
    .rhs_type = gguf::GgmlType::BF16,
    .lhs_type = gguf::GgmlType::BF16,
    .m_step = 2 * kBatchPairs,
    .n_step = kRows,
    .rhs_packed_size = [](size_t n, size_t k) { return tiles_of(n) * tile_bytes(k); },
    .rhs_packed_offset = [](size_t n_idx, size_t k) { return n_idx / kRows * tile_bytes(k); },
    .pack_rhs = pack_rhs,
    .lhs_packed_size = [](size_t m, size_t k) { return (m + 1) / 2 * pair_bytes(k); },
    .lhs_packed_offset = [](size_t m_idx, size_t k) { return m_idx / 2 * pair_bytes(k); },
    .pack_lhs = pack_lhs,
    .run = run,
};

}  // namespace kernels::i8mm
