// The attention products over a quantized KV cache (ops.h: dot_rows_quant,
// weighted_rows_quant) of every instruction set this CPU runs against their
// scalar twins, and the cache's rows against ggml's reference quantizers.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/ops/ops.h"
#include "engine/ops/ops_isa.h"
#include "engine/runtime/kv_cache.h"
#include "kernels/ref/fp16.h"
#include "kernels/ref/quants.h"

namespace {

using engine::KvType;
using engine::ops::RowQuant;

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// n rows of d values quantized as t, rows `gap` bytes further apart than
// their blocks need (a stride the kernels must honour).
std::vector<uint8_t> quantized_rows(RowQuant t, const std::vector<float>& x, size_t n, size_t d, size_t gap) {
  const KvType kv = t == RowQuant::q8_0 ? KvType::q8_0 : KvType::q4_0;
  const size_t row = engine::kv_row_bytes(kv, d) + gap;
  std::vector<uint8_t> out(n * row, 0xA5);
  for (size_t p = 0; p < n; ++p) {
    if (t == RowQuant::q8_0) {
      kernels::ref::quantize_row_q8_0(x.data() + p * d, out.data() + p * row, d);
    } else {
      kernels::ref::quantize_row_q4_0(x.data() + p * d, out.data() + p * row, d);
    }
  }
  return out;
}

// The scores are integer block dots summed in block order: the same bits on
// every instruction set. The weighted rows' vector paths sum the same floats
// (codes times the block's scale, one rounding, as dequantize_row) in another
// order: each of the terms of a sum can move the result by at most that many
// ulp-sized steps of the sum of the terms' magnitudes, so |got - want| <=
// 2 n FLT_EPSILON sum|term|.
double order_bound(size_t d, double magnitude) { return 2.0 * static_cast<double>(d) * FLT_EPSILON * magnitude; }

TEST(OpsQuant, RowProductsMatchTheirScalarTwinsOnEveryShape) {
  for (const engine::ops::IsaOps* v : engine::ops::isa_ops_variants()) {
    SCOPED_TRACE(std::string("isa ") + v->isa);
    for (RowQuant t : {RowQuant::q8_0, RowQuant::q4_0}) {
      for (size_t d : {32, 64, 128, 256}) {
        for (size_t n_q : {1, 2, 3, 4, 5, 8, 9}) {
          for (size_t n_k : {1, 2, 3, 5, 9, 17}) {
            SCOPED_TRACE("type " + std::to_string(static_cast<int>(t)) + " d=" + std::to_string(d) +
                         " queries=" + std::to_string(n_q) + " positions=" + std::to_string(n_k));
            const size_t gap = 6, row = engine::kv_row_bytes(t == RowQuant::q8_0 ? KvType::q8_0 : KvType::q4_0, d) + gap;
            const std::vector<float> x = random_floats(n_k * d, static_cast<unsigned>(d + n_k));
            const std::vector<uint8_t> k = quantized_rows(t, x, n_k, d, gap);
            const size_t q_stride = d + 3, s_stride = n_k + 1, o_stride = d + 1;
            const std::vector<float> q = random_floats(n_q * q_stride, static_cast<unsigned>(n_q));
            std::vector<float> got(n_q * s_stride, -7.0f), want(n_q * s_stride, -7.0f);
            v->dot_rows_quant(t, q.data(), q_stride, n_q, k.data(), row, n_k, d, 0.5f, got.data(), s_stride);
            engine::ops::dot_rows_quant_ref(t, q.data(), q_stride, n_q, k.data(), row, n_k, d, 0.5f, want.data(),
                                            s_stride);
            for (size_t i = 0; i < n_q; ++i) {
              for (size_t p = 0; p < n_k; ++p) EXPECT_EQ(got[i * s_stride + p], want[i * s_stride + p]);
            }
            for (size_t i = 0; i < n_q; ++i) EXPECT_EQ(got[i * s_stride + n_k], -7.0f) << "wrote past the positions";

            // Weights of each query over the positions; the products add to out.
            const std::vector<float> w = random_floats(n_q * s_stride, 99);
            std::vector<float> out_got = random_floats(n_q * o_stride, 5), out_want = out_got;
            const float sentinel = out_got[d];
            v->weighted_rows_quant(t, w.data(), s_stride, n_q, k.data(), row, n_k, d, out_got.data(), o_stride);
            engine::ops::weighted_rows_quant_ref(t, w.data(), s_stride, n_q, k.data(), row, n_k, d, out_want.data(),
                                                 o_stride);
            for (size_t i = 0; i < n_q; ++i) {
              for (size_t c = 0; c < d; ++c) {
                double mag = std::fabs(out_want[i * o_stride + c]);
                for (size_t p = 0; p < n_k; ++p) mag += std::fabs(double{w[i * s_stride + p]}) * 2.0;
                EXPECT_NEAR(out_got[i * o_stride + c], out_want[i * o_stride + c], order_bound(n_k + 1, mag));
              }
            }
            EXPECT_EQ(out_got[d], sentinel) << "wrote past the row";
          }
        }
      }
    }
  }
}

// The twin itself against the definition: with keys and a query whose values
// are exactly representable (codes times a power-of-two scale), neither
// rounding to Q8_0 changes them and the scores are those of the floats.
// Values that are not (a query of ones: 127 steps of fp16(1/127)) show that
// the query is rounded to Q8_0, as llama.cpp's is.
TEST(OpsQuant, ScalarTwinIsTheProductOfTheQ8Rows) {
  const size_t d = 64;
  const auto exact = [](int salt) {
    std::vector<float> x(d);
    for (size_t c = 0; c < d; ++c) x[c] = static_cast<float>(static_cast<int>((c * 7 + salt) % 15) - 7) * 0.25f;
    x[3] = 127 * 0.25f;  // each block's largest magnitude: the scale is then 0.25 exactly
    x[40] = -127 * 0.25f;
    return x;
  };
  const std::vector<float> x = exact(0), q = exact(4);
  const std::vector<uint8_t> k = quantized_rows(RowQuant::q8_0, x, 1, d, 0);
  float s = 0.0f;
  engine::ops::dot_rows_quant_ref(RowQuant::q8_0, q.data(), d, 1, k.data(), k.size(), 1, d, 0.5f, &s, 1);
  float want = 0.0f;
  for (size_t c = 0; c < d; ++c) want += x[c] * q[c];
  EXPECT_EQ(s, want * 0.5f);

  const std::vector<float> ones(d, 1.0f);
  engine::ops::dot_rows_quant_ref(RowQuant::q8_0, ones.data(), d, 1, k.data(), k.size(), 1, d, 1.0f, &s, 1);
  float sum = 0.0f;
  for (float v : x) sum += v;
  const float d_ones = kernels::ref::fp16_to_fp32(kernels::ref::fp32_to_fp16(1.0f / 127));
  EXPECT_NE(s, sum) << "the query was not rounded to Q8_0";
  EXPECT_NEAR(s, sum * 127 * d_ones, 1e-4 * std::fabs(sum));
}

// A quantized cache stores each row as ggml's reference quantizer does
// (llama.cpp's -ctk / -ctv q8_0 and q4_0 make the same bytes), per KV head.
TEST(OpsQuant, CacheRowsAreTheReferenceQuantizersBytes) {
  for (KvType kv : {KvType::q8_0, KvType::q4_0}) {
    SCOPED_TRACE(engine::kv_type_name(kv));
    const uint32_t n_head_kv = 2, hd = 64;
    engine::AttentionCache cache(kv, 4, 0, n_head_kv, hd, hd);
    const std::vector<float> key = random_floats(n_head_kv * hd, 1), value = random_floats(n_head_kv * hd, 2);
    cache.store(2, key.data(), value.data());
    const size_t row = engine::kv_row_bytes(kv, hd);
    EXPECT_EQ(cache.bytes(), 2 * 4 * n_head_kv * row);
    std::vector<uint8_t> want(row);
    for (uint32_t h = 0; h < n_head_kv; ++h) {
      for (const auto& [x, got] : {std::pair{&key, cache.key_row(h, 2)}, std::pair{&value, cache.value_row(h, 2)}}) {
        if (kv == KvType::q8_0) {
          kernels::ref::quantize_row_q8_0(x->data() + h * hd, want.data(), hd);
        } else {
          kernels::ref::quantize_row_q4_0(x->data() + h * hd, want.data(), hd);
        }
        EXPECT_EQ(std::vector<uint8_t>(got, got + row), want) << "head " << h;
      }
    }
  }
}

TEST(OpsQuant, KvTypesParseAndSizeTheirRows) {
  for (KvType t : {KvType::f16, KvType::f32, KvType::q8_0, KvType::q4_0}) {
    EXPECT_EQ(engine::parse_kv_type(engine::kv_type_name(t)), t);
  }
  EXPECT_FALSE(engine::parse_kv_type("q5_0").has_value());
  EXPECT_EQ(engine::kv_row_bytes(KvType::q8_0, 128), 4u * 34);
  EXPECT_EQ(engine::kv_row_bytes(KvType::q4_0, 128), 4u * 18);
  EXPECT_EQ(engine::kv_row_bytes(KvType::f16, 128), 256u);
}

}  // namespace
