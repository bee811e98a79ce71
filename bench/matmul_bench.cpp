// Matmul microbenchmarks over the kernel registry: for each weight type, every
// kernel in its table that this CPU can run, at the shapes of issue 4 (M x N x
// K, N = output features):
//
//   decode   1 x 4096 x 4096, 1 x 11008 x 4096, 1 x 4096 x 11008
//   prefill  128 x 4096 x 4096 (the ref tier at M = 8: its time per operation
//            does not depend on M, and M = 128 takes seconds per call)
//
// and a plain streaming read (the sum of a buffer larger than the last-level
// cache) on the same core, the bandwidth decode should reach. Counters:
// weight_GB = GB of weights streamed per second (for the streaming read, GB
// read per second), GOP = 2 M N K operations per second.
//
// Decode weights are cold, as in a real model far larger than the cache: the
// packed matrix is copied until the copies span kColdBytes, and each call
// reads the next copy. Each decode benchmark also times the plain read on
// 128 MiB right after its loop (counter read_GB), and a closing summary
// prints each decode GB/s as a fraction of both reads (medians when repeated). Rates use CPU
// time (Google Benchmark's default), so time spent descheduled on a busy
// machine does not count; memory contention from other processes still does.
// Timings on shared machines are noisy: repeat, and compare ratios within one
// run.
//
//   matmul_bench --benchmark_repetitions=5            # all kernels, all shapes
//   matmul_bench --benchmark_filter='Q4_0|stream'     # one type and the read
//   matmul_bench --cold_mib=0                         # decode from cache (compute speed)
//   matmul_bench --smoke                              # tiny shapes, for ctest
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/ref/type_ops.h"
#include "kernels/registry.h"

namespace {

// Bytes the decode copies and the streaming read span: well above this
// machine's last-level cache (a streaming read over 64 MiB already runs at
// DRAM speed here; lscpu's 480 MiB "L3" is the host's, not this VM's share).
constexpr size_t kColdBytes = size_t{512} << 20;
constexpr size_t kSmokeColdBytes = size_t{1} << 20;

struct Shape {
  size_t m, n, k;
  const char* label;
  bool cold;  // rotate through copies of the weights
};

// 64-byte aligned bytes (the engine also repacks into aligned memory).
struct AlignedBuffer {
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data;
  size_t size = 0;
  explicit AlignedBuffer(size_t bytes)
      : data(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64))), size(bytes) {}
  uint8_t* get() const { return data.get(); }
};

// GGUF rows of a weight type: 64 rows quantized by the reference quantizer
// from N(0, 0.05) floats, repeated to n rows (the speed does not depend on the
// values, and quantizing 45M weights to Q4_K would take seconds).
const std::vector<uint8_t>& gguf_weights(gguf::GgmlType type, size_t n, size_t k) {
  static std::map<std::tuple<uint32_t, size_t, size_t>, std::vector<uint8_t>> cache;
  const auto key = std::make_tuple(static_cast<uint32_t>(type), n, k);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  cache.clear();  // benchmarks are registered shape by shape: keep one
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t row = *gguf::row_bytes(type, k);
  const size_t distinct = std::min<size_t>(n, 64);
  std::vector<uint8_t> w(row * n);
  std::vector<float> w_row(k);
  for (size_t i = 0; i < distinct; ++i) {
    for (float& x : w_row) x = normal(rng) * 0.05f;
    kernels::ref::type_ops(type)->quantize_row(w_row.data(), w.data() + i * row, k);
  }
  for (size_t i = distinct; i < n; ++i) std::memcpy(w.data() + i * row, w.data() + (i % distinct) * row, row);
  return cache.emplace(key, std::move(w)).first->second;
}

// A kernel's operands for one shape: the packed weights (copied `copies`
// times, `stride` bytes apart), the packed activations and the output.
struct Prepared {
  const kernels::MatmulKernel* kernel = nullptr;
  size_t m = 0, n = 0, k = 0, cold_bytes = 0;
  size_t copies = 0, stride = 0;
  std::unique_ptr<AlignedBuffer> weights, lhs;
  std::vector<float> dst;
};

// Google Benchmark calls a benchmark several times (to size the iteration
// count, and once per repetition): prepare once, keep the latest only.
Prepared& prepare(const kernels::MatmulKernel* kernel, const Shape& s, size_t cold_bytes) {
  static Prepared p;
  if (p.kernel == kernel && p.m == s.m && p.n == s.n && p.k == s.k && p.cold_bytes == cold_bytes) return p;
  p = Prepared{};
  const std::vector<uint8_t>& rhs = gguf_weights(kernel->rhs_type, s.n, s.k);
  const size_t packed_bytes = kernel->rhs_packed_size(s.n, s.k);
  p.copies = s.cold ? std::max<size_t>(1, (cold_bytes + packed_bytes - 1) / packed_bytes) : 1;
  p.stride = (packed_bytes + 63) / 64 * 64;
  p.weights = std::make_unique<AlignedBuffer>(p.stride * p.copies);
  if (kernel->pack_rhs != nullptr) {
    kernel->pack_rhs(s.n, s.k, rhs.data(), p.weights->get());
  } else {
    std::memcpy(p.weights->get(), rhs.data(), packed_bytes);
  }
  for (size_t c = 1; c < p.copies; ++c) std::memcpy(p.weights->get() + c * p.stride, p.weights->get(), packed_bytes);

  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(s.m * s.k);
  for (float& v : x) v = normal(rng);
  p.lhs = std::make_unique<AlignedBuffer>(kernel->lhs_packed_size(s.m, s.k));
  kernel->pack_lhs(s.m, s.k, x.data(), s.k, p.lhs->get());
  p.dst.resize(s.m * s.n);
  p.kernel = kernel;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.cold_bytes = cold_bytes;
  return p;
}

// The plain streaming read decode is measured against: the sum of every
// 64-bit word of a buffer larger than the last-level cache, compiled for the
// baseline (the compiler vectorizes it; one core reads far faster than DRAM
// delivers, so the loop measures the memory, not the loop).
uint64_t sum_words(const uint8_t* p, size_t bytes) {
  const auto* words = reinterpret_cast<const uint64_t*>(p);
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i + 4 <= bytes / sizeof(uint64_t); i += 4) {
    s0 += words[i];
    s1 += words[i + 1];
    s2 += words[i + 2];
    s3 += words[i + 3];
  }
  return s0 + s1 + s2 + s3;
}

// The buffer the streaming reads sum (at least 1 MiB), written once so every
// page is backed.
const AlignedBuffer& read_buffer(size_t bytes) {
  static AlignedBuffer buffer = [bytes] {
    AlignedBuffer b(std::max<size_t>(bytes, size_t{1} << 20));
    std::memset(b.get(), 1, b.size);
    return b;
  }();
  return buffer;
}

void stream_read(benchmark::State& state, size_t bytes) {
  const AlignedBuffer& buffer = read_buffer(bytes);
  for (auto _ : state) benchmark::DoNotOptimize(sum_words(buffer.get(), buffer.size));
  state.counters["weight_GB"] = benchmark::Counter(static_cast<double>(state.iterations()) *
                                                       static_cast<double>(buffer.size) / 1e9,
                                                   benchmark::Counter::kIsRate);
}

double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The same streaming read right after a decode benchmark, on a slice of the
// read buffer the kernel has not touched (kPairedReadBytes, best of two, CPU
// time like the benchmarks): on a machine whose load drifts, a kernel and the
// read measured together give a steadier ratio than two measurements minutes
// apart.
constexpr size_t kPairedReadBytes = size_t{128} << 20;
double paired_read_gbps(size_t cold_bytes) {
  const AlignedBuffer& buffer = read_buffer(cold_bytes);
  const size_t slice = std::min(kPairedReadBytes, buffer.size / 2);
  static size_t next = 0;  // rotate through the buffer so each slice starts cold
  double best = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (next + slice > buffer.size) next = 0;
    const double t0 = cpu_seconds();
    benchmark::DoNotOptimize(sum_words(buffer.get() + next, slice));
    const double seconds = cpu_seconds() - t0;
    next += slice;
    if (seconds > 0) best = std::max(best, static_cast<double>(slice) / seconds / 1e9);
  }
  return best;
}

void run_kernel(benchmark::State& state, const kernels::MatmulKernel* kernel, Shape s, size_t cold_bytes) {
  Prepared& p = prepare(kernel, s, cold_bytes);
  size_t copy = 0;
  for (auto _ : state) {
    kernel->run(s.m, s.n, s.k, p.lhs->get(), p.weights->get() + copy * p.stride, p.dst.data(), s.n);
    benchmark::DoNotOptimize(p.dst.data());
    benchmark::ClobberMemory();
    if (++copy == p.copies) copy = 0;
  }
  const double calls = static_cast<double>(state.iterations());
  const double weight_bytes = static_cast<double>(*gguf::row_bytes(kernel->rhs_type, s.k) * s.n);
  state.counters["weight_GB"] = benchmark::Counter(calls * weight_bytes / 1e9, benchmark::Counter::kIsRate);
  state.counters["GOP"] =
      benchmark::Counter(calls * 2.0 * static_cast<double>(s.m * s.n * s.k) / 1e9, benchmark::Counter::kIsRate);
  if (s.cold && cold_bytes > 0) state.counters["read_GB"] = paired_read_gbps(cold_bytes);
}

// "<type>/<label>/<kernel>/M1xN4096xK4096", built with append(): GCC 12 reports
// a false -Wrestrict on "literal" + std::string&&.
std::string benchmark_name(gguf::GgmlType type, const Shape& s, const kernels::MatmulKernel& kernel, size_t m) {
  std::string name(gguf::type_name(type));
  name.append("/").append(s.label).append("/").append(kernel.name);
  name.append("/M").append(std::to_string(m)).append("xN").append(std::to_string(s.n));
  name.append("xK").append(std::to_string(s.k));
  return name;
}

void register_all(bool smoke, size_t cold) {
  const std::vector<Shape> shapes =
      smoke ? std::vector<Shape>{{1, 32, 256, "decode", true}, {3, 32, 256, "prefill", false}}
            : std::vector<Shape>{{1, 4096, 4096, "decode", true},
                                 {1, 11008, 4096, "decode", true},
                                 {1, 4096, 11008, "decode", true},
                                 {128, 4096, 4096, "prefill", false}};
  auto* read = benchmark::RegisterBenchmark("stream_read/baseline", stream_read, cold)->Unit(benchmark::kMillisecond);
  if (!smoke) read->MinTime(1.0);
  const auto& cpu = kernels::host_cpu_features();
  for (uint32_t id = 0; id < gguf::kGgmlTypeIdCount; ++id) {
    const auto type = static_cast<gguf::GgmlType>(id);
    for (const Shape& s : shapes) {
      for (const kernels::MatmulKernel* kernel : kernels::matmul_table(type)) {
        if (!kernels::can_run(*kernel, cpu)) continue;
        Shape run_shape = s;
        if (!smoke && kernel->tier == kernels::Tier::ref && s.m > 8) run_shape.m = 8;
        const std::string name = benchmark_name(type, s, *kernel, run_shape.m);
        benchmark::RegisterBenchmark(name.c_str(), run_kernel, kernel, run_shape, cold)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

// The console output, plus a closing table: each decode run's weight GB/s as
// a fraction of the streaming read's, both the stream_read benchmark's and the
// paired read's (the medians when repeated).
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  using benchmark::ConsoleReporter::ConsoleReporter;

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (!single && !median) continue;
      auto it = run.counters.find("weight_GB");
      if (it == run.counters.end()) continue;
      const std::string name = run.run_name.str();
      if (name.rfind("stream_read", 0) == 0) {
        read_gbps_ = it->second.value;
      } else if (name.find("/decode/") != std::string::npos) {
        auto paired = run.counters.find("read_GB");
        decode_.push_back({name, it->second.value, paired == run.counters.end() ? 0.0 : paired->second.value});
      }
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    if (decode_.empty()) return;
    std::printf("\nDecode weight bandwidth, 1 thread, as a fraction of a plain streaming read: of the\n");
    std::printf("stream_read benchmark (%.2f GB/s) and of the read measured right after each kernel:\n",
                read_gbps_);
    for (const Decode& d : decode_) {
      std::printf("  %-64s %6.2f GB/s", d.name.c_str(), d.gbps);
      if (read_gbps_ > 0) std::printf("  %5.1f%%", 100 * d.gbps / read_gbps_);
      if (d.paired_read > 0) std::printf("  %5.1f%% of %5.2f", 100 * d.gbps / d.paired_read, d.paired_read);
      std::printf("\n");
    }
  }

 private:
  struct Decode {
    std::string name;
    double gbps, paired_read;
  };
  double read_gbps_ = 0;
  std::vector<Decode> decode_;
};

}  // namespace

int main(int argc, char** argv) {
  bool smoke = false;
  bool console = true;
  size_t cold = kColdBytes;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--smoke") == 0) {
      smoke = true;
      cold = kSmokeColdBytes;
      continue;
    }
    if (std::strncmp(argv[i], "--cold_mib=", 11) == 0) {
      cold = std::strtoull(argv[i] + 11, nullptr, 10) << 20;
      continue;
    }
    if (std::strncmp(argv[i], "--benchmark_format=", 19) == 0 && std::strcmp(argv[i] + 19, "console") != 0) {
      console = false;
    }
    args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  register_all(smoke, cold);
  if (console) {
    SummaryReporter reporter(isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Color
                                                   : benchmark::ConsoleReporter::OO_None);
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}
