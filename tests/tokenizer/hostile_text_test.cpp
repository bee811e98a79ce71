// Prompts an app cannot vet (issue 8, item 3): long inputs, NULs, ill-formed
// UTF-8 and a text over the size limit, with the two kinds of vocabulary.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include "engine/support/error.h"
#include "tests/support/shared_data.h"
#include "tests/tokenizer/test_util.h"

namespace {

using tokenizer_test::is_valid_utf8;
using tokenizer_test::tokenizer_of;

// Long inputs of the shapes that hurt tokenizers: one word without spaces, a
// run of spaces, random bytes. Each must finish (the fuzz targets only try up
// to 8 KiB) and give valid ids and decodable text.
TEST(HostileText, LongInputs) {
  ENGINE_REQUIRE_SHARED(spm_path, "models/vocab/ggml-vocab-llama-spm.gguf");
  ENGINE_REQUIRE_SHARED(bpe_path, "models/vocab/ggml-vocab-gpt-2.gguf");
  // 256 KiB natively (0.5 s for both vocabularies); under qemu, where the
  // same work is 20x slower on each of four CPU models, 64 KiB.
  const size_t kBytes = std::getenv("ENGINE_QEMU_CPU") != nullptr ? 64 << 10 : 256 << 10;
  std::mt19937 rng(11);
  std::string random(kBytes, '\0');
  for (char& c : random) c = static_cast<char>(rng() & 0xFF);
  std::string words;
  while (words.size() < kBytes) words += "the quick brown \xC3\xA9l\xC3\xA8ve jumps\n";
  const std::vector<std::string> inputs = {std::string(kBytes, 'a'), std::string(kBytes, ' '), random, words};
  for (const auto& path : {spm_path, bpe_path}) {
    const engine::Tokenizer& tok = tokenizer_of(path);
    for (const std::string& in : inputs) {
      const auto start = std::chrono::steady_clock::now();
      const std::vector<int32_t> ids = tok.encode(in, false, true);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      std::printf("%s: %zu bytes -> %zu tokens in %.0f ms\n", path.filename().c_str(), in.size(), ids.size(), ms);
      ASSERT_FALSE(ids.empty());
      for (int32_t id : ids) ASSERT_TRUE(id >= 0 && id < tok.n_vocab());
      EXPECT_TRUE(is_valid_utf8(tok.decode(ids)));
    }
  }
}

// NULs and ill-formed UTF-8 are text like any other: every byte is kept.
TEST(HostileText, NulBytesAndIllFormedUtf8) {
  ENGINE_REQUIRE_SHARED(bpe_path, "models/vocab/ggml-vocab-gpt-2.gguf");
  const engine::Tokenizer& tok = tokenizer_of(bpe_path);
  const std::string text("Once\0upon\xFF\xFE a \xC3(time\0", 20);
  const std::vector<int32_t> ids = tok.encode(text, false, false);
  std::string pieces;
  for (int32_t id : ids) pieces += tok.token_piece(id);
  EXPECT_EQ(pieces, text);
  // decode() is for display: the ill-formed bytes become U+FFFD.
  EXPECT_EQ(tok.decode(ids), std::string("Once\0upon\xEF\xBF\xBD\xEF\xBF\xBD a \xEF\xBF\xBD(time\0", 26));
}

// A text over the limit (1 GiB: ids index symbols in 32 bits) is refused
// before anything is allocated. The text is a mapping of zero pages that are
// never touched, so the test costs no memory.
TEST(HostileText, TextOverTheLimitIsRefused) {
  ENGINE_REQUIRE_SHARED(spm_path, "models/vocab/ggml-vocab-llama-spm.gguf");
  const engine::Tokenizer& tok = tokenizer_of(spm_path);
  const size_t size = (size_t{1} << 30) + 1;
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) GTEST_SKIP() << "cannot reserve 1 GiB of address space";
  try {
    tok.encode(std::string_view(static_cast<const char*>(p), size), false, false);
    ADD_FAILURE() << "tokenized";
  } catch (const engine::Error& e) {
    EXPECT_STREQ(e.what(), "cannot tokenize 1073741825 bytes at once (limit 1073741824)");
  }
  munmap(p, size);
}

}  // namespace
