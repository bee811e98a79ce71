// The ref quantizers of Q2_K, Q3_K, IQ4_NL and IQ4_XS against the bytes
// llama.cpp's ggml_quantize_chunk wrote for the same float rows (corner rows:
// zeros, values below ggml's all-zero threshold, fp16-subnormal scales, one huge
// outlier, a ramp, all-positive and constant rows, zero sub-blocks, random
// normal rows), and the quantizers under an importance matrix (every type
// that takes one) against the bytes it wrote given quant_weights.
// tests/kernels/ggml_rows/COMMANDS.md says how the files were made.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/ref/type_ops.h"
#include "tests/support/json.h"

namespace {

using gguf::GgmlType;

const std::filesystem::path kFile = std::filesystem::path(ENGINE_SOURCE_DIR) / "tests/kernels/ggml_rows/quant_rows.json";
const std::filesystem::path kWeightedFile =
    std::filesystem::path(ENGINE_SOURCE_DIR) / "tests/kernels/ggml_rows/quant_rows_imatrix.json";

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> bytes(hex.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return bytes;
}

// Quantizes every row with `quantize` and compares with the bytes in
// expected[r] (hex).
template <typename Quantize>
void expect_llama_cpp_bytes(GgmlType type, size_t n, const engine_test::Json& rows, const engine_test::Json& expected,
                            Quantize quantize) {
  ASSERT_EQ(expected.size(), rows.size());
  ASSERT_GT(rows.size(), 0u);
  const size_t row_bytes = n / gguf::traits(type).block_size * gguf::traits(type).block_bytes;
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::vector<uint8_t> f32 = from_hex(rows[r]["f32_hex"].string());
    ASSERT_EQ(f32.size(), n * sizeof(float));
    std::vector<float> x(n);
    std::memcpy(x.data(), f32.data(), f32.size());
    const std::vector<uint8_t> want = from_hex(expected[r].string());
    ASSERT_EQ(want.size(), row_bytes);
    std::vector<uint8_t> got(row_bytes, 0xAA);
    quantize(x.data(), got.data(), n);
    size_t differing = 0, first = row_bytes;
    for (size_t i = 0; i < row_bytes; ++i) {
      if (got[i] != want[i]) {
        ++differing;
        if (first == row_bytes) first = i;
      }
    }
    EXPECT_EQ(differing, 0u) << rows[r]["name"].string() << ": first differing byte " << first << " of "
                             << row_bytes;
  }
}

std::string type_name(const testing::TestParamInfo<GgmlType>& param_info) {
  return std::string(gguf::traits(param_info.param).name);
}

class GgmlRows : public testing::TestWithParam<GgmlType> {};

TEST_P(GgmlRows, QuantizeRowIsByteExactWithLlamaCpp) {
  const GgmlType type = GetParam();
  const engine_test::Json file = engine_test::Json::parse_file(kFile);
  const kernels::ref::TypeOps* ops = kernels::ref::type_ops(type);
  ASSERT_NE(ops, nullptr);
  expect_llama_cpp_bytes(type, static_cast<size_t>(file["n_per_row"].number()), file["rows"],
                         file["types"][std::string(gguf::traits(type).name)], ops->quantize_row);
}

INSTANTIATE_TEST_SUITE_P(Types, GgmlRows, testing::Values(GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS),
                         type_name);

// Under an importance matrix (llama-quantize --imatrix): the same rows with
// one weight per column, zero for a whole block of columns, against
// ggml_quantize_chunk given those quant_weights.
class GgmlRowsWeighted : public testing::TestWithParam<GgmlType> {};

TEST_P(GgmlRowsWeighted, QuantizeRowWeightedIsByteExactWithLlamaCpp) {
  const GgmlType type = GetParam();
  const engine_test::Json rows_file = engine_test::Json::parse_file(kFile);
  const engine_test::Json file = engine_test::Json::parse_file(kWeightedFile);
  const size_t n = static_cast<size_t>(file["n_per_row"].number());
  const std::vector<uint8_t> w = from_hex(file["weights_f32_hex"].string());
  ASSERT_EQ(w.size(), n * sizeof(float));
  std::vector<float> weights(n);
  std::memcpy(weights.data(), w.data(), w.size());
  const kernels::ref::TypeOps* ops = kernels::ref::type_ops(type);
  ASSERT_NE(ops, nullptr);
  ASSERT_NE(ops->quantize_row_weighted, nullptr);
  expect_llama_cpp_bytes(type, n, rows_file["rows"], file["types"][std::string(gguf::traits(type).name)],
                         [&](const float* x, void* dst, size_t k) { ops->quantize_row_weighted(x, dst, k, weights.data()); });
}

INSTANTIATE_TEST_SUITE_P(Types, GgmlRowsWeighted,
                         testing::Values(GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q2_K,
                                         GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_NL,
                                         GgmlType::IQ4_XS),
                         type_name);

}  // namespace
