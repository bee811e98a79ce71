// A model file's SHA-256 (engine/support/sha256.h) with a cache: a 4 GB file
// takes tens of seconds to hash on a phone, so the digest is stored by path, size and modification time
// and reused while those stay the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/support/sha256.h"

namespace bench {

using engine::Sha256;

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
