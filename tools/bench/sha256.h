// SHA-256 (FIPS 180-4), written out so the tools need no crypto library, and
// the model file's digest with a cache: a 4 GB file takes tens of seconds to
// hash on a phone, so the digest is stored by path, size and modification time
// and reused while those stay the same.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bench {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<uint8_t, 32> finish();  // the object must not be updated afterwards
  static std::string hex(const std::array<uint8_t, 32>& digest);
  static std::string of(std::string_view s);  // hex digest of a string

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

// The hex digest of a file's contents, read with read() (not mmap: the pages
// would count in the resident set the bench reports). Throws std::runtime_error
// naming the file when it cannot be read.
std::string sha256_file(const std::string& path);

struct FileDigest {
  std::string sha256;        // hex
  std::string source;        // "computed" or "cache"
  std::string cache_file;    // where the digest is kept; "" when no cache directory is writable
};

// The digest of `path`, from the cache when an entry with the same absolute
// path, size and mtime exists, else computed and stored. The cache lives in
// `cache_dir` when given, else $XDG_CACHE_HOME/engine, ~/.cache/engine,
// $TMPDIR/engine-cache or /data/local/tmp/engine-cache (Android's shell has no
// writable home), the first that can be created.
FileDigest cached_sha256(const std::string& path, const std::string& cache_dir = "");

// The directory cached_sha256 would use; "" when none is writable.
std::string default_cache_dir();

}  // namespace bench
