#include "tests/bench/example_report.h"

#include "engine/threads/topology.h"
#include "tools/bench/environment.h"
#include "tools/bench/roofline.h"
#include "tools/bench/sha256.h"
#include "tools/bench/sustained.h"

namespace bench_test {

std::string bench_fixture(const std::string& name) { return std::string(ENGINE_BENCH_FIXTURES) + "/" + name; }
std::string topology_fixture(const std::string& name) { return std::string(ENGINE_TOPOLOGY_FIXTURES) + "/" + name; }

bench::Report example_report() {
  using namespace bench;
  const std::string root = bench_fixture("pixel-8-pro");
  const FsRoot fs(root);
  const engine::CpuTopology topology = engine::CpuTopology::detect(root);
  const kernels::CpuFeatures cpu = features_from_cpuinfo(fs.read("/proc/cpuinfo").value_or(""));

  Report r;
  r.created = "2025-01-01T00:00:00Z";
  r.build = {"0.1.0", "Clang 18.0.1", "ref neon dotprod i8mm sve", "optimized"};
  r.device = collect_device(fs, topology, cpu);
  r.settings.command_line =
      "bench -m tinyllama-1.1b-Q4_0.gguf --rounds 6 --interval 10 (example: environment from "
      "tests/fixtures/bench/pixel-8-pro, measurements made up)";

  Run run;
  ModelInfo& m = run.model;
  m.path = "/data/local/tmp/tinyllama-1.1b-Q4_0.gguf";
  m.name = "tinyllama-1.1b";
  m.arch = "llama";
  m.file_bytes = 636760064;
  m.sha256 = Sha256::of("example model file");
  m.sha256_source = "computed";
  m.tensor_types = {{"F32", 45, 372736}, {"Q4_0", 155, 594542592}, {"Q6_K", 1, 53760000}};
  m.n_layer = 22;
  m.n_embd = 2048;
  m.n_ff = 5632;
  m.n_head = 32;
  m.n_head_kv = 4;
  m.n_vocab = 32000;
  m.weight_bytes_per_token = 598736896;
  m.layer_params = 968884224;
  m.output_params = 65536000;
  m.kernels = {{"Q4_0", "matmul_f32_q8_0_q4_0_4x8_i8mm", "i8mm", "i8mm", false, {}},
               {"Q6_K", "matmul_f32_q8_k_q6_k_4x8_i8mm", "i8mm", "i8mm", false, {}}};
  m.kv_type = "f16";
  m.kv_layers = "22 attention layers x 4.0 MiB";
  m.kv_n_ctx = 4096;
  m.kv_bytes = m.kv_full_bytes = 22ull * 4096 * 512 * 2;  // 4 KV heads of 64, keys and values, F16
  m.kv_cached_layers = 22;
  m.load_ms = 412;
  m.load_repack_ms = 287;
  m.plain_read_ms = 96;
  m.repack_cache = "off";
  m.rss_before_load_bytes = 4718592;
  m.rss_after_load_bytes = 641728512;
  m.peak_rss_bytes = 702545920;
  m.repacked_bytes = 598736896;
  m.repacked_huge_page_bytes = 597688320;

  ThreadsInfo& t = run.threads;
  t.n_threads = 5;
  t.affinity = "default";
  t.plan = "5 threads (default): t0 cpu8 prime Cortex-X3; t1-t4 cpu4-7 big Cortex-A715";
  t.recommended = 5;
  const int cpus[] = {8, 4, 5, 6, 7};
  for (int i = 0; i < 5; ++i) t.workers.push_back({i, cpus[i], "pinned", 0, cpus[i]});

  run.probe.buffer_bytes = 128ull << 20;
  run.probe.llc_bytes = r.device.llc_bytes;
  run.probe.threads = 5;
  run.probe.loads = "baseline";
  run.probe.huge_page_bytes = 134217728;
  run.probe.gb_per_s = Stats::of({38.1, 38.4, 37.9, 38.6, 38.2});
  run.probe.gb_per_s_after = Stats::of({38.2, 38.3, 38.0, 38.5, 38.2});
  run.probe.gb_per_s_between = Stats::of({38.0, 38.4, 38.1, 37.9, 38.3, 38.2});
  run.probe.kernel = "matmul_f32_q8_0_q4_0_4x8_i8mm";
  run.probe.kernel_gb_per_s = Stats::of({35.2, 35.6, 34.9, 35.8, 35.1});
  run.probe.kernel_share = Stats::of({35.2 / 38.1, 35.6 / 38.4, 34.9 / 37.9, 35.8 / 38.6, 35.1 / 38.2}).median;

  TestResult pp{"pp512", "prefill", 512, 0, 0, Stats::of({101.2, 99.8, 100.5, 100.9, 98.7}), {}};
  for (double v : pp.tokens_per_s.samples) pp.ms.samples.push_back(1000.0 * 512 / v);
  pp.ms = Stats::of(pp.ms.samples);
  TestResult ttft{"ttft512", "ttft", 512, 0, 0, {}, pp.ms};
  TestResult tg{"tg128", "decode", 0, 128, 0, Stats::of({52.4, 52.9, 52.1, 52.6, 52.8}), {}};
  for (double v : tg.tokens_per_s.samples) tg.ms.samples.push_back(1000.0 * 128 / v);
  tg.ms = Stats::of(tg.ms.samples);
  run.tests = {pp, ttft, tg};

  run.before = take_snapshot(fs, topology);
  run.after = run.before;
  for (ThermalZone& z : run.after.thermal) z.celsius += 3.5;
  run.cpu_share = 0.98;
  run.steal_share = 0;  // a phone: its /proc/stat counts no steal

  Sustained& s = run.sustained;
  s.rounds = 6;
  s.interval_s = 10;
  s.n_gen = 128;
  const double tps[] = {52.6, 52.5, 52.7, 52.4, 52.6, 52.5};
  for (int i = 0; i < 6; ++i) {
    s.per_round.push_back({i + 1, 12.5 * i, tps[i], 41.2 + 0.4 * i, 2650, 2914});
  }
  judge_sustained(s);

  RooflineInputs in;
  in.probe_gb_s = probe_reference_gb_s(run.probe);
  in.decode_tokens_per_s = tg.tokens_per_s.median;
  in.decode_samples = tg.tokens_per_s.samples;
  in.probe_between = run.probe.gb_per_s_between.samples;
  in.weight_bytes_per_token = m.weight_bytes_per_token;
  in.kv_bytes_per_token = 64 * 22 * 512 * 2 * 2;
  in.prefill_tokens_per_s = pp.tokens_per_s.median;
  in.n_prompt = 512;
  in.prefill_ops_total = prefill_ops(m.layer_params, m.output_params, m.n_layer, 2048 + 2048, 512, 0);
  std::vector<PeakCore> cores = {{2.914, "flagship"}, {2.37, "performance"}, {2.37, "performance"},
                                 {2.37, "performance"}, {2.37, "performance"}};
  in.peak = estimate_peak("i8mm", gguf::GgmlType::Q8_0, cpu, cores);
  run.roofline = compute_roofline(in);
  r.runs.push_back(std::move(run));
  return r;
}

}  // namespace bench_test
