// What a model load may be told (a progress callback that can cancel it, where
// to keep the repacked weights between loads, whether to time a plain read of
// the file) and what it reports (how long it took, and of that how long the
// repacking, next to the plain read).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace engine {

struct LoadOptions {
  // Called on the loading thread with the fraction done (0..1, never
  // decreasing, 1 at the end) and the phase ("reading", "repacking", "mapping
  // cache", "writing cache", "done"): once per tensor at least. Returning false
  // cancels the load: it throws engine::Cancelled, everything allocated is freed.
  std::function<bool(double fraction, const char* phase)> progress;
  // The directory of the repack cache (engine/model/repack_cache.h); empty: no
  // cache.
  std::string cache_dir;
  // Time a plain sequential read() of the whole file after the load
  // (LoadStats::read_seconds): costs a full read, so only when asked.
  bool measure_read = false;
};

// How the repack cache served a load.
enum class CacheState {
  off,          // no cache directory, or nothing to repack
  hit,          // the repacked weights were mapped from the cache
  written,      // repacked, and the cache (re)written
  write_failed  // repacked; the cache could not be written (logged)
};
const char* cache_state_name(CacheState s);  // "off", "hit", "written", "write failed"

struct LoadStats {
  double load_seconds = 0;    // Model::load from start to end
  double repack_seconds = 0;  // of which repacking weights into the kernels' layouts
  double cache_seconds = 0;   // of which reading or writing the repack cache
  double read_seconds = -1;   // a plain read of the file (LoadOptions::measure_read), else -1
  uint64_t file_bytes = 0;
  CacheState cache = CacheState::off;
  std::string cache_path;     // the cache file, when a directory was given
  std::string cache_note;     // why a cache file present was not used ("" when it was, or none was)
};

// $ENGINE_CACHE_DIR, the repack cache's directory for loads that name none;
// "" when unset.
std::string cache_dir_from_env();

// One line for the tools: "load 812 ms (repack 640 ms; repack cache written
// 95 ms); a plain read of the file 310 ms".
std::string describe_load(const LoadStats& s);

// Seconds to read() `path` start to end, 4 MiB at a time, into a fresh buffer
// of the file's size: what a loader that copies the file into memory costs
// (the storage or page cache, and the first touch of as many new pages), the
// yardstick the load time is given next to. Throws engine::Error naming the
// file when it cannot be read.
double time_plain_read(const std::string& path);

}  // namespace engine
