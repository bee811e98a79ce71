// The malformed-GGUF corpus: a small valid file with the offsets of its
// sections and fields, and named variants of it that are broken in one way
// each. The malformed-file suite checks each error message; the fuzz seed
// generator writes them out as a starting corpus.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/gguf_bytes.h"

namespace engine_test {

// A small valid file, with the offsets where each section ends.
struct Sample {
  GgufBytes b;
  size_t end_header = 0, end_metadata = 0, end_infos = 0, data_start = 0, data_end = 0;
  size_t tokens_count_at = 0, tokens_len_at = 0;      // the string array's count, its first string's length
  size_t tensor_b_info = 0;                            // where tensor "b"'s info starts
  size_t ne_at = 0, type_at = 0, offset_at = 0, n_dims_at = 0;  // fields of tensor "b"
};

inline Sample sample() {
  Sample s;
  GgufBytes& b = s.b;
  b.header(3, 3, 4);
  s.end_header = b.size();
  b.key("general.architecture", kString).str("llama");
  b.key("general.alignment", kU32).u32(32);
  b.key("tokenizer.ggml.tokens", kArray).u32(kString);
  s.tokens_count_at = b.size();
  b.u64(3);
  s.tokens_len_at = b.size();
  b.str("<unk>").str("<s>").str("</s>");
  b.key("nested", kArray).u32(kArray).u64(1).u32(kU32).u64(2).u32(1).u32(2);
  s.end_metadata = b.size();
  b.tensor_info("a", {32, 2}, 0, 0);  // F32, 256 bytes
  s.tensor_b_info = b.size();
  b.str("b");
  s.n_dims_at = b.size();
  b.u32(1);
  s.ne_at = b.size();
  b.u64(64);
  s.type_at = b.size();
  b.u32(8);  // Q8_0, 2 blocks = 68 bytes
  s.offset_at = b.size();
  b.u64(256);
  b.tensor_info("c", {8}, 1, 352);  // F16, 16 bytes
  s.end_infos = b.size();
  b.pad_to(32);
  s.data_start = b.size();
  b.zeros(368);
  s.data_end = s.data_start + 352 + 16;
  return s;
}

template <class T>
void poke(std::vector<uint8_t>& bytes, size_t at, T v) {
  std::memcpy(bytes.data() + at, &v, sizeof v);
}

// The sample and its broken variants, by name.
inline std::vector<std::pair<std::string, std::vector<uint8_t>>> malformed_corpus() {
  const Sample s = sample();
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  out.emplace_back("valid", s.b.bytes);
  for (const auto& [name, cut] : {std::pair{"cut-header", s.end_header - 3}, std::pair{"cut-metadata", s.tokens_len_at + 4},
                                  std::pair{"cut-infos", s.offset_at + 2}, std::pair{"cut-data", s.data_end - 1}}) {
    out.emplace_back(name, std::vector<uint8_t>(s.b.bytes.begin(), s.b.bytes.begin() + static_cast<long>(cut)));
  }
  auto variant = [&](const char* name, auto edit) {
    std::vector<uint8_t> bytes = s.b.bytes;
    edit(bytes);
    out.emplace_back(name, std::move(bytes));
  };
  variant("huge-kv-count", [](auto& b) { poke<uint64_t>(b, 16, uint64_t{1} << 62); });
  variant("huge-tensor-count", [](auto& b) { poke<uint64_t>(b, 8, UINT64_MAX); });
  variant("huge-array-count", [&](auto& b) { poke<uint64_t>(b, s.tokens_count_at, uint64_t{1} << 40); });
  variant("string-past-end", [&](auto& b) { poke<uint64_t>(b, s.tokens_len_at, uint64_t{1} << 33); });
  variant("offset-past-end", [&](auto& b) { poke<uint64_t>(b, s.offset_at, 4096); });
  variant("offset-wraps", [&](auto& b) { poke<uint64_t>(b, s.offset_at, UINT64_MAX - 31); });
  variant("misaligned", [&](auto& b) { poke<uint64_t>(b, s.offset_at, 260); });
  variant("overlapping", [&](auto& b) { poke<uint64_t>(b, s.offset_at, 224); });
  variant("unknown-type", [&](auto& b) { poke<uint32_t>(b, s.type_at, 77); });
  variant("removed-type", [&](auto& b) { poke<uint32_t>(b, s.type_at, 4); });
  variant("partial-block", [&](auto& b) { poke<uint64_t>(b, s.ne_at, 48); });
  variant("five-dims", [&](auto& b) { poke<uint32_t>(b, s.n_dims_at, 5); });
  variant("bad-magic", [](auto& b) { poke<uint32_t>(b, 0, 0x46554746); });
  variant("version-1", [](auto& b) { poke<uint32_t>(b, 4, 1); });
  variant("big-endian", [](auto& b) { poke<uint32_t>(b, 4, 0x03000000); });
  GgufBytes dup;
  dup.header(3, 0, 2).key("k", kU8).put<uint8_t>(1).key("k", kU8).put<uint8_t>(2);
  out.emplace_back("duplicate-key", dup.bytes);
  GgufBytes align;
  align.header(3, 0, 1).key("general.alignment", kU32).u32(48);
  out.emplace_back("alignment-48", align.bytes);
  GgufBytes deep;
  deep.header(3, 0, 1).key("deep", kArray);
  for (int i = 0; i < 12; ++i) deep.u32(kArray).u64(1);
  deep.u32(kU8).u64(0);
  out.emplace_back("deep-arrays", deep.bytes);
  GgufBytes overflow;
  overflow.header(3, 1, 0).tensor_info("big", {1ull << 32, 1ull << 32}, 0, 0).pad_to(32);
  out.emplace_back("dims-overflow", overflow.bytes);
  return out;
}

}  // namespace engine_test
