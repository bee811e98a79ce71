// For every cause bench --compare knows, a pair of reports that differ only in
// that cause (and in the speed it costs) gets that cause first, on the right
// side, with evidence quoting both reports; swapping the reports swaps the
// side. Reports pass through JSON first, as --compare reads them.
#include <gtest/gtest.h>

#include <functional>

#include "tests/bench/example_report.h"
#include "tools/bench/diagnosis.h"
#include "tools/bench/json_value.h"
#include "tools/bench/report_json.h"
#include "tools/bench/sustained.h"
#include "tools/bench/text_util.h"

namespace {

using namespace bench;

Report through_json(const Report& r) { return report_from_json(JsonValue::parse(report_json(r))); }

void scale_speed(Report& r, double factor) {
  for (TestResult& t : r.runs[0].tests) {
    for (double& v : t.tokens_per_s.samples) v *= factor;
    for (double& v : t.ms.samples) v /= factor;
    t.tokens_per_s = Stats::of(t.tokens_per_s.samples);
    t.ms = Stats::of(t.ms.samples);
  }
}

struct Case {
  std::string cause;
  std::function<void(Report&)> inject;
};

std::vector<Case> cases() {
  return {
      {"different_file",
       [](Report& r) {
         ModelInfo& m = r.runs[0].model;
         m.sha256 = std::string(64, 'b');
         m.tensor_types = {{"F32", 45, 372736}, {"Q8_0", 155, 1123024896}, {"Q6_K", 1, 53760000}};
         m.weight_bytes_per_token = 1131000000;
         m.file_bytes = 1170000000;
         m.rss_after_load_bytes = 1180000000;
       }},
      {"kernel_fallback",
       [](Report& r) {
         KernelChoice& k = r.runs[0].model.kernels[0];
         k.kernel = "matmul_f32_q8_0_q4_0_1x1_ref";
         k.tier = "ref";
         k.fallback = true;
         k.rejected = {"matmul_f32_q8_0_q4_0_4x8_i8mm: not in this build"};
       }},
      {"unoptimized_build", [](Report& r) { r.build.build_type = "unoptimized"; }},
      {"weights_expanded", [](Report& r) { r.runs[0].model.rss_after_load_bytes = 3 * r.runs[0].model.file_bytes; }},
      {"thread_placement",
       [](Report& r) {
         ThreadsInfo& t = r.runs[0].threads;
         t.n_threads = 9;
         t.affinity = "all";
         t.workers.clear();
         const int cpus[] = {8, 4, 5, 6, 7, 0, 1, 2, 3};
         for (int i = 0; i < 9; ++i) t.workers.push_back({i, cpus[i], "pinned", 0, cpus[i]});
       }},
      {"pinning_failed",
       [](Report& r) {
         for (WorkerInfo& w : r.runs[0].threads.workers) {
           if (w.thread > 0) {
             w.pin = "failed";
             w.pin_error = 22;
           }
         }
       }},
      {"low_frequency",
       [](Report& r) {
         for (ClusterInfo& c : r.device.clusters) c.governor = "powersave";
         for (Snapshot* s : {&r.runs[0].before, &r.runs[0].after}) {
           for (CoreFreq& f : s->cores) f.policy_max_khz = f.hw_max_khz * 2 / 5;
         }
       }},
      {"throttling",
       [](Report& r) {
         Sustained& s = r.runs[0].sustained;
         const double tps[] = {52.6, 51.9, 46.0, 40.2, 36.5, 35.8};
         for (int i = 0; i < 6; ++i) {
           s.per_round[i].tokens_per_s = tps[i];
           s.per_round[i].max_temp_c = 41 + 8.0 * i;
           s.per_round[i].mean_freq_mhz = 2650 - 180.0 * i;
         }
         judge_sustained(s);
       }},
      {"cpu_contention",
       [](Report& r) {
         r.runs[0].cpu_share = 0.45;
         r.runs[0].before.load_avg_1m = 9.5;
       }},
      {"different_test",
       [](Report& r) {
         for (TestResult& t : r.runs[0].tests) {
           if (t.kind == "decode") t.n_depth = 4096;
         }
       }},
      {"measurement_kind",
       [](Report& r) {
         std::vector<TestResult>& tests = r.runs[0].tests;
         tests.pop_back();  // tg128
         TestResult mixed{"pp512+tg128", "mixed", 512, 128, 0, Stats::of({30.1, 29.8, 30.4, 30.0, 29.9}), {}};
         tests.push_back(mixed);
       }},
      {"thread_count",
       [](Report& r) {
         ThreadsInfo& t = r.runs[0].threads;
         t.n_threads = 3;
         t.workers.resize(3);
       }},
      {"small_pages",
       [](Report& r) {
         r.device.transparent_huge_pages = "never";
         r.runs[0].model.repacked_huge_page_bytes = 0;
       }},
      {"memory_bandwidth",
       [](Report& r) {
         r.runs[0].probe.gb_per_s = Stats::of({19.1, 19.0, 19.3});
         r.runs[0].roofline.probe_gb_s = 19.1;
       }},
      {"different_build", [](Report& r) { r.build.version = "0.2.0"; }},
      {"different_device",
       [](Report& r) {
         r.device.model = "Pixel 8";
         r.device.soc = "Tensor G3 (binned)";
       }},
  };
}

TEST(Diagnosis, EveryCauseHasAPair) {
  std::vector<std::string> covered;
  for (const Case& c : cases()) covered.push_back(c.cause);
  EXPECT_EQ(covered, diagnosis_causes());
}

TEST(Diagnosis, IdenticalReportsHaveNoFindings) {
  const Report a = through_json(bench_test::example_report());
  const Diagnosis d = diagnose(a, a);
  EXPECT_EQ(d.slower, '=');
  EXPECT_TRUE(d.findings.empty()) << d.findings.front().cause;
}

class DiagnosisPair : public ::testing::TestWithParam<size_t> {};

TEST_P(DiagnosisPair, InjectedCauseComesFirst) {
  const Case c = cases().at(GetParam());
  const Report a = through_json(bench_test::example_report());
  Report b_raw = bench_test::example_report();
  c.inject(b_raw);
  if (c.cause != "measurement_kind") scale_speed(b_raw, 0.4);
  const Report b = through_json(b_raw);

  const Diagnosis d = diagnose(a, b);
  ASSERT_FALSE(d.findings.empty()) << c.cause;
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.cause, c.cause) << d.headline;
  EXPECT_FALSE(f.evidence.empty());
  EXPECT_FALSE(f.summary.empty());
  if (c.cause != "different_build" && c.cause != "different_device") {
    EXPECT_EQ(f.side, 'B') << c.cause;
  }
  // Each evidence line quotes both reports.
  bool both = false;
  for (const std::string& e : f.evidence) both = both || (e.find("A ") != std::string::npos && e.find("B ") != std::string::npos);
  EXPECT_TRUE(both) << f.evidence.front();

  // Swapped: the same cause first, now on A's side.
  const Diagnosis swapped = diagnose(b, a);
  ASSERT_FALSE(swapped.findings.empty());
  EXPECT_EQ(swapped.findings.front().cause, c.cause);
  if (f.side == 'B') {
    EXPECT_EQ(swapped.findings.front().side, 'A');
  }

  const std::string text = format_compare(a, b, "a.json", "b.json");
  EXPECT_NE(text.find("1. **" + c.cause + "**"), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(Causes, DiagnosisPair, ::testing::Range<size_t>(0, 16),
                         [](const ::testing::TestParamInfo<size_t>& p) { return cases().at(p.param).cause; });

// The same shortfall of CPU time is the hypervisor's when steal time covers it
// (a virtual machine with nothing else running), other processes' when not.
TEST(Diagnosis, StealTimeNamesTheHypervisor) {
  const Report a = through_json(bench_test::example_report());
  for (const double steal : {0.35, 0.02}) {
    Report b = bench_test::example_report();
    b.runs[0].cpu_share = 0.55;
    b.runs[0].steal_share = steal;
    scale_speed(b, 0.5);
    const Diagnosis d = diagnose(a, through_json(b));
    ASSERT_FALSE(d.findings.empty());
    const Finding& f = d.findings.front();
    EXPECT_EQ(f.cause, "cpu_contention");
    EXPECT_EQ(f.summary.find("hypervisor") != std::string::npos, steal > 0.2) << f.summary;
    EXPECT_NE(f.evidence.front().find("steal time " + fmt_percent(steal)), std::string::npos) << f.evidence.front();
  }
}

TEST(Diagnosis, HeadlineStatesTheRatio) {
  const Report a = through_json(bench_test::example_report());
  Report b = bench_test::example_report();
  scale_speed(b, 0.25);
  const Diagnosis d = diagnose(a, through_json(b));
  EXPECT_EQ(d.slower, 'B');
  EXPECT_NEAR(d.ratio, 4.0, 1e-9);
  EXPECT_NE(d.headline.find("B is 4.00x slower"), std::string::npos) << d.headline;
  EXPECT_NE(d.headline.find("decode medians"), std::string::npos) << d.headline;
}

TEST(Diagnosis, SlowerSideCausesComeBeforeFasterSideOnes) {
  // A has a fallback but is faster anyway; B has a powersave governor and is slower.
  Report a = bench_test::example_report();
  a.runs[0].model.kernels[1].tier = "ref";
  a.runs[0].model.kernels[1].fallback = true;
  Report b = bench_test::example_report();
  for (ClusterInfo& c : b.device.clusters) c.governor = "powersave";
  scale_speed(b, 0.3);
  const Diagnosis d = diagnose(through_json(a), through_json(b));
  ASSERT_GE(d.findings.size(), 2u);
  EXPECT_EQ(d.findings[0].cause, "low_frequency");
  EXPECT_TRUE(d.findings[0].explains_slower);
  EXPECT_EQ(d.findings[1].cause, "kernel_fallback");
  EXPECT_EQ(d.findings[1].side, 'A');
  EXPECT_FALSE(d.findings[1].explains_slower);
}

}  // namespace
