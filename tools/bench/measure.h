// The bench itself: load each model, build the thread pool for each thread
// setting, probe the memory bandwidth with that pool, then time the tests the
// way llama-bench does (random token ids, so neither tokenization nor sampling
// is inside the timed part; warm-up runs first, not counted):
//
//   pp<P>        prefill: one eval of P tokens after D cached tokens
//   tg<N>        decode:  N single-token evals after D cached tokens
//   ttft<P>      the same prefill as wall time to the first token's logits (ms)
//   pp<P>+tg<N>  mixed (--pg): prompt and generation timed together
//
// Every repetition starts from an empty cache, fills D tokens untimed, then
// times its part. Sustained mode repeats tg in rounds and records clocks and
// heat after each.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tools/bench/report.h"

namespace bench {

struct BenchOptions {
  std::vector<std::string> models;
  std::vector<uint32_t> n_prompt{512};
  std::vector<uint32_t> n_gen{128};
  std::vector<std::pair<uint32_t, uint32_t>> pg;  // mixed tests
  std::vector<uint32_t> depth{0};
  std::vector<int> threads{0};                    // 0: the default plan's count
  std::string cpus;                               // --cpus: default, all, none, or a list
  int repetitions = 5;
  int warmup = 1;
  uint32_t n_batch = 512;
  std::string kv_type = "f16";
  uint32_t seed = 42;
  int rounds = 0;                                 // sustained mode
  bool profile = false;                           // time per operation class
  double interval_s = 0;
  bool hash = true;
  std::string cache_dir;                          // SHA-256 cache; "" = default
  std::string repack_cache_dir;                   // the repack cache's directory; "" = none
  bool probe = true;
  uint64_t probe_bytes = 0;                       // 0: sized from the cache
  int probe_passes = 5;
  bool progress = false;                          // a \r status line on stderr
  std::string root = "/";                         // sysfs/proc root (tests)
};

Report run_bench(const BenchOptions& options, const std::string& command_line);

// "2024-05-01T12:00:00Z"
std::string utc_now();

}  // namespace bench
