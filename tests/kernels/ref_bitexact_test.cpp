// Bit-exactness with llama.cpp: quantizing the F32 weights of the reference
// models with our quantize_row must reproduce, byte for byte, every tensor that
// llama-quantize wrote (../shared/models/reference, made without an imatrix, so
// llama.cpp used its *_ref quantizers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "kernels/ref/type_ops.h"
#include "tests/support/sanitized.h"
#include "tests/support/shared_data.h"

namespace {

using gguf::GgmlType;

struct ModelFile {
  const char* f32;
  const char* quantized;
};

std::string PrintModelFile(const testing::TestParamInfo<ModelFile>& info) {
  std::string name = info.param.quantized;
  name = name.substr(name.rfind('/') + 1);
  name = name.substr(0, name.find('.'));
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

struct Mismatch {
  uint64_t blocks = 0;
  uint64_t differing_blocks = 0;
  uint64_t elements = 0;
  double squared_error_ours = 0;    // against the F32 weights
  double squared_error_theirs = 0;  // the same for llama.cpp's bytes
};

void PrintTo(const ModelFile& f, std::ostream* os) { *os << f.quantized; }

// How much to check. Natively: every row of every file (~0.8 s). The K-quant
// search costs ~20 us a block natively, ~4x that under sanitizers and 20x to
// 400x under qemu (-cpu a64fx runs float code another ~15x slower than the
// other models), so there only every n-th row of each tensor, and under qemu
// only the llama files (the qwen ones add no platform coverage). Bit-exactness
// is all or nothing per platform (a mismatch comes from the compiler, e.g. FMA
// contraction, which changed 6% of Q4_K blocks when it happened), so a sample
// of every tensor finds it. ENGINE_REF_BITEXACT_FULL=1 checks everything.
struct Sampling {
  uint64_t legacy_row_stride = 1;  // F16, Q8_0, Q4_0
  uint64_t k_row_stride = 1;       // Q4_K, Q6_K
  bool llama_only = false;
};

bool env_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

Sampling sampling() {
  if (env_set("ENGINE_REF_BITEXACT_FULL")) return {};
  if (env_set("ENGINE_QEMU_CPU")) return {8, 64, true};
  if (engine_test::kSanitized) return {1, 4, false};
  return {};
}

class RefBitExact : public testing::TestWithParam<ModelFile> {};

TEST_P(RefBitExact, QuantizeRowReproducesLlamaQuantize) {
  const Sampling sample = sampling();
  if (sample.llama_only && std::string(GetParam().f32).find("/llama-") == std::string::npos) {
    GTEST_SKIP() << "under qemu only the llama files are checked (all are, natively)";
  }
  ENGINE_REQUIRE_SHARED(f32_path, GetParam().f32);
  ENGINE_REQUIRE_SHARED(quantized_path, GetParam().quantized);
  const gguf::File source = gguf::File::open(f32_path.string());
  const gguf::File quantized = gguf::File::open(quantized_path.string());

  std::map<GgmlType, Mismatch> by_type;
  size_t tensors_checked = 0;
  for (const gguf::TensorInfo& t : quantized.tensors()) {
    if (t.n_dims < 2 || t.type == GgmlType::F32) continue;  // norms and biases stay F32
    const kernels::ref::TypeOps* ops = kernels::ref::type_ops(t.type);
    ASSERT_NE(ops, nullptr) << t.name << " has type " << gguf::type_name(t.type);
    const gguf::TensorInfo& original = source.tensor(t.name);
    ASSERT_EQ(original.type, GgmlType::F32) << t.name;
    ASSERT_EQ(original.ne, t.ne) << t.name;

    const uint64_t k = t.ne[0];
    const uint64_t row_bytes = *gguf::row_bytes(t.type, k);
    const auto& traits = gguf::traits(t.type);
    const uint64_t block_bytes = traits.block_bytes;
    const auto* weights = reinterpret_cast<const float*>(source.tensor_data(original));
    const uint8_t* expected = quantized.tensor_data(t);
    const uint64_t row_stride = traits.block_size == 256 ? sample.k_row_stride : sample.legacy_row_stride;
    std::vector<uint8_t> ours(row_bytes);
    std::vector<float> ours_back(k);
    std::vector<float> theirs_back(k);
    Mismatch& m = by_type[t.type];
    for (uint64_t r = 0; r < t.rows(); r += row_stride) {
      const float* x = weights + r * k;
      const uint8_t* want = expected + r * row_bytes;
      ops->quantize_row(x, ours.data(), k);
      m.blocks += row_bytes / block_bytes;
      if (std::memcmp(ours.data(), want, row_bytes) == 0) continue;
      for (uint64_t b = 0; b < row_bytes; b += block_bytes) {
        if (std::memcmp(ours.data() + b, want + b, block_bytes) != 0) ++m.differing_blocks;
      }
      // Only mismatching rows pay for the error statistics.
      ops->dequantize_row(ours.data(), ours_back.data(), k);
      ops->dequantize_row(want, theirs_back.data(), k);
      for (uint64_t i = 0; i < k; ++i) {
        m.squared_error_ours += std::pow(double{ours_back[i]} - x[i], 2);
        m.squared_error_theirs += std::pow(double{theirs_back[i]} - x[i], 2);
      }
      m.elements += k;
    }
    ++tensors_checked;
  }
  EXPECT_GT(tensors_checked, 0u);

  for (const auto& [type, m] : by_type) {
    EXPECT_EQ(m.differing_blocks, 0u)
        << gguf::type_name(type) << ": " << m.differing_blocks << " of " << m.blocks << " blocks differ; RMSE over "
        << "the differing rows ours/llama.cpp = " << std::sqrt(m.squared_error_ours / double(m.elements)) << " / "
        << std::sqrt(m.squared_error_theirs / double(m.elements));
    std::printf("  %s: %llu blocks checked, %llu differ\n", std::string(gguf::type_name(type)).c_str(),
                static_cast<unsigned long long>(m.blocks), static_cast<unsigned long long>(m.differing_blocks));
  }
}

#define REFERENCE "models/reference/"
INSTANTIATE_TEST_SUITE_P(
    Models, RefBitExact,
    testing::Values(ModelFile{REFERENCE "llama-d256-F32.gguf", REFERENCE "llama-d256-F16.gguf"},
                    ModelFile{REFERENCE "llama-d256-F32.gguf", REFERENCE "llama-d256-Q8_0.gguf"},
                    ModelFile{REFERENCE "llama-d256-F32.gguf", REFERENCE "llama-d256-Q4_0.gguf"},
                    ModelFile{REFERENCE "llama-d256-F32.gguf", REFERENCE "llama-d256-Q4_K_M.gguf"},
                    ModelFile{REFERENCE "qwen2-d256-F32.gguf", REFERENCE "qwen2-d256-F16.gguf"},
                    ModelFile{REFERENCE "qwen2-d256-F32.gguf", REFERENCE "qwen2-d256-Q8_0.gguf"},
                    ModelFile{REFERENCE "qwen2-d256-F32.gguf", REFERENCE "qwen2-d256-Q4_0.gguf"},
                    ModelFile{REFERENCE "qwen2-d256-F32.gguf", REFERENCE "qwen2-d256-Q4_K_M.gguf"},
                    ModelFile{REFERENCE "qwen3-d256-F32.gguf", REFERENCE "qwen3-d256-F16.gguf"},
                    ModelFile{REFERENCE "qwen3-d256-F32.gguf", REFERENCE "qwen3-d256-Q8_0.gguf"},
                    ModelFile{REFERENCE "qwen3-d256-F32.gguf", REFERENCE "qwen3-d256-Q4_0.gguf"},
                    ModelFile{REFERENCE "qwen3-d256-F32.gguf", REFERENCE "qwen3-d256-Q4_K_M.gguf"}),
    PrintModelFile);
#undef REFERENCE

}  // namespace
