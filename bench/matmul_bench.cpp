// Matmul microbenchmarks over the kernel registry: for each weight type, every
// kernel in its table that this CPU can run, at decode (M = 1) and prefill
// (M = 64) shapes. Counters: weight bytes streamed per second (what bounds
// decode) and integer/float operations per second (2*M*N*K per call, what
// bounds prefill).
//
//   matmul_bench                      # all kernels, default shapes
//   matmul_bench --benchmark_filter=Q4_0
//   matmul_bench --smoke              # tiny shapes, for the test suite
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/ref/type_ops.h"
#include "kernels/registry.h"

namespace {

struct Shape {
  size_t m, n, k;
  const char* label;
};

struct Operands {
  std::vector<uint8_t> rhs_packed;
  std::vector<uint8_t> lhs_packed;
  std::vector<float> dst;
};

Operands prepare(const kernels::MatmulKernel& kernel, const Shape& s) {
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const auto* ops = kernels::ref::type_ops(kernel.rhs_type);
  const size_t row = *gguf::row_bytes(kernel.rhs_type, s.k);
  std::vector<float> w_row(s.k);
  std::vector<uint8_t> rhs(row * s.n);
  for (size_t i = 0; i < s.n; ++i) {
    for (float& x : w_row) x = normal(rng) * 0.05f;
    ops->quantize_row(w_row.data(), rhs.data() + i * row, s.k);
  }
  Operands o;
  if (kernel.pack_rhs != nullptr) {
    o.rhs_packed.resize(kernel.rhs_packed_size(s.n, s.k));
    kernel.pack_rhs(s.n, s.k, rhs.data(), o.rhs_packed.data());
  } else {
    o.rhs_packed = std::move(rhs);
  }
  std::vector<float> x(s.m * s.k);
  for (float& v : x) v = normal(rng);
  o.lhs_packed.resize(kernel.lhs_packed_size(s.m, s.k));
  kernel.pack_lhs(s.m, s.k, x.data(), s.k, o.lhs_packed.data());
  o.dst.resize(s.m * s.n);
  return o;
}

void run_kernel(benchmark::State& state, const kernels::MatmulKernel* kernel, Shape s) {
  Operands o = prepare(*kernel, s);
  for (auto _ : state) {
    kernel->run(s.m, s.n, s.k, o.lhs_packed.data(), o.rhs_packed.data(), o.dst.data(), s.n);
    benchmark::DoNotOptimize(o.dst.data());
    benchmark::ClobberMemory();
  }
  const double calls = static_cast<double>(state.iterations());
  const double weight_bytes = static_cast<double>(*gguf::row_bytes(kernel->rhs_type, s.k) * s.n);
  state.counters["weight_GB"] =
      benchmark::Counter(calls * weight_bytes / 1e9, benchmark::Counter::kIsRate);
  state.counters["GOP"] = benchmark::Counter(calls * 2.0 * static_cast<double>(s.m * s.n * s.k) / 1e9,
                                               benchmark::Counter::kIsRate);
}

void register_all(bool smoke) {
  const std::vector<Shape> shapes =
      smoke ? std::vector<Shape>{{1, 8, 256, "decode"}, {3, 8, 256, "prefill"}}
            : std::vector<Shape>{{1, 2048, 2048, "decode"}, {64, 512, 2048, "prefill"}};
  const auto& cpu = kernels::host_cpu_features();
  for (uint32_t id = 0; id < gguf::kGgmlTypeIdCount; ++id) {
    const auto type = static_cast<gguf::GgmlType>(id);
    for (const kernels::MatmulKernel* kernel : kernels::matmul_table(type)) {
      if (!kernels::can_run(*kernel, cpu)) continue;
      for (const Shape& s : shapes) {
        const std::string name = std::string(gguf::type_name(type)) + "/" + s.label + "/" + kernel->name + "/M" +
                                 std::to_string(s.m) + "xN" + std::to_string(s.n) + "xK" + std::to_string(s.k);
        benchmark::RegisterBenchmark(name.c_str(), run_kernel, kernel, s)->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
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
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
