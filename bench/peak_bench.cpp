// How many multiply-accumulate operations one x86 core issues per second with
// the instructions the hwy tier's float and integer matmuls are built on, with
// no memory traffic at all: twelve independent accumulators (more than
// latency x ports of any of them), one instruction each per iteration. This is
// the ceiling a prefill kernel can approach, measured instead of estimated
// from a nominal clock (bench's roofline line multiplies the clock the kernel
// reports, which on a VM is the base clock, not the boost the core runs at).
//
//   peak_bench                                  # every instruction this CPU has
//   peak_bench --benchmark_repetitions=3
//
// Counter GOP = operations per second (2 per multiply-accumulate), per thread.
// Run it beside a prefill figure to know what fraction of the peak a kernel or
// a whole engine reaches (docs/measurements/2026-12-05-x86-float-peak.md).
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include "kernels/cpu_features.h"

namespace {

constexpr int kChains = 12;
constexpr int kInner = 4096;

// One benchmark per instruction: `step` is the instruction applied to an
// accumulator c, `ops` the operations (multiply + add counted as 2) it does.
// A macro rather than a template: the body must be compiled inside a function
// carrying the instruction set's target attribute, which a lambda or a
// template instantiated from it would not inherit.
#define ENGINE_PEAK_BENCH(fn, target_isa, Vec, zero, setup, step, ops)                               \
  __attribute__((target(target_isa))) void fn(benchmark::State& state) {                          \
    setup;                                                                                          \
    Vec acc[kChains];                                                                               \
    for (Vec& c : acc) c = zero;                                                                    \
    int64_t iterations = 0;                                                                         \
    for (auto _ : state) {                                                                          \
      for (int i = 0; i < kInner; ++i) {                                                            \
        _Pragma("GCC unroll 12") for (int j = 0; j < kChains; ++j) {                               \
          Vec& c = acc[j];                                                                          \
          c = step;                                                                                 \
        }                                                                                           \
      }                                                                                             \
      iterations += kInner;                                                                         \
    }                                                                                               \
    for (Vec& c : acc) benchmark::DoNotOptimize(c);                                                 \
    state.counters["GOP"] = benchmark::Counter(static_cast<double>(iterations) * kChains * (ops),   \
                                               benchmark::Counter::kIsRate, benchmark::Counter::kIs1000); \
  }

ENGINE_PEAK_BENCH(fma_f32_256, "avx2,fma", __m256, _mm256_setzero_ps(),
                  __m256 a = _mm256_set1_ps(1.0001f);
                  __m256 b = _mm256_set1_ps(0.9999f); benchmark::DoNotOptimize(a); benchmark::DoNotOptimize(b),
                  _mm256_fmadd_ps(a, b, c), 16)
ENGINE_PEAK_BENCH(fma_f32_512, "avx512f", __m512, _mm512_setzero_ps(),
                  __m512 a = _mm512_set1_ps(1.0001f);
                  __m512 b = _mm512_set1_ps(0.9999f); benchmark::DoNotOptimize(a); benchmark::DoNotOptimize(b),
                  _mm512_fmadd_ps(a, b, c), 32)
ENGINE_PEAK_BENCH(dpbf16_512, "avx512f,avx512bf16", __m512, _mm512_setzero_ps(),
                  __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80);
                  __m512bh b = (__m512bh)_mm512_set1_epi16(0x3f81); benchmark::DoNotOptimize(a);
                  benchmark::DoNotOptimize(b), _mm512_dpbf16_ps(c, a, b), 64)
ENGINE_PEAK_BENCH(dpbusd_512, "avx512f,avx512vnni", __m512i, _mm512_setzero_si512(),
                  __m512i a = _mm512_set1_epi8(3);
                  __m512i b = _mm512_set1_epi8(5); benchmark::DoNotOptimize(a); benchmark::DoNotOptimize(b),
                  _mm512_dpbusd_epi32(c, a, b), 128)

#undef ENGINE_PEAK_BENCH

}  // namespace

int main(int argc, char** argv) {
  using kernels::Feature;
  const kernels::CpuFeatures& cpu = kernels::host_cpu_features();
  if (cpu.has(Feature::avx2) && cpu.has(Feature::fma)) benchmark::RegisterBenchmark("peak/vfmadd231ps_ymm", fma_f32_256);
  if (cpu.has(Feature::avx512f)) benchmark::RegisterBenchmark("peak/vfmadd231ps_zmm", fma_f32_512);
  if (cpu.has(Feature::avx512bf16)) benchmark::RegisterBenchmark("peak/vdpbf16ps_zmm", dpbf16_512);
  if (cpu.has(Feature::avx512vnni)) benchmark::RegisterBenchmark("peak/vpdpbusd_zmm", dpbusd_512);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
