// Thread pool microbenchmarks:
//   barrier/threads:N/spin_us:S   one run() of N trivial tasks on an N-thread
//                                 pool: the round-trip latency every parallel
//                                 step of decode pays (spin 0 = sleep at once)
//   matvec/<type>/<kernel>/threads:N
//                                 decode matvec (M = 1) through parallel_matmul,
//                                 with the kernel this CPU's decode gets and the
//                                 ref kernel; weight GB/s streamed
// After the table, the matvec scaling ratio (time at 1 thread / time at N) is
// printed per kernel, from the fastest repetition of each.
//
//   threads_bench
//   threads_bench --benchmark_filter=matvec --benchmark_repetitions=5
//   threads_bench --smoke           # tiny shapes, for the test suite
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "engine/support/log.h"
#include "engine/threads/parallel_matmul.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/type_ops.h"
#include "kernels/registry.h"

namespace {

std::vector<size_t> thread_counts() {
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  std::vector<size_t> counts = {1, 2};
  if (hw > 2) counts.push_back(hw);
  return counts;
}

void barrier(benchmark::State& state, size_t threads, long spin_us) {
  engine::PoolOptions options;
  options.spin = std::chrono::microseconds(spin_us);
  engine::ThreadPool pool(engine::ThreadPlan::unpinned(threads), options);
  std::vector<uint64_t> touched(threads * 16);  // a cache line per task
  for (auto _ : state) {
    pool.run(threads, [&](size_t task, size_t) { ++touched[task * 16]; });
  }
  benchmark::DoNotOptimize(touched.data());
  state.counters["rounds"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

struct Matvec {
  const kernels::MatmulKernel* kernel;
  size_t n, k;
  std::vector<uint8_t> rhs, lhs;
  std::vector<float> dst;
};

Matvec prepare(const kernels::MatmulKernel* kernel, size_t n, size_t k) {
  Matvec mv{kernel, n, k, {}, {}, std::vector<float>(n)};
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t row = *gguf::row_bytes(kernel->rhs_type, k);
  mv.rhs.resize(row * n);
  std::vector<float> w(k);
  for (size_t i = 0; i < n; ++i) {
    for (float& v : w) v = normal(rng) * 0.05f;
    kernels::ref::type_ops(kernel->rhs_type)->quantize_row(w.data(), mv.rhs.data() + i * row, k);
  }
  if (kernel->pack_rhs != nullptr) {  // the layout the kernel reads, as the model loader makes it
    std::vector<uint8_t> packed(kernel->rhs_packed_size(n, k));
    kernel->pack_rhs(n, k, mv.rhs.data(), packed.data());
    mv.rhs = std::move(packed);
  }
  std::vector<float> x(k);
  for (float& v : x) v = normal(rng);
  mv.lhs.resize(kernel->lhs_packed_size(1, k));
  kernel->pack_lhs(1, k, x.data(), k, mv.lhs.data());
  return mv;
}

void matvec(benchmark::State& state, const kernels::MatmulKernel* kernel, size_t threads, size_t n, size_t k) {
  Matvec mv = prepare(kernel, n, k);
  engine::ThreadPool pool(engine::ThreadPlan::unpinned(threads));
  for (auto _ : state) {
    engine::parallel_matmul(pool, *kernel, 1, n, k, mv.lhs.data(), mv.rhs.data(), mv.dst.data(), n);
    benchmark::DoNotOptimize(mv.dst.data());
    benchmark::ClobberMemory();
  }
  state.counters["weight_GB"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(mv.rhs.size()) / 1e9, benchmark::Counter::kIsRate);
}

// The console table, plus the fastest time per benchmark for the ratios.
class Reporter : public benchmark::ConsoleReporter {
 public:
  // Colors only on a terminal (a custom reporter does not get the flag's choice).
  Reporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      const std::string name = r.benchmark_name();
      const double t = r.GetAdjustedRealTime();
      auto it = best_.find(name);
      if (it == best_.end() || t < it->second) best_[name] = t;
    }
  }

  // "matvec/<type>/<kernel>/<shape>/threads:N[/real_time]": time at 1 thread
  // divided by time at N, per stem.
  void print_scaling() const {
    std::map<std::string, std::map<size_t, double>> by_stem;
    for (const auto& [name, t] : best_) {
      const size_t at = name.find("/threads:");
      if (name.rfind("matvec/", 0) != 0 || at == std::string::npos) continue;
      by_stem[name.substr(0, at)][std::stoul(name.substr(at + 9))] = t;
    }
    for (const auto& [stem, times] : by_stem) {
      const auto one = times.find(1);
      if (one == times.end()) continue;
      for (const auto& [threads, t] : times) {
        if (threads != 1) std::printf("scaling %s: %zu threads %.2fx of 1 thread\n", stem.c_str(), threads, one->second / t);
      }
    }
  }

 private:
  std::map<std::string, double> best_;
};

void register_all(bool smoke) {
  for (size_t threads : thread_counts()) {
    for (long spin : {0L, 1000L}) {
      const std::string name = "barrier/threads:" + std::to_string(threads) + "/spin_us:" + std::to_string(spin);
      benchmark::RegisterBenchmark(name.c_str(), barrier, threads, spin)->UseRealTime()->Unit(benchmark::kMicrosecond);
    }
  }
  // Decode shapes of a ~1B model (2048 x 2048), tiny for --smoke.
  const size_t n = smoke ? 64 : 2048, k = smoke ? 256 : 2048;
  std::vector<const kernels::MatmulKernel*> kernels;
  for (gguf::GgmlType type : {gguf::GgmlType::Q4_0, gguf::GgmlType::Q4_K}) {
    const kernels::MatmulKernel* selected = kernels::select_matmul(type, kernels::host_cpu_features(), std::nullopt).kernel;
    const kernels::MatmulKernel* ref = kernels::ref::ref_matmul_kernel(type);
    if (selected != nullptr && selected != ref) kernels.push_back(selected);
    if (ref != nullptr) kernels.push_back(ref);
  }
  for (const kernels::MatmulKernel* kernel : kernels) {
    const gguf::GgmlType type = kernel->rhs_type;
    for (size_t threads : thread_counts()) {
      const std::string name = "matvec/" + std::string(gguf::type_name(type)) + "/" + kernel->name + "/N" +
                               std::to_string(n) + "xK" + std::to_string(k) + "/threads:" + std::to_string(threads);
      benchmark::RegisterBenchmark(name.c_str(), matvec, kernel, threads, n, k)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  engine::set_log_level(engine::LogLevel::warning);  // one pool per benchmark run
  bool smoke = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--smoke") == 0) {
      smoke = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  register_all(smoke);
  Reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_scaling();
  benchmark::Shutdown();
  return 0;
}
