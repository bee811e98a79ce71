// The GGUF reader on every real file in ../shared/models, and its typed accessors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "gguf/file.h"
#include "tests/support/gguf_bytes.h"
#include "tests/support/shared_data.h"

namespace {

using gguf::GgmlType;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const gguf::Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GgufReader, Stories260KHeaderMetadataAndTensors) {
  const std::filesystem::path path = ::engine_test::default_model();
  const gguf::File f = gguf::File::open(path.string());
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.file_size(), 1185376u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  ASSERT_EQ(f.tensors().size(), 48u);
  EXPECT_EQ(f.metadata().size(), 19u);

  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_uint("llama.embedding_length"), 64u);
  EXPECT_EQ(f.get_uint("llama.block_count"), 5u);
  EXPECT_EQ(f.get_uint("llama.attention.head_count"), 8u);
  EXPECT_EQ(f.get_uint("llama.attention.head_count_kv"), 4u);
  EXPECT_NEAR(f.get_float("llama.attention.layer_norm_rms_epsilon"), 1e-5, 1e-9);
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "llama");
  const gguf::Value& tokens = f.get_array("tokenizer.ggml.tokens");
  EXPECT_EQ(tokens.array_type(), gguf::ValueType::STRING);
  ASSERT_EQ(tokens.array_size(), 512u);
  EXPECT_EQ(*tokens.at(1).to_string(), "<s>");
  EXPECT_EQ(*tokens.at(2).to_string(), "</s>");
  const gguf::Value& scores = f.get_array("tokenizer.ggml.scores");
  EXPECT_EQ(scores.array_type(), gguf::ValueType::FLOAT32);
  EXPECT_EQ(scores.array_size(), 512u);

  const gguf::TensorInfo& emb = f.tensor("token_embd.weight");
  EXPECT_EQ(emb.type, GgmlType::F32);
  EXPECT_EQ(emb.n_dims, 2u);
  EXPECT_EQ(emb.ne[0], 64u);
  EXPECT_EQ(emb.ne[1], 512u);
  EXPECT_EQ(emb.n_bytes, 64u * 512u * 4u);
  EXPECT_EQ(emb.shape_string(), "[64, 512]");
  // The data pointer is into the mapping: finite weights of plausible size.
  float first[64];
  std::memcpy(first, f.tensor_data(emb), sizeof first);
  for (float x : first) {
    EXPECT_TRUE(std::isfinite(x));
    EXPECT_LT(std::fabs(x), 100.0f);
  }
  uint64_t total = 0;
  for (const auto& t : f.tensors()) total += t.n_bytes;
  EXPECT_LE(f.data_offset() + total, f.file_size());
}

TEST(GgufReader, EveryFileInSharedModelsOpensOrGivesTheVersionError) {
  const auto dir = engine_test::shared_dir() / "models";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "missing shared folder " << dir;
  int opened = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".gguf") continue;
    SCOPED_TRACE(entry.path().string());
    if (entry.path().parent_path().filename() == "legacy") {
      const std::string msg = error_of([&] { gguf::File::open(entry.path().string()); });
      EXPECT_NE(msg.find("unsupported GGUF version 1"), std::string::npos) << msg;
      EXPECT_NE(msg.find(entry.path().filename().string()), std::string::npos) << msg;
      continue;
    }
    const gguf::File f = gguf::File::open(entry.path().string());
    EXPECT_TRUE(f.version() == 2 || f.version() == 3);
    for (const auto& t : f.tensors()) {
      EXPECT_EQ(t.offset % f.alignment(), 0u) << t.name;
      EXPECT_LE(f.data_offset() + t.offset + t.n_bytes, f.file_size()) << t.name;
    }
    // Every metadata value converts to its display form (walks nested arrays).
    for (const auto& kv : f.metadata()) EXPECT_FALSE(kv.value.to_display().empty()) << kv.key;
    ++opened;
  }
  EXPECT_GE(opened, 20) << "expected the reference, vocab and model files";
}

TEST(GgufReader, ReferenceModelTensorTypes) {
  ENGINE_REQUIRE_SHARED(path, "models/reference/llama-d256-Q4_K_M.gguf");
  const gguf::File f = gguf::File::open(path.string());
  std::map<GgmlType, int> matrices;
  for (const auto& t : f.tensors()) {
    if (t.n_dims == 2) ++matrices[t.type];
  }
  EXPECT_EQ(matrices[GgmlType::Q4_K], 25);
  EXPECT_EQ(matrices[GgmlType::Q6_K], 5);
  EXPECT_EQ(f.tensor("output.weight").type, GgmlType::Q6_K);
  EXPECT_EQ(f.get_uint("llama.block_count"), 4u);
}

TEST(GgufReader, VocabularyOnlyFileHasNoTensors) {
  ENGINE_REQUIRE_SHARED(path, "models/vocab/ggml-vocab-gpt-2.gguf");
  const gguf::File f = gguf::File::open(path.string());
  EXPECT_TRUE(f.tensors().empty());
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_GT(f.get_array("tokenizer.ggml.merges").array_size(), 1000u);
}

TEST(GgufReader, TypedAccessorErrorsNameFileKeyAndTypes) {
  const std::filesystem::path path = ::engine_test::default_model();
  const gguf::File f = gguf::File::open(path.string());
  std::string msg = error_of([&] { f.get_uint("llama.no_such_key"); });
  EXPECT_NE(msg.find("stories260K.gguf"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'llama.no_such_key' is missing"), std::string::npos) << msg;

  msg = error_of([&] { f.get_uint("general.architecture"); });
  EXPECT_NE(msg.find("'general.architecture' is string \"llama\", expected a non-negative integer"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("offset "), std::string::npos) << msg;

  msg = error_of([&] { f.get_string("llama.block_count"); });
  EXPECT_NE(msg.find("expected a string"), std::string::npos) << msg;
  msg = error_of([&] { f.get_array("llama.block_count"); });
  EXPECT_NE(msg.find("expected an array"), std::string::npos) << msg;
  msg = error_of([&] { f.tensor("blk.99.attn_q.weight"); });
  EXPECT_NE(msg.find("tensor 'blk.99.attn_q.weight' is missing"), std::string::npos) << msg;

  EXPECT_FALSE(f.find_uint("llama.no_such_key").has_value());
  EXPECT_EQ(f.find_array("llama.no_such_key"), nullptr);
}

// Every value type, including nested arrays, built byte by byte.
TEST(GgufReader, EveryValueTypeAndNestedArrays) {
  using namespace engine_test;
  GgufBytes b;
  b.header(3, 0, 15);
  b.key("u8", kU8).put<uint8_t>(200);
  b.key("i8", kI8).put<int8_t>(-100);
  b.key("u16", kU16).put<uint16_t>(60000);
  b.key("i16", kI16).put<int16_t>(-30000);
  b.key("u32", kU32).put<uint32_t>(4000000000u);
  b.key("i32", kI32).put<int32_t>(-2000000000);
  b.key("f32", kF32).put<float>(1.5f);
  b.key("bool", kBool).put<uint8_t>(1);
  b.key("str", kString).str("héllo");
  b.key("u64", kU64).put<uint64_t>(UINT64_MAX);
  b.key("i64", kI64).put<int64_t>(INT64_MIN);
  b.key("f64", kF64).put<double>(-2.25);
  b.key("arr_i16", kArray).u32(kI16).u64(3).put<int16_t>(-1).put<int16_t>(2).put<int16_t>(-3);
  b.key("arr_str", kArray).u32(kString).u64(2).str("a").str("");
  // [[1, 2], [], [3]] as an array of arrays of u32
  b.key("nested", kArray).u32(kArray).u64(3);
  b.u32(kU32).u64(2).u32(1).u32(2);
  b.u32(kU32).u64(0);
  b.u32(kU32).u64(1).u32(3);

  const gguf::File f = gguf::File::parse(b.bytes, "values.gguf");
  EXPECT_EQ(f.get_uint("u8"), 200u);
  EXPECT_EQ(f.get_int("i8"), -100);
  EXPECT_EQ(f.get_uint("u16"), 60000u);
  EXPECT_EQ(f.get_int("i16"), -30000);
  EXPECT_EQ(f.get_uint("u32"), 4000000000u);
  EXPECT_EQ(f.get_int("i32"), -2000000000);
  EXPECT_EQ(f.get_float("f32"), 1.5);
  EXPECT_TRUE(f.get_bool("bool"));
  EXPECT_EQ(f.get_string("str"), "héllo");
  EXPECT_EQ(f.get_uint("u64"), UINT64_MAX);
  EXPECT_EQ(f.get_int("i64"), INT64_MIN);
  EXPECT_EQ(f.get_float("f64"), -2.25);
  // Lossy conversions are refused, not wrapped.
  EXPECT_THROW(f.get_uint("i8"), gguf::Error);
  EXPECT_THROW(f.get_int("u64"), gguf::Error);
  EXPECT_THROW(f.get_float("u32"), gguf::Error);

  const gguf::Value& a = f.get_array("arr_i16");
  ASSERT_EQ(a.array_size(), 3u);
  EXPECT_EQ(*a.at(0).to_int(), -1);
  EXPECT_EQ(*a.at(2).to_int(), -3);
  EXPECT_THROW(a.at(3), std::out_of_range);
  const gguf::Value& s = f.get_array("arr_str");
  EXPECT_EQ(*s.at(0).to_string(), "a");
  EXPECT_EQ(*s.at(1).to_string(), "");
  const gguf::Value& n = f.get_array("nested");
  ASSERT_EQ(n.array_size(), 3u);
  EXPECT_EQ(n.array_type(), gguf::ValueType::ARRAY);
  EXPECT_EQ(n.at(0).array_size(), 2u);
  EXPECT_EQ(*n.at(0).at(1).to_uint(), 2u);
  EXPECT_EQ(n.at(1).array_size(), 0u);
  EXPECT_EQ(*n.at(2).at(0).to_uint(), 3u);
  EXPECT_EQ(n.to_display(), "[[1, 2], [], [3]]");
  // raw_value covers the type and the whole encoded value.
  EXPECT_EQ(f.find("u8")->raw_value.size(), 5u);
  EXPECT_EQ(f.find("arr_str")->raw_value.size(), 4u + 4 + 8 + 9 + 8);
}

TEST(GgufReader, Version2IsAccepted) {
  engine_test::GgufBytes b;
  b.header(2, 1, 1);
  b.key("general.architecture", engine_test::kString).str("llama");
  b.tensor_info("w", {4, 2}, 0, 0);
  b.pad_to(32).zeros(32);
  const gguf::File f = gguf::File::parse(b.bytes, "v2.gguf");
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.tensor("w").n_bytes, 32u);
}

}  // namespace
