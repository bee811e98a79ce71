// The GGUF writer: round trips through the reader, byte-identical rewrites of
// real files, and the temporary-file-and-rename guarantee.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;
using gguf::GgmlType;

std::vector<uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class GgufWriter : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = engine_test::temp_dir("gguf-writer"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Files in the folder other than `keep`: leftovers of a failed write.
  std::vector<std::string> stray_files(const std::string& keep = "") const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().filename() != keep) out.push_back(e.path().filename().string());
    }
    return out;
  }
  fs::path dir_;
};

TEST_F(GgufWriter, RoundTripsMetadataAndTensors) {
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 2);
  w.set_i32("neg", -7);
  w.set_u64("big", 1ull << 40);
  w.set_f32("eps", 1e-5f);
  w.set_f64("pi", 3.14159265358979);
  w.set_bool("flag", true);
  w.set_u8("u8", 255);
  w.set_i8("i8", -128);
  w.set_u16("u16", 65535);
  w.set_i16("i16", -32768);
  w.set_i64("i64", -(1ll << 50));
  const std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "héllo"};
  w.set_array_strings("tokenizer.ggml.tokens", tokens);
  const std::vector<float> scores = {0.f, -1.5f, 2.f, 3.25f};
  w.set_array_f32("tokenizer.ggml.scores", scores);
  const std::vector<int32_t> types = {2, 3, 3, 1};
  w.set_array_i32("tokenizer.ggml.token_type", types);
  w.set_u32("llama.block_count", 3);  // replaces in place

  std::vector<float> a(8 * 3);
  std::iota(a.begin(), a.end(), 0.f);
  const std::vector<uint64_t> ne_a = {8, 3};
  w.add_tensor("a", GgmlType::F32, ne_a, {reinterpret_cast<const uint8_t*>(a.data()), a.size() * 4});
  // Q8_0: 2 rows of 32 elements = 2 blocks of 34 bytes, produced in two writes.
  const std::vector<uint64_t> ne_b = {32, 2};
  w.add_tensor("b", GgmlType::Q8_0, ne_b, [](gguf::TensorSink& sink) {
    std::vector<uint8_t> block(34, 7);
    sink.write(block.data(), block.size());
    sink.write(block.data(), block.size());
  });
  const std::vector<uint64_t> ne_c = {5};
  const std::vector<uint16_t> c = {1, 2, 3, 4, 5};
  w.add_tensor("c", GgmlType::F16, ne_c, {reinterpret_cast<const uint8_t*>(c.data()), 10});

  const std::string out = path("round.gguf");
  w.write(out);
  EXPECT_EQ(fs::file_size(out), w.file_size());
  EXPECT_EQ(stray_files("round.gguf").size(), 0u);

  const gguf::File f = gguf::File::open(out);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.metadata().size(), 15u);
  EXPECT_EQ(f.metadata()[1].key, "llama.block_count");  // kept its position
  EXPECT_EQ(f.get_uint("llama.block_count"), 3u);
  EXPECT_EQ(f.get_int("neg"), -7);
  EXPECT_EQ(f.get_uint("big"), 1ull << 40);
  EXPECT_EQ(f.get_float("eps"), static_cast<double>(1e-5f));
  EXPECT_EQ(f.get_float("pi"), 3.14159265358979);
  EXPECT_TRUE(f.get_bool("flag"));
  EXPECT_EQ(f.get_uint("u8"), 255u);
  EXPECT_EQ(f.get_int("i8"), -128);
  EXPECT_EQ(f.get_uint("u16"), 65535u);
  EXPECT_EQ(f.get_int("i16"), -32768);
  EXPECT_EQ(f.get_int("i64"), -(1ll << 50));
  EXPECT_EQ(*f.get_array("tokenizer.ggml.tokens").at(3).to_string(), "héllo");
  EXPECT_EQ(*f.get_array("tokenizer.ggml.scores").at(3).to_double(), 3.25);
  EXPECT_EQ(*f.get_array("tokenizer.ggml.token_type").at(0).to_int(), 2);

  ASSERT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(std::memcmp(f.tensor_data(f.tensor("a")), a.data(), a.size() * 4), 0);
  const auto& tb = f.tensor("b");
  EXPECT_EQ(tb.type, GgmlType::Q8_0);
  EXPECT_EQ(tb.n_bytes, 68u);
  EXPECT_EQ(f.tensor_data(tb)[67], 7);
  EXPECT_EQ(std::memcmp(f.tensor_data(f.tensor("c")), c.data(), 10), 0);
  for (const auto& t : f.tensors()) EXPECT_EQ(t.offset % 32, 0u);
}

TEST_F(GgufWriter, HonoursACustomAlignment) {
  gguf::Writer w;
  w.set_u32("general.alignment", 256);
  const std::vector<uint8_t> data(3, 1);
  const std::vector<uint64_t> ne = {3};
  w.add_tensor("x", GgmlType::I8, ne, data);
  w.add_tensor("y", GgmlType::I8, ne, data);
  w.write(path("aligned.gguf"));
  const gguf::File f = gguf::File::open(path("aligned.gguf"));
  EXPECT_EQ(f.alignment(), 256u);
  EXPECT_EQ(f.data_offset() % 256, 0u);
  EXPECT_EQ(f.tensor("y").offset, 256u);
}

TEST_F(GgufWriter, RewritingARealFileIsByteIdentical) {
  const std::filesystem::path src = ::engine_test::default_model();
  const gguf::File in = gguf::File::open(src.string());
  gguf::Writer w;
  w.copy_metadata(in);
  for (const auto& t : in.tensors()) {
    w.add_tensor(t.name, t.type, std::span(t.ne.data(), t.n_dims), std::span(in.tensor_data(t), t.n_bytes));
  }
  w.write(path("copy.gguf"));
  EXPECT_EQ(read_all(src), read_all(path("copy.gguf")));
}

TEST_F(GgufWriter, NestedArraysSurviveARawCopy) {
  // u32 type ARRAY, elem ARRAY, 2 items: [[5], []]
  std::vector<uint8_t> raw;
  auto put32 = [&](uint32_t v) { raw.insert(raw.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 4); };
  auto put64 = [&](uint64_t v) { raw.insert(raw.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 8); };
  put32(9), put32(9), put64(2);
  put32(4), put64(1), put32(5);
  put32(4), put64(0);
  gguf::Writer w;
  w.set_raw("nested", raw);
  w.write(path("nested.gguf"));
  const gguf::File f = gguf::File::open(path("nested.gguf"));
  EXPECT_EQ(f.get_array("nested").to_display(), "[[5], []]");
  // A truncated encoding is refused when set, not when read back.
  raw.pop_back();
  EXPECT_THROW(w.set_raw("bad", raw), gguf::Error);
}

TEST_F(GgufWriter, AFailedWriteLeavesNoFileAndKeepsTheOldOne) {
  const std::string out = path("model.gguf");
  {
    std::ofstream old(out);
    old << "previous contents";
  }
  gguf::Writer w;
  const std::vector<uint64_t> ne = {32, 4};
  w.add_tensor("w", GgmlType::F32, ne, [](gguf::TensorSink& sink) {
    const std::vector<uint8_t> half(32 * 4 * 2, 0);
    sink.write(half.data(), half.size());
    throw std::runtime_error("interrupted while quantizing");
  });
  EXPECT_THROW(w.write(out), std::runtime_error);
  EXPECT_EQ(read_all(out), (std::vector<uint8_t>{'p', 'r', 'e', 'v', 'i', 'o', 'u', 's', ' ', 'c', 'o', 'n', 't',
                                                 'e', 'n', 't', 's'}));
  EXPECT_EQ(stray_files("model.gguf").size(), 0u) << "temporary file left behind";
}

TEST_F(GgufWriter, AProducerWritingTheWrongSizeIsAnError) {
  gguf::Writer w;
  const std::vector<uint64_t> ne = {32};
  w.add_tensor("short", GgmlType::F32, ne, [](gguf::TensorSink& sink) {
    const float x = 1.0f;
    sink.write(&x, sizeof x);
  });
  try {
    w.write(path("bad.gguf"));
    FAIL() << "expected an error";
  } catch (const gguf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'short': the producer wrote 4 bytes, 128 expected"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(stray_files().empty());
}

TEST_F(GgufWriter, RefusesInvalidTensors) {
  gguf::Writer w;
  const std::vector<uint8_t> data(18);
  const std::vector<uint64_t> bad_row = {31};
  EXPECT_THROW(w.add_tensor("q", GgmlType::Q4_0, bad_row, data), gguf::Error);
  const std::vector<uint64_t> ok = {32};
  w.add_tensor("q", GgmlType::Q4_0, ok, data);
  EXPECT_THROW(w.add_tensor("q", GgmlType::Q4_0, ok, data), gguf::Error);  // duplicate name
  const std::vector<uint64_t> too_many = {1, 1, 1, 1, 1};
  EXPECT_THROW(w.add_tensor("r", GgmlType::I8, too_many, std::span<const uint8_t>(data.data(), 1)), gguf::Error);
  EXPECT_THROW(w.add_tensor("s", GgmlType::Q4_0, ok, std::span<const uint8_t>(data.data(), 17)), gguf::Error);
  EXPECT_EQ(w.tensor_count(), 1u);
  w.set_u32("general.alignment", 48);
  EXPECT_THROW(w.write(path("x.gguf")), gguf::Error);
}

}  // namespace
