// The repack cache: a model's weights in its kernels' layouts, kept in a file
// so that the next load maps them (mmap) instead of repacking. Repacking
// TinyLlama Q4_0 costs seconds, most of it the first touch of 571 MiB of fresh
// pages (engine/threads/parallel_pack.h); mapping a cache file whose pages are
// in the page cache costs neither.
//
// A cache file is used only when its key equals the model's and the kernels'
// of this load:
//  - the model's identity: its size, modification time (ns), device and inode,
//    and the SHA-256 of its header and tensor index (every byte before the
//    data section). Hashing the whole file would cost as much as a plain read
//    of it at every load (a 4 GB file, tens of seconds on a phone), the very
//    cost the cache is there to avoid; a weight rewritten in place with the
//    same size and modification time is the one change this does not see.
//  - every weight type's kernel name and tier (the name fixes the layout), so
//    another build or ENGINE_MAX_TIER rebuilds the cache; and the CPU's
//    features and SVE/SME vector lengths, so that a layout that came to depend
//    on them could not be read on another CPU (a phone's cores share them);
//  - the cache format's version.
// The file: a header (magic, version, key, the entries' names, offsets and
// sizes, the SHA-256 of all that) padded to 4 KiB, then the packed bytes. A
// file whose header does not check out or that is shorter or longer than its
// header says is ignored (the reason goes to the log) and rewritten, through
// a temporary file and a rename, so a reader never sees half a file. The
// packed bytes are not hashed (that too would read the whole file at every
// load): a file corrupted there gives wrong results, not a crash, since every
// read is inside the sizes the header was checked against.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/model/kernel_plan.h"
#include "gguf/file.h"

namespace engine {

inline constexpr uint32_t kRepackCacheVersion = 1;

// The cache file of a model in `dir`: dir/<the model's file name>.enginecache.
std::string repack_cache_path(const std::string& dir, const std::string& model_path);

// The key of a model on disk and a kernel plan (see above). Throws
// engine::Error when the model's file cannot be stat'ed.
std::string repack_cache_key(const gguf::File& file, const KernelPlan& plan);

class RepackCache {
 public:
  // The cache at `path` mapped read-only, when it exists, checks out and has
  // this key; else nullptr and *why says what was wrong ("" when there is no
  // such file).
  static std::unique_ptr<RepackCache> open(const std::string& path, const std::string& key, std::string* why);
  ~RepackCache();
  RepackCache(const RepackCache&) = delete;
  RepackCache& operator=(const RepackCache&) = delete;

  // The packed bytes of tensor `name`, when the cache has them at this size.
  const uint8_t* find(std::string_view name, uint64_t bytes) const;
  uint64_t file_bytes() const { return size_; }

 private:
  RepackCache() = default;
  struct Entry {
    uint64_t offset = 0;
    uint64_t bytes = 0;
  };
  uint8_t* map_ = nullptr;
  uint64_t size_ = 0;
  uint64_t data_offset_ = 0;
  std::unordered_map<std::string, Entry> entries_;
};

struct RepackEntry {
  std::string name;
  const uint8_t* data = nullptr;
  uint64_t bytes = 0;
};

// Writes a cache of `entries` to `path` (a temporary file beside it, renamed
// over it at the end), creating its directory. progress(bytes written) is
// called after each entry; when it returns false the temporary file is
// removed and engine::Cancelled thrown. Other failures throw engine::Error
// naming the file, and leave no temporary file behind.
void write_repack_cache(const std::string& path, const std::string& key, std::span<const RepackEntry> entries,
                        const std::function<bool(uint64_t)>& progress);

}  // namespace engine
