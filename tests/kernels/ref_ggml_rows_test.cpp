// The ref quantizers of Q2_K, Q3_K, IQ4_NL and IQ4_XS against the bytes
// llama.cpp's ggml_quantize_chunk wrote for the same float rows (corner rows:
// zeros, values below ggml's all-zero threshold, fp16-subnormal scales, one huge
// outlier, a ramp, all-positive and constant rows, zero sub-blocks, random
// normal rows). tests/kernels/ggml_rows/COMMANDS.md says how the file was made.
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

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> bytes(hex.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return bytes;
}

class GgmlRows : public testing::TestWithParam<GgmlType> {};

TEST_P(GgmlRows, QuantizeRowIsByteExactWithLlamaCpp) {
  const GgmlType type = GetParam();
  const engine_test::Json file = engine_test::Json::parse_file(kFile);
  const size_t n = static_cast<size_t>(file["n_per_row"].number());
  const engine_test::Json& expected = file["types"][std::string(gguf::traits(type).name)];
  const engine_test::Json& rows = file["rows"];
  ASSERT_EQ(expected.size(), rows.size());
  ASSERT_GT(rows.size(), 0u);
  const kernels::ref::TypeOps* ops = kernels::ref::type_ops(type);
  ASSERT_NE(ops, nullptr);
  const size_t row_bytes = n / gguf::traits(type).block_size * gguf::traits(type).block_bytes;
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::vector<uint8_t> f32 = from_hex(rows[r]["f32_hex"].string());
    ASSERT_EQ(f32.size(), n * sizeof(float));
    std::vector<float> x(n);
    std::memcpy(x.data(), f32.data(), f32.size());
    const std::vector<uint8_t> want = from_hex(expected[r].string());
    ASSERT_EQ(want.size(), row_bytes);
    std::vector<uint8_t> got(row_bytes, 0xAA);
    ops->quantize_row(x.data(), got.data(), n);
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

INSTANTIATE_TEST_SUITE_P(Types, GgmlRows, testing::Values(GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS),
                         [](const testing::TestParamInfo<GgmlType>& param_info) {
                           return std::string(gguf::traits(param_info.param).name);
                         });

}  // namespace
