// SHA-256 against the FIPS 180-4 / NIST example vectors, chunked updates, the
// file digest, and the cache keyed by path, size and mtime.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tools/bench/sha256.h"

namespace {

using bench::Sha256;

TEST(Sha256, NistVectors) {
  EXPECT_EQ(Sha256::of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256::of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256::of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256::of("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                       "mnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(Sha256::of(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, ChunkedUpdatesMatchOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data += static_cast<char>(i * 7 + 3);
  const std::string expected = Sha256::of(data);
  for (size_t chunk : {1, 3, 55, 56, 63, 64, 65, 127, 999}) {
    Sha256 h;
    for (size_t i = 0; i < data.size(); i += chunk) h.update(data.data() + i, std::min(chunk, data.size() - i));
    EXPECT_EQ(Sha256::hex(h.finish()), expected) << "chunk " << chunk;
  }
}

class Sha256File : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("bench-sha-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(Sha256File, FileDigestMatchesStringDigest) {
  std::string text(3 << 20, 'x');  // three read() chunks
  text[12345] = 'y';
  EXPECT_EQ(bench::sha256_file(write("model.gguf", text)), Sha256::of(text));
  EXPECT_THROW(bench::sha256_file((dir_ / "missing").string()), std::runtime_error);
}

TEST_F(Sha256File, CacheIsKeyedByPathSizeAndMtime) {
  const std::string cache = (dir_ / "cache").string();
  const std::string path = write("model.gguf", "first contents");
  const bench::FileDigest first = bench::cached_sha256(path, cache);
  EXPECT_EQ(first.source, "computed");
  EXPECT_EQ(first.sha256, Sha256::of("first contents"));
  EXPECT_EQ(first.cache_file, cache + "/sha256-cache.txt");

  const bench::FileDigest again = bench::cached_sha256(path, cache);
  EXPECT_EQ(again.source, "cache");
  EXPECT_EQ(again.sha256, first.sha256);

  // Another file next to it gets its own entry; the first stays cached.
  const std::string other = write("other.gguf", "other");
  EXPECT_EQ(bench::cached_sha256(other, cache).source, "computed");
  EXPECT_EQ(bench::cached_sha256(path, cache).source, "cache");

  // Same size, new mtime: recomputed, and the stale entry is replaced.
  write("model.gguf", "FIRST contents");
  struct timespec times[2] = {{0, UTIME_OMIT}, {1700000000, 5}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  const bench::FileDigest changed = bench::cached_sha256(path, cache);
  EXPECT_EQ(changed.source, "computed");
  EXPECT_EQ(changed.sha256, Sha256::of("FIRST contents"));
  std::ifstream in(first.cache_file);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 2);  // model.gguf (new key) and other.gguf
  EXPECT_EQ(bench::cached_sha256(path, cache).source, "cache");
}

}  // namespace
