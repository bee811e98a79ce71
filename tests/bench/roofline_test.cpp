// The roofline arithmetic, the peak estimate, the probe's sizing and
// correctness, and the sustained-mode verdict.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/support/log.h"
#include "engine/threads/thread_plan.h"
#include "engine/threads/thread_pool.h"
#include "kernels/registry.h"
#include "tools/bench/probe.h"
#include "tools/bench/roofline.h"
#include "tools/bench/sustained.h"

namespace {

using namespace bench;

TEST(Roofline, DecodeEfficiencyIsBytesPerSecondOverTheProbe) {
  RooflineInputs in;
  in.probe_gb_s = 15.0;
  in.decode_tokens_per_s = 20.0;
  in.weight_bytes_per_token = 600'000'000;
  const Roofline r = compute_roofline(in);
  EXPECT_DOUBLE_EQ(r.decode_gb_s, 12.0);  // 20 x 0.6 GB
  EXPECT_DOUBLE_EQ(r.decode_efficiency, 0.8);
  EXPECT_TRUE(std::isnan(r.prefill_gop_s));

  in.probe_gb_s = kUnknown;  // no probe: no efficiency, still GB/s
  EXPECT_TRUE(std::isnan(compute_roofline(in).decode_efficiency));
  EXPECT_DOUBLE_EQ(compute_roofline(in).decode_gb_s, 12.0);
}

TEST(Roofline, EachDecodeRepetitionIsSetAgainstTheProbeAroundIt) {
  RooflineInputs in;
  in.probe_gb_s = 20.0;  // the median of the passes before and after the tests
  in.weight_bytes_per_token = 500'000'000;
  in.decode_tokens_per_s = 30.0;
  // The bandwidth fell from 20 to 10 GB/s during the run and decode with it:
  // every repetition ran at 75% of the bandwidth of its moment.
  in.decode_samples = {30.0, 22.5, 15.0};
  in.probe_between = {20.0, 20.0, 10.0, 10.0};
  Roofline r = compute_roofline(in);
  ASSERT_EQ(r.decode_efficiency_paired.n, 3u);
  EXPECT_DOUBLE_EQ(r.decode_efficiency_paired.samples[0], 0.75);  // 15 GB/s over (20 + 20) / 2
  EXPECT_DOUBLE_EQ(r.decode_efficiency_paired.samples[1], 0.75);  // 11.25 over (20 + 10) / 2
  EXPECT_DOUBLE_EQ(r.decode_efficiency_paired.samples[2], 0.75);  // 7.5 over 10
  EXPECT_DOUBLE_EQ(r.decode_efficiency, 0.75);
  EXPECT_DOUBLE_EQ(r.decode_gb_s, 15.0);  // the median t/s still gives the GB/s

  in.probe_between.pop_back();  // not one pass around each repetition: the plain ratio
  r = compute_roofline(in);
  EXPECT_TRUE(r.decode_efficiency_paired.empty());
  EXPECT_DOUBLE_EQ(r.decode_efficiency, 0.75);  // 15 / 20
  in.probe_between = {20.0, 0.0, 0.0, 10.0};  // a failed pass: no paired figure
  EXPECT_TRUE(compute_roofline(in).decode_efficiency_paired.empty());
}

TEST(Roofline, TheProbeCountsBeforeAndAfterTheTests) {
  ProbeResult p;
  p.gb_per_s = Stats::of({30, 31, 29, 30, 32});
  EXPECT_DOUBLE_EQ(probe_reference_gb_s(p), 30);  // before only: its median
  EXPECT_DOUBLE_EQ(probe_drift(p), 0);
  p.gb_per_s_after = Stats::of({20, 21, 19, 20, 22});
  EXPECT_DOUBLE_EQ(probe_reference_gb_s(p), (22 + 29) / 2.0);  // the median of all ten passes
  EXPECT_DOUBLE_EQ(probe_drift(p), 10.0 / 30);
  std::swap(p.gb_per_s, p.gb_per_s_after);  // rising bandwidth drifts as much
  EXPECT_DOUBLE_EQ(probe_drift(p), 10.0 / 30);
  EXPECT_TRUE(std::isnan(probe_reference_gb_s(ProbeResult{})));
}

TEST(Roofline, PrefillOpsCountMatmulsOutputAndAttention) {
  // 2 tokens after 3 cached: attended positions 4 + 5 = 9.
  // 2*2*100 (layer matmuls) + 2*50 (output, last token) + 2*layers(2)*attn_dim(8)*9
  EXPECT_DOUBLE_EQ(prefill_ops(100, 50, 2, 8, 2, 3), 400 + 100 + 288);
  EXPECT_DOUBLE_EQ(prefill_ops(100, 50, 2, 8, 0, 3), 0);
  // TinyLlama shape, 512 tokens: ~2.0 GOP per token, mostly the matmuls.
  const double per_token = prefill_ops(968884224, 65536000, 22, 4096, 512, 0) / 512;
  EXPECT_NEAR(per_token / 1e9, 2 * 0.968884224 + 2 * 0.065536 / 512 + 2 * 22 * 4096 * 256.5 / 1e9, 1e-9);

  RooflineInputs in;
  in.prefill_tokens_per_s = 100;
  in.n_prompt = 512;
  in.prefill_ops_total = 512 * 2e9;
  in.peak.gop_s = 800;
  const Roofline r = compute_roofline(in);
  EXPECT_DOUBLE_EQ(r.prefill_gop_per_token, 2.0);
  EXPECT_DOUBLE_EQ(r.prefill_gop_s, 200.0);
  EXPECT_DOUBLE_EQ(r.prefill_fraction, 0.25);
}

TEST(Roofline, PeakFromClocksAndIssueWidth) {
  using gguf::GgmlType::BF16, gguf::GgmlType::F16, gguf::GgmlType::Q8_0;
  const auto arm = kernels::features_of(kernels::Arch::aarch64, {kernels::Feature::asimd, kernels::Feature::dotprod,
                                                                  kernels::Feature::fp16});
  // dotprod: SDOT = 16 MACs; 2 pipes on a performance core: 64 ops/cycle.
  EXPECT_DOUBLE_EQ(ops_per_cycle("dotprod", Q8_0, arm, "performance"), 64);
  EXPECT_DOUBLE_EQ(ops_per_cycle("dotprod", Q8_0, arm, "flagship"), 128);
  EXPECT_DOUBLE_EQ(ops_per_cycle("dotprod", Q8_0, arm, "efficiency"), 32);
  EXPECT_DOUBLE_EQ(ops_per_cycle("i8mm", Q8_0, arm, "performance"), 128);
  kernels::CpuFeatures sme = arm;
  sme.sme_vector_bits = 512;  // 16 x 16 floats per FMOPA
  EXPECT_DOUBLE_EQ(ops_per_cycle("sme", Q8_0, sme, "performance"), 512);
  EXPECT_DOUBLE_EQ(ops_per_cycle("neon", Q8_0, arm, "performance"), 32);
  EXPECT_DOUBLE_EQ(ops_per_cycle("neon", F16, arm, "performance"), 32);  // fp16 FMLA: 8 lanes
  EXPECT_DOUBLE_EQ(ops_per_cycle("ref", Q8_0, arm, "performance"), 2);
  const PeakEstimate p = estimate_peak("dotprod", Q8_0, arm, {{3.0, "flagship"}, {2.0, "performance"}});
  EXPECT_DOUBLE_EQ(p.gop_s, 3.0 * 128 + 2.0 * 64);
  EXPECT_NE(p.method.find("2 cores"), std::string::npos) << p.method;

  const auto x86 = kernels::features_of(kernels::Arch::x86_64, {kernels::Feature::avx2, kernels::Feature::fma,
                                                                 kernels::Feature::avx512f, kernels::Feature::avx512vnni});
  EXPECT_DOUBLE_EQ(estimate_peak("hwy", Q8_0, x86, {{2.6, "unknown"}, {2.6, "unknown"}}).gop_s, 2 * 2.6 * 256);
  EXPECT_DOUBLE_EQ(ops_per_cycle("hwy", F16, x86, "unknown"), 64);
  EXPECT_DOUBLE_EQ(ops_per_cycle("hwy", BF16, x86, "unknown"), 64);  // no AVX512-BF16: widened, F32 FMAs
  auto x86_bf16 = x86;
  x86_bf16.set(kernels::Feature::avx512bf16);
  EXPECT_DOUBLE_EQ(ops_per_cycle("hwy", BF16, x86_bf16, "unknown"), 128);  // VDPBF16PS: 32 MACs
  EXPECT_DOUBLE_EQ(ops_per_cycle("i8mm", BF16, arm, "performance"), 64);  // BFMMLA: 16 MACs

  const PeakEstimate unknown = estimate_peak("dotprod", Q8_0, arm, {{0, "performance"}});
  EXPECT_TRUE(std::isnan(unknown.gop_s));
  EXPECT_NE(unknown.method.find("unknown"), std::string::npos);
}

TEST(Probe, BufferSizing) {
  constexpr uint64_t MiB = 1 << 20;
  EXPECT_EQ(probe_buffer_bytes(8 * MiB, 0), 128 * MiB);          // phones: at least 128 MiB
  EXPECT_EQ(probe_buffer_bytes(64 * MiB, 0), 256 * MiB);         // 4x the last-level cache
  EXPECT_EQ(probe_buffer_bytes(480 * MiB, 0), 1024 * MiB);       // at most 1 GiB
  EXPECT_EQ(probe_buffer_bytes(8 * MiB, 200 * MiB), 50 * MiB);   // a quarter of MemAvailable
  EXPECT_EQ(probe_buffer_bytes(8 * MiB, 0, 3 * MiB + 5), 3 * MiB);  // --probe-mib
}

TEST(Probe, SumsAndMeasures) {
  std::vector<uint64_t> v(1001);
  uint64_t expect = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = i * i * 0x9E3779B97F4A7C15ull;
    expect += v[i];
  }
  for (size_t n : {0, 1, 7, 31, 33, 1000, 1001}) {
    uint64_t part = 0;
    for (size_t i = 0; i < n; ++i) part += v[i];
    EXPECT_EQ(sum_words(v.data(), n), part) << n;
    const char* name = nullptr;
    EXPECT_EQ(widest_sum_words(&name)(v.data(), n), part) << name << " " << n;
  }
  EXPECT_EQ(sum_words(v.data(), v.size()), expect);

  engine::set_log_level(engine::LogLevel::warning);  // no pool description in the test log
  engine::ThreadPool pool(engine::ThreadPlan::unpinned(2));
  const ProbeResult r = probe_read_bandwidth(pool, 4 << 20, 3);
  EXPECT_EQ(r.buffer_bytes, 4u << 20);
  EXPECT_EQ(r.threads, 2);
  EXPECT_NE(r.loads, "unknown");
  ASSERT_EQ(r.gb_per_s.n, 3u);
  EXPECT_GT(r.gb_per_s.min, 0);
  EXPECT_EQ(r.kernel, "none");  // no kernel asked for
  EXPECT_TRUE(r.kernel_gb_per_s.empty());
  EXPECT_TRUE(std::isnan(r.kernel_share));

  // With a decode kernel: one of its passes after each plain one, over the
  // same buffer, set against the plain pass before it.
  const kernels::MatmulKernel* q4_0 =
      kernels::select_matmul(gguf::GgmlType::Q4_0, kernels::host_cpu_features(), std::nullopt).kernel;
  ASSERT_NE(q4_0, nullptr);
  const ProbeResult k = probe_read_bandwidth(pool, 4 << 20, 3, {q4_0, 2048});
  EXPECT_EQ(k.kernel, q4_0->name);
  ASSERT_EQ(k.kernel_gb_per_s.n, 3u);
  EXPECT_GT(k.kernel_gb_per_s.min, 0);
  EXPECT_GT(k.kernel_share, 0);
  EXPECT_LE(k.kernel_share, k.kernel_gb_per_s.max / k.gb_per_s.min);
}

Sustained rounds(const std::vector<double>& tps, const std::vector<double>& temp, const std::vector<double>& mhz) {
  Sustained s;
  s.rounds = static_cast<int>(tps.size());
  for (size_t i = 0; i < tps.size(); ++i) {
    s.per_round.push_back({static_cast<int>(i + 1), 10.0 * i, tps[i], temp.empty() ? kUnknown : temp[i],
                           mhz.empty() ? kUnknown : mhz[i], kUnknown});
  }
  judge_sustained(s);
  return s;
}

TEST(Sustained, Verdicts) {
  EXPECT_EQ(rounds({20, 20.2, 19.9, 20.1, 20, 20.1}, {40, 41, 42, 42, 43, 43}, {3000, 3000, 3000, 3000, 3000, 3000})
                .verdict,
            "stable");
  const Sustained hot =
      rounds({20, 20, 18, 15, 14, 14}, {40, 45, 55, 62, 66, 67}, {3000, 3000, 2600, 2100, 1900, 1900});
  EXPECT_EQ(hot.verdict, "throttling");
  EXPECT_NE(hot.evidence.find("20.00 -> 14.00 tokens/s"), std::string::npos) << hot.evidence;
  EXPECT_NE(hot.evidence.find("clock 3000 -> 1900 MHz"), std::string::npos) << hot.evidence;
  // Hotter only (clocks not readable) still counts.
  EXPECT_EQ(rounds({20, 20, 18, 15, 14, 14}, {40, 45, 55, 62, 66, 67}, {}).verdict, "throttling");
  const Sustained flat = rounds({20, 20, 18, 15, 14, 14}, {40, 40, 40, 40, 40, 40}, {3000, 3000, 3000, 3000, 3000, 3000});
  EXPECT_EQ(flat.verdict, "slowdown");
  EXPECT_NE(flat.evidence.find("not thermal"), std::string::npos);
  const Sustained blind = rounds({20, 20, 18, 15, 14, 14}, {}, {});
  EXPECT_EQ(blind.verdict, "slowdown");
  EXPECT_NE(blind.evidence.find("not readable"), std::string::npos);
  EXPECT_EQ(rounds({20}, {}, {}).verdict, "stable");
  EXPECT_EQ(rounds({}, {}, {}).verdict, "not run");
}

}  // namespace
