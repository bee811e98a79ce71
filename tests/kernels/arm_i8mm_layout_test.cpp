// The i8mm tier's repacked weights, which the tier-vs-ref harness sees only
// through run(): the layouts written at the top of kernels/arm/i8mm/matmul_*
// are decoded here, independently of the kernels, and must give back the GGUF
// blocks (scales, mins and codes) exactly; packing in slices of n_step rows,
// as the contract allows, must write the same bytes as one call; and the
// packed size must be the file's bytes, padded to whole tiles only.
// pack_rhs is compiled with the tier's flags, so a CPU without i8mm SKIPS.
// The BFMMLA kernel's activation and weight formats likewise (BfmmlaLayout).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/ref/blocks.h"
#include "kernels/ref/fp16.h"
#include "kernels/registry.h"

namespace {

using gguf::GgmlType;
using kernels::MatmulKernel;
namespace ref = kernels::ref;

const MatmulKernel* i8mm_kernel(GgmlType type) {
  for (const MatmulKernel* k : kernels::matmul_table(type)) {
    if (k->tier == kernels::Tier::i8mm) return k;
  }
  return nullptr;
}

size_t file_row_bytes(GgmlType t, size_t k) { return static_cast<size_t>(*gguf::row_bytes(t, k)); }

// Random blocks: every byte random (codes, scales and fp16 bits alike).
std::vector<uint8_t> random_rows(GgmlType type, size_t n, size_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> w(n * file_row_bytes(type, k));
  for (auto& b : w) b = static_cast<uint8_t>(rng());
  return w;
}

std::vector<uint8_t> pack(const MatmulKernel& kern, size_t n, size_t k, const std::vector<uint8_t>& w) {
  std::vector<uint8_t> out(kern.rhs_packed_size(n, k), 0xCD);
  kern.pack_rhs(n, k, w.data(), out.data());
  return out;
}

// The GGUF block (tile t, block b, row r of the tile) read back from a packed
// tile of 4 rows, following each kernel file's layout comment.
using Decoder = void (*)(const uint8_t* tile_block, size_t r, uint8_t* block);

void decode_q4_0(const uint8_t* p, size_t r, uint8_t* out) {
  ref::BlockQ4_0 b;
  std::memcpy(&b.d, p + 2 * r, 2);
  for (size_t g = 0; g < 2; ++g) {
    for (size_t i = 0; i < 8; ++i) b.qs[8 * g + i] = p[8 + 32 * (r / 2) + 16 * g + 8 * (r % 2) + i] ^ 0x88;
  }
  std::memcpy(out, &b, sizeof b);
}

void decode_iq4_nl(const uint8_t* p, size_t r, uint8_t* out) {
  ref::BlockIQ4_NL b;
  std::memcpy(&b.d, p + 2 * r, 2);
  for (size_t i = 0; i < 16; ++i) b.qs[i] = p[8 + 32 * (r / 2) + 16 * (i / 8) + 8 * (r % 2) + i % 8];
  std::memcpy(out, &b, sizeof b);
}

void decode_iq4_xs(const uint8_t* p, size_t r, uint8_t* out) {
  ref::BlockIQ4_XS b{};
  std::memcpy(&b.d, p + 2 * r, 2);
  const uint8_t* sc = p + 8;  // a[16], then b[8]
  for (size_t j = 0; j < 8; ++j) {
    const size_t i = 4 * j + r;
    const unsigned s = i < 16 ? sc[i] >> 2 : (sc[i - 16] & 3u) | ((sc[16 + (i - 16) % 8] >> (4 * ((i - 16) / 8))) & 15u) << 2;
    const unsigned ls = s ^ 32u;
    b.scales_l[j / 2] = static_cast<uint8_t>(b.scales_l[j / 2] | (ls & 15u) << (4 * (j % 2)));
    b.scales_h = static_cast<uint16_t>(b.scales_h | (ls >> 4) << (2 * j));
  }
  for (size_t j = 0; j < 8; ++j) {  // sub-block j as an IQ4_NL block whose codes start at 32 + 64j
    ref::BlockIQ4_NL nl;
    decode_iq4_nl(p + 24 + 64 * j, r, reinterpret_cast<uint8_t*>(&nl));
    std::memcpy(b.qs + 16 * j, nl.qs, 16);
  }
  std::memcpy(out, &b, sizeof b);
}

// The 2-bit codes of Q2KPacked and Q3KPacked in the i8mm order
// (arm/low_bit_k.h, matmul_q2_k_q3_k.cpp) back into a GGUF block's qs.
void decode_two_bit(const uint8_t* low, size_t r, uint8_t* qs) {
  for (size_t e = 0; e < 256; ++e) {
    const size_t g = e / 64, t = e % 64 / 16, i = e % 16;
    const size_t v = 2 * (r / 2) + i / 8, byte = 8 * (r % 2) + i % 8;
    const unsigned low2 = (low[64 * g + 16 * v + byte] >> (2 * t)) & 3u;
    qs[32 * (e / 128) + e % 32] = static_cast<uint8_t>(qs[32 * (e / 128) + e % 32] | low2 << (2 * (e % 128 / 32)));
  }
}

void decode_q2_k(const uint8_t* p, size_t r, uint8_t* out) {
  ref::BlockQ2_K b{};
  std::memcpy(&b.d, p + 2 * r, 2);
  std::memcpy(&b.dmin, p + 8 + 2 * r, 2);
  for (size_t j = 0; j < 16; ++j) b.scales[j] = p[16 + 16 * (j / 4) + 4 * (j % 4) + r];
  decode_two_bit(p + 80, r, b.qs);
  std::memcpy(out, &b, sizeof b);
}

void decode_q3_k(const uint8_t* p, size_t r, uint8_t* out) {
  ref::BlockQ3_K b{};
  std::memcpy(&b.d, p + 2 * r, 2);
  const uint8_t* planes = p + 8;  // the 6-bit scales: three vectors of 16
  for (size_t j = 0; j < 16; ++j) {
    const size_t g = j / 4, i = 4 * (j % 4) + r;
    const unsigned a = planes[i], bb = planes[16 + i], c = planes[32 + i];
    const unsigned u = g == 0 ? a >> 2 : g == 1 ? bb >> 2 : g == 2 ? c >> 2 : (a & 3) | (bb & 3) << 2 | (c & 3) << 4;
    const unsigned sc = u ^ 32;
    b.scales[j % 8] = static_cast<uint8_t>(b.scales[j % 8] | (sc & 15) << (4 * (j / 8)));
    b.scales[8 + j % 4] = static_cast<uint8_t>(b.scales[8 + j % 4] | (sc >> 4) << (2 * (j / 4)));
  }
  decode_two_bit(p + 56, r, b.qs);
  for (size_t e = 0; e < 256; ++e) {
    const size_t g = e / 64, t = e % 64 / 16, i = e % 16;
    const size_t v = 2 * (r / 2) + i / 8, byte = 8 * (r % 2) + i % 8;
    const unsigned high = 1u - ((p[312 + 32 * g + 8 * v + byte % 8] >> (t + 4 * (byte / 8))) & 1u);
    b.hmask[e % 32] = static_cast<uint8_t>(b.hmask[e % 32] | high << (e / 32));
  }
  std::memcpy(out, &b, sizeof b);
}

void decode_q8_0(const uint8_t* p, size_t r, uint8_t* out) {
  ref::BlockQ8_0 b;
  std::memcpy(&b.d, p + 2 * r, 2);
  for (size_t c = 0; c < 4; ++c) std::memcpy(b.qs + 8 * c, p + 8 + 64 * (r / 2) + 16 * c + 8 * (r % 2), 8);
  std::memcpy(out, &b, sizeof b);
}

void decode_q5_0(const uint8_t* p, size_t r, uint8_t* out) {
  ref::BlockQ5_0 b{};
  std::memcpy(&b.d, p + 2 * r, 2);
  for (size_t i = 0; i < 16; ++i) b.qs[i] = p[8 + 32 * (r / 2) + 16 * (i / 8) + 8 * (r % 2) + i % 8];
  for (size_t e = 0; e < 32; ++e) {
    const unsigned inverted = p[72 + 8 * (r % 2) + e % 8] >> (4 * (r / 2) + 2 * (e % 16 / 8) + e / 16) & 1u;
    b.qh[e / 8] = static_cast<uint8_t>(b.qh[e / 8] | (1u - inverted) << (e % 8));
  }
  std::memcpy(out, &b, sizeof b);
}

// Q4_1 and Q5_1: the mins m[4] after d[4], then Q4_0's / Q5_0's layout
// (without Q4_0's XOR) 8 bytes further.
void decode_q4_1(const uint8_t* p, size_t r, uint8_t* out) {
  ref::BlockQ4_1 b;
  std::memcpy(&b.d, p + 2 * r, 2);
  std::memcpy(&b.m, p + 8 + 2 * r, 2);
  ref::BlockIQ4_NL codes;  // the same nibble layout
  decode_iq4_nl(p + 8, r, reinterpret_cast<uint8_t*>(&codes));
  std::memcpy(b.qs, codes.qs, sizeof b.qs);
  std::memcpy(out, &b, sizeof b);
}

void decode_q5_1(const uint8_t* p, size_t r, uint8_t* out) {
  ref::BlockQ5_1 b;
  std::memcpy(&b.d, p + 2 * r, 2);
  std::memcpy(&b.m, p + 8 + 2 * r, 2);
  ref::BlockQ5_0 q5;
  decode_q5_0(p + 8, r, reinterpret_cast<uint8_t*>(&q5));
  std::memcpy(b.qh, q5.qh, sizeof b.qh);
  std::memcpy(b.qs, q5.qs, sizeof b.qs);
  std::memcpy(out, &b, sizeof b);
}

// Q4_K and Q5_K share the fields before qs; Q5_K's inverted qh planes follow
// the codes (at 576).
template <class Block>
void decode_offset_k(const uint8_t* p, size_t r, uint8_t* out) {
  Block b;
  std::memcpy(&b.d, p + 2 * r, 2);
  std::memcpy(&b.dmin, p + 8 + 2 * r, 2);
  for (size_t i = 0; i < 3; ++i) std::memcpy(b.scales + 4 * i, p + 16 + 16 * i + 4 * r, 4);
  for (size_t c = 0; c < 4; ++c) {
    for (size_t g = 0; g < 4; ++g)
      std::memcpy(b.qs + 32 * c + 8 * g, p + 64 + 128 * c + 64 * (r / 2) + 16 * g + 8 * (r % 2), 8);
  }
  if constexpr (sizeof(Block) == sizeof(ref::BlockQ5_K)) {
    for (size_t l = 0; l < 32; ++l) {
      b.qh[l] = static_cast<uint8_t>(~p[576 + 64 * (r / 2) + 16 * (l / 8) + 8 * (r % 2) + l % 8]);
    }
  }
  std::memcpy(out, &b, sizeof b);
}

// Q6_K is re-encoded (4 codes per 3 bytes): rebuild ql/qh from the codes.
void decode_q6_k(const uint8_t* p, size_t r, uint8_t* out) {
  ref::BlockQ6_K b{};
  std::memcpy(&b.d, p + 2 * r, 2);
  for (size_t s = 0; s < 16; ++s) b.scales[s] = static_cast<int8_t>(p[8 + 4 * s + r]);
  for (size_t c = 0; c < 2; ++c) {
    for (size_t g = 0; g < 4; ++g) {
      const uint8_t* o = p + 72 + 384 * c + 96 * g + 48 * (r / 2) + 8 * (r % 2);
      for (size_t i = 0; i < 8; ++i) {
        uint8_t q[4];
        for (size_t e = 0; e < 3; ++e) q[e] = static_cast<uint8_t>((o[16 * e + i] >> 2) ^ 32);
        q[3] = static_cast<uint8_t>((((o[i] & 3) << 4) | ((o[16 + i] & 3) << 2) | (o[32 + i] & 3)) ^ 32);
        for (size_t e = 0; e < 4; ++e) {  // element 128c + 32e + 8g + i (blocks.h)
          const size_t l = 8 * g + i;
          uint8_t& ql = b.ql[64 * c + l + (e % 2) * 32];
          ql = static_cast<uint8_t>(ql | (e < 2 ? (q[e] & 0xF) : (q[e] & 0xF) << 4));
          b.qh[32 * c + l] = static_cast<uint8_t>(b.qh[32 * c + l] | ((q[e] >> 4) << (2 * e)));
        }
      }
    }
  }
  std::memcpy(out, &b, sizeof b);
}

struct Case {
  GgmlType type;
  Decoder decode;
};

class I8mmLayout : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    kern_ = i8mm_kernel(GetParam().type);
    if (kern_ == nullptr) GTEST_SKIP() << "no i8mm kernel for " << gguf::type_name(GetParam().type) << " in this build";
    if (!kernels::can_run(*kern_, kernels::host_cpu_features())) {
      GTEST_SKIP() << kern_->name << " (and its pack_rhs) cannot run on this CPU ("
                   << kernels::host_cpu_features().describe() << ")";
    }
  }
  size_t block_size() const { return gguf::traits(GetParam().type).block_size; }
  const MatmulKernel* kern_ = nullptr;
};

TEST_P(I8mmLayout, PackedTilesDecodeToTheGgufBlocks) {
  const GgmlType type = GetParam().type;
  const size_t n = 4 * 3 + 2, k = 3 * block_size(), nb = 3, bytes = gguf::traits(type).block_bytes;
  const std::vector<uint8_t> w = random_rows(type, n, k, 1);
  const std::vector<uint8_t> packed = pack(*kern_, n, k, w);
  const size_t tile_block = packed.size() / ((n + 3) / 4) / nb;
  std::vector<uint8_t> block(bytes);
  for (size_t row = 0; row < n; ++row) {
    for (size_t b = 0; b < nb; ++b) {
      SCOPED_TRACE("row " + std::to_string(row) + " block " + std::to_string(b));
      GetParam().decode(packed.data() + (row / 4 * nb + b) * tile_block, row % 4, block.data());
      ASSERT_EQ(0, std::memcmp(block.data(), w.data() + row * file_row_bytes(type, k) + b * bytes, bytes));
    }
  }
}

TEST_P(I8mmLayout, PackingInSlicesWritesTheSameBytes) {
  const GgmlType type = GetParam().type;
  const size_t n = 5 * kern_->n_step + 3, k = 2 * block_size();
  const std::vector<uint8_t> w = random_rows(type, n, k, 2);
  const std::vector<uint8_t> whole = pack(*kern_, n, k, w);
  std::vector<uint8_t> sliced(whole.size(), 0xCD);
  for (size_t n0 = 0; n0 < n; n0 += kern_->n_step) {
    const size_t rows = std::min(kern_->n_step, n - n0);
    kern_->pack_rhs(rows, k, w.data() + n0 * file_row_bytes(type, k), sliced.data() + kern_->rhs_packed_offset(n0, k));
  }
  EXPECT_EQ(whole, sliced);
}

TEST_P(I8mmLayout, PackedSizeIsTheFileSizePaddedToWholeTiles) {
  const GgmlType type = GetParam().type;
  const size_t k = 4 * block_size();
  for (size_t n : {size_t{1}, kern_->n_step, size_t{4096 + 1}}) {
    const size_t tiles = (n + kern_->n_step - 1) / kern_->n_step;
    EXPECT_EQ(kern_->rhs_packed_size(n, k), tiles * kern_->n_step * file_row_bytes(type, k)) << "n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, I8mmLayout,
                         ::testing::Values(Case{GgmlType::Q4_0, decode_q4_0}, Case{GgmlType::Q8_0, decode_q8_0},
                                           Case{GgmlType::Q5_0, decode_q5_0}, Case{GgmlType::IQ4_NL, decode_iq4_nl},
                                           Case{GgmlType::IQ4_XS, decode_iq4_xs},
                                           Case{GgmlType::Q4_1, decode_q4_1}, Case{GgmlType::Q5_1, decode_q5_1},
                                           Case{GgmlType::Q2_K, decode_q2_k}, Case{GgmlType::Q3_K, decode_q3_k},
                                           Case{GgmlType::Q4_K, decode_offset_k<ref::BlockQ4_K>},
                                           Case{GgmlType::Q5_K, decode_offset_k<ref::BlockQ5_K>},
                                           Case{GgmlType::Q6_K, decode_q6_k}),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return std::string(gguf::type_name(p.param.type));
                         });

// The BFMMLA kernel's formats (kernels/arm/i8mm/matmul_bf16_bfmmla.cpp), for
// any k: chunks of 4 elements, zero past k. Activations: pairs of rows, per
// chunk row 2p's 4 bf16 then row 2p+1's, each BFCVTN of the float (to
// nearest, ties to even: the ref's fp32_to_bf16, which is ggml's). Weights:
// tiles of 4 rows, per chunk rows 0..3's 4 bf16.
class BfmmlaLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const MatmulKernel* k : kernels::matmul_table(GgmlType::BF16)) {
      if (std::string(k->name) == "matmul_f32_bf16_bf16_8x4_bfmmla") kern_ = k;
    }
    if (kern_ == nullptr) GTEST_SKIP() << "no BFMMLA kernel in this build";
    if (!kernels::can_run(*kern_, kernels::host_cpu_features())) {
      GTEST_SKIP() << kern_->name << " (and its packers) cannot run on this CPU ("
                   << kernels::host_cpu_features().describe() << ")";
    }
  }
  static uint16_t at(const std::vector<uint8_t>& bytes, size_t element) {
    uint16_t v;
    std::memcpy(&v, bytes.data() + 2 * element, 2);
    return v;
  }
  const MatmulKernel* kern_ = nullptr;
};

TEST_F(BfmmlaLayout, PackedActivationsAreTheirBfcvtnRoundingInPairs) {
  const size_t m = 5, k = 11, chunks = 3;  // an odd row and a k % 4 tail
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 10.0f);
  std::vector<float> x(m * k);
  for (float& v : x) v = normal(rng);
  // Ties both ways, the largest float, infinity, a NaN, a denormal, zeros.
  const uint32_t bits[] = {0x3f808000u, 0x3f818000u, 0xbf808000u, 0x7f7fffffu, 0x7f800000u,
                           0x7fc12345u, 0x00012345u, 0x80000000u, 0x00000000u};
  for (size_t i = 0; i < std::size(bits); ++i) std::memcpy(&x[3 * i + 1], &bits[i], 4);
  ASSERT_EQ(kern_->lhs_packed_size(m, k), 3 * chunks * 16);
  std::vector<uint8_t> packed(kern_->lhs_packed_size(m, k), 0xCD);
  kern_->pack_lhs(m, k, x.data(), k, packed.data());
  for (size_t row = 0; row < 6; ++row) {
    for (size_t e = 0; e < 4 * chunks; ++e) {
      const uint16_t want = row < m && e < k ? ref::fp32_to_bf16(x[row * k + e]) : 0;
      const size_t element = (row / 2 * chunks + e / 4) * 8 + 4 * (row % 2) + e % 4;
      ASSERT_EQ(at(packed, element), want) << "row " << row << " element " << e;
    }
  }
}

TEST_F(BfmmlaLayout, PackedWeightsAreTheRowsInTilesOfFour) {
  const size_t n = 4 * 3 + 2, k = 13, chunks = 4;
  const std::vector<uint8_t> w = random_rows(GgmlType::BF16, n, k, 4);
  const std::vector<uint8_t> packed = pack(*kern_, n, k, w);
  ASSERT_EQ(packed.size(), 4 * chunks * 32);
  for (size_t row = 0; row < 16; ++row) {
    for (size_t e = 0; e < 4 * chunks; ++e) {
      const uint16_t want = row < n && e < k ? at(w, row * k + e) : 0;
      ASSERT_EQ(at(packed, (row / 4 * chunks + e / 4) * 16 + 4 * (row % 4) + e % 4), want)
          << "row " << row << " element " << e;
    }
  }
}

TEST_F(BfmmlaLayout, PackingWeightsInSlicesWritesTheSameBytes) {
  for (size_t k : {size_t{64}, size_t{7}}) {
    const size_t n = 5 * kern_->n_step + 3;
    const std::vector<uint8_t> w = random_rows(GgmlType::BF16, n, k, 5);
    const std::vector<uint8_t> whole = pack(*kern_, n, k, w);
    std::vector<uint8_t> sliced(whole.size(), 0xCD);
    for (size_t n0 = 0; n0 < n; n0 += kern_->n_step) {
      const size_t rows = std::min(kern_->n_step, n - n0);
      kern_->pack_rhs(rows, k, w.data() + n0 * 2 * k, sliced.data() + kern_->rhs_packed_offset(n0, k));
    }
    EXPECT_EQ(whole, sliced) << "k=" << k;
  }
}

TEST_F(BfmmlaLayout, PackedSizeIsTheFileSizeForKAMultipleOfFour) {
  for (size_t n : {size_t{4}, size_t{4096}}) EXPECT_EQ(kern_->rhs_packed_size(n, 4096), n * 2 * 4096) << n;
  EXPECT_EQ(kern_->rhs_packed_size(1, 4096), 4 * 2 * 4096u) << "n padded to a whole tile";
  EXPECT_EQ(kern_->rhs_packed_size(4, 4097), 4 * 2 * 4100u) << "k padded to a whole chunk";
}

}  // namespace
