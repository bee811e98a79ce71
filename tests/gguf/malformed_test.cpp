// A corpus of malformed GGUF files, generated here: each must give a gguf::Error
// that names the file and the problem, and none may crash (this suite also runs
// under ASan+UBSan, where any out-of-bounds read fails it).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "gguf/file.h"
#include "tests/support/gguf_bytes.h"
#include "tests/support/gguf_corpus.h"
#include "tests/support/shared_data.h"

namespace {

using namespace engine_test;

// The error message of parsing `bytes`, or "" if it parsed.
std::string parse_error(const std::vector<uint8_t>& bytes) {
  // Copy into an exactly sized buffer so ASan catches any read past the end.
  std::vector<uint8_t> exact(bytes.begin(), bytes.end());
  try {
    gguf::File::parse(exact, "corpus.gguf");
  } catch (const gguf::Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_GGUF_ERROR(bytes, needle)                                        \
  do {                                                                          \
    const std::string msg_ = parse_error(bytes);                                \
    EXPECT_NE(msg_.find("corpus.gguf: offset "), std::string::npos) << msg_;    \
    EXPECT_NE(msg_.find(needle), std::string::npos) << msg_;                    \
  } while (0)

TEST(GgufMalformed, TheSampleIsValid) {
  Sample s = sample();
  const gguf::File f = gguf::File::parse(s.b.bytes, "sample.gguf");
  EXPECT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.data_offset(), s.data_start);
  EXPECT_EQ(f.tensor("b").n_bytes, 68u);
}

// The named corpus the fuzz targets start from: the sample parses, each
// variant is refused with a message naming the file and an offset.
TEST(GgufMalformed, EveryCorpusVariantIsRefused) {
  for (const auto& [name, bytes] : malformed_corpus()) {
    SCOPED_TRACE(name);
    const std::string msg = parse_error(bytes);
    if (name == "valid") {
      EXPECT_EQ(msg, "");
    } else {
      EXPECT_EQ(msg.rfind("corpus.gguf: offset ", 0), 0u) << msg;
    }
  }
}

TEST(GgufMalformed, TruncatedInsideEverySection) {
  Sample s = sample();
  for (size_t cut = 0; cut < s.data_end; ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    std::vector<uint8_t> bytes(s.b.bytes.begin(), s.b.bytes.begin() + cut);
    const std::string msg = parse_error(bytes);
    ASSERT_FALSE(msg.empty()) << "a file cut at " << cut << " parsed";
    EXPECT_EQ(msg.rfind("corpus.gguf: offset ", 0), 0u) << msg;
    if (cut < s.end_header) {
      EXPECT_NE(msg.find("header"), std::string::npos) << msg;
    } else if (cut < s.end_metadata) {
      EXPECT_NE(msg.find("metadata"), std::string::npos) << msg;
    } else if (cut < s.end_infos) {
      EXPECT_NE(msg.find("tensor"), std::string::npos) << msg;  // "tensor #2 ..." or "header tensor count"
    } else {
      EXPECT_NE(msg.find("data section"), std::string::npos) << msg;
    }
  }
}

TEST(GgufMalformed, HugeCounts) {
  Sample s = sample();
  auto bytes = s.b.bytes;
  poke<uint64_t>(bytes, 16, uint64_t{1} << 62);  // metadata count
  EXPECT_GGUF_ERROR(bytes, "header metadata count: count 4611686018427387904 cannot fit");
  bytes = s.b.bytes;
  poke<uint64_t>(bytes, 8, UINT64_MAX);  // tensor count
  EXPECT_GGUF_ERROR(bytes, "header tensor count: count 18446744073709551615 cannot fit");
  bytes = s.b.bytes;
  poke<uint64_t>(bytes, s.tokens_count_at, uint64_t{1} << 40);
  EXPECT_GGUF_ERROR(bytes, "metadata 'tokenizer.ggml.tokens' value (array of string): count 1099511627776 cannot fit");
}

TEST(GgufMalformed, StringLengthPastTheEnd) {
  Sample s = sample();
  auto bytes = s.b.bytes;
  poke<uint64_t>(bytes, s.tokens_len_at, uint64_t{1} << 33);
  EXPECT_GGUF_ERROR(bytes, "metadata 'tokenizer.ggml.tokens' value[0]: string length 8589934592 runs past the end");
  bytes = s.b.bytes;
  poke<uint64_t>(bytes, s.end_header, UINT64_MAX);  // first key's length
  EXPECT_GGUF_ERROR(bytes, "metadata #0 key: string length 18446744073709551615 runs past the end");
}

TEST(GgufMalformed, TensorDataPastTheEnd) {
  Sample s = sample();
  auto bytes = s.b.bytes;
  poke<uint64_t>(bytes, s.offset_at, 4096);
  EXPECT_GGUF_ERROR(bytes, "tensor 'b': data [4096, +68) runs past the end of the data section (368 bytes");
  // Offsets near 2^64 must not wrap around the bounds check.
  poke<uint64_t>(bytes, s.offset_at, UINT64_MAX - 31);
  EXPECT_GGUF_ERROR(bytes, "runs past the end of the data section");
  // A file cut inside the last tensor's data.
  std::vector<uint8_t> cut(s.b.bytes.begin(), s.b.bytes.begin() + s.data_end - 1);
  EXPECT_GGUF_ERROR(cut, "tensor 'c': data [352, +16) runs past the end of the data section (367 bytes");
}

TEST(GgufMalformed, MisalignedAndOverlappingTensors) {
  Sample s = sample();
  auto bytes = s.b.bytes;
  poke<uint64_t>(bytes, s.offset_at, 260);
  EXPECT_GGUF_ERROR(bytes, "tensor #1 'b' offset: data offset 260 is not a multiple of the alignment 32");
  bytes = s.b.bytes;
  poke<uint64_t>(bytes, s.offset_at, 224);  // "a" spans [0, 256)
  EXPECT_GGUF_ERROR(bytes, "tensor 'b': data at 224 overlaps tensor 'a' at [0, 256)");
}

TEST(GgufMalformed, DimensionsWhoseProductOverflows) {
  GgufBytes b;
  b.header(3, 1, 0);
  b.tensor_info("big", {1ull << 32, 1ull << 32}, 0, 0);
  b.pad_to(32);
  EXPECT_GGUF_ERROR(b.bytes, "tensor #0 'big': the product of the dimensions");
  GgufBytes neg;
  neg.header(3, 1, 0);
  neg.tensor_info("neg", {UINT64_MAX}, 0, 0);
  EXPECT_GGUF_ERROR(neg.bytes, "dimension ne[0] = 18446744073709551615 is negative");
  // Elements fit in 63 bits, bytes do not: 2^62 F32 values.
  GgufBytes bytes;
  bytes.header(3, 1, 0);
  bytes.tensor_info("wide", {1ull << 31, 1ull << 31}, 0, 0);
  EXPECT_GGUF_ERROR(bytes.bytes, "size in bytes of [2147483648, 2147483648] F32 overflows 64 bits");
}

TEST(GgufMalformed, BadTensorTypesAndShapes) {
  Sample s = sample();
  auto bytes = s.b.bytes;
  poke<uint32_t>(bytes, s.type_at, 77);
  EXPECT_GGUF_ERROR(bytes, "tensor #1 'b': unknown ggml type id 77");
  poke<uint32_t>(bytes, s.type_at, 4);
  EXPECT_GGUF_ERROR(bytes, "type Q4_2 (4) was removed from ggml and has no defined layout");
  bytes = s.b.bytes;
  poke<uint64_t>(bytes, s.ne_at, 48);
  EXPECT_GGUF_ERROR(bytes, "row length 48 is not a multiple of Q8_0's block size 32");
  bytes = s.b.bytes;
  poke<uint32_t>(bytes, s.n_dims_at, 5);
  EXPECT_GGUF_ERROR(bytes, "tensor #1 'b': n_dims 5 is outside 1..4");
  poke<uint32_t>(bytes, s.n_dims_at, 0);
  EXPECT_GGUF_ERROR(bytes, "n_dims 0 is outside 1..4");
}

TEST(GgufMalformed, BadMetadata) {
  GgufBytes unknown;
  unknown.header(3, 0, 1).key("k", 13).u32(0);
  EXPECT_GGUF_ERROR(unknown.bytes, "metadata 'k': unknown value type 13");

  GgufBytes dup;
  dup.header(3, 0, 2).key("k", kU8).put<uint8_t>(1).key("k", kU8).put<uint8_t>(2);
  EXPECT_GGUF_ERROR(dup.bytes, "metadata 'k': duplicate key (first at offset 24)");

  GgufBytes align;
  align.header(3, 0, 1).key("general.alignment", kU32).u32(48);
  EXPECT_GGUF_ERROR(align.bytes, "alignment 48 is not a power of two");
  GgufBytes align0;
  align0.header(3, 0, 1).key("general.alignment", kU32).u32(0);
  EXPECT_GGUF_ERROR(align0.bytes, "alignment 0 is not a power of two");
  GgufBytes align_type;
  align_type.header(3, 0, 1).key("general.alignment", kU64).u64(32);
  EXPECT_GGUF_ERROR(align_type.bytes, "'general.alignment': has type uint64, expected uint32");

  GgufBytes deep;
  deep.header(3, 0, 1).key("deep", kArray);
  for (int i = 0; i < 12; ++i) deep.u32(kArray).u64(1);
  deep.u32(kU8).u64(0);
  EXPECT_GGUF_ERROR(deep.bytes, "arrays nested deeper than 8 levels");

  GgufBytes dup_tensor;
  dup_tensor.header(3, 2, 0).tensor_info("t", {4}, 0, 0).tensor_info("t", {4}, 0, 32);
  dup_tensor.pad_to(32).zeros(64);
  EXPECT_GGUF_ERROR(dup_tensor.bytes, "tensor #1 't': duplicate tensor name");
}

TEST(GgufMalformed, MagicAndVersions) {
  GgufBytes magic;
  magic.u32(0x46554746).u32(3).u64(0).u64(0);
  EXPECT_GGUF_ERROR(magic.bytes, "not a GGUF file (magic 'FGUF'");
  GgufBytes v1;
  v1.header(1, 0, 0);
  EXPECT_GGUF_ERROR(v1.bytes, "unsupported GGUF version 1");
  GgufBytes v99;
  v99.header(99, 0, 0);
  EXPECT_GGUF_ERROR(v99.bytes, "unsupported GGUF version 99");
  GgufBytes big_endian;
  big_endian.header(0x03000000, 0, 0);
  EXPECT_GGUF_ERROR(big_endian.bytes, "big-endian GGUF file");
  EXPECT_GGUF_ERROR(std::vector<uint8_t>{}, "header magic: needs 4 bytes but the file ends after 0");
}

// Every byte of the header, metadata and tensor infos replaced by several
// values: each file either parses or gives a gguf::Error; nothing else.
TEST(GgufMalformed, SingleByteMutationsNeverCrash) {
  Sample s = sample();
  int errors = 0;
  for (size_t at = 0; at < s.data_start; ++at) {
    for (uint8_t value : {uint8_t{0}, uint8_t{0xff}, uint8_t{0x7f}, uint8_t{0x80}, uint8_t(s.b.bytes[at] ^ 1)}) {
      auto bytes = s.b.bytes;
      bytes[at] = value;
      std::vector<uint8_t> exact(bytes);
      try {
        gguf::File::parse(exact, "m.gguf");
      } catch (const gguf::Error&) {
        ++errors;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << at << " = " << int(value) << ": unexpected " << e.what();
      }
    }
  }
  EXPECT_GT(errors, 100);
}

class GgufMalformedFiles : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = temp_dir("gguf-malformed"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string open_error(const std::string& path) {
    try {
      gguf::File::open(path);
    } catch (const gguf::Error& e) {
      return e.what();
    }
    return "";
  }
  std::filesystem::path dir_;
};

TEST_F(GgufMalformedFiles, EmptyMissingAndDirectory) {
  const auto empty = (dir_ / "empty.gguf").string();
  std::ofstream(empty).close();
  EXPECT_NE(open_error(empty).find("empty.gguf: the file is empty"), std::string::npos);
  const auto missing = (dir_ / "missing.gguf").string();
  EXPECT_NE(open_error(missing).find("missing.gguf: cannot open: No such file"), std::string::npos);
  EXPECT_NE(open_error(dir_.string()).find("not a regular file"), std::string::npos);
}

TEST_F(GgufMalformedFiles, RealModelTruncatedOnDisk) {
  const std::filesystem::path src = ::engine_test::default_model();
  std::ifstream in(src, std::ios::binary);
  std::vector<char> all{std::istreambuf_iterator<char>(in), {}};
  for (size_t keep : {size_t{100}, size_t{20000}, all.size() / 2, all.size() - 1}) {
    const auto path = (dir_ / ("cut" + std::to_string(keep) + ".gguf")).string();
    std::ofstream(path, std::ios::binary).write(all.data(), static_cast<std::streamsize>(keep));
    const std::string msg = open_error(path);
    EXPECT_NE(msg.find(path + ": offset "), std::string::npos) << msg;
  }
}

}  // namespace
