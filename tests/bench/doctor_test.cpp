// The doctor's checks on captured trees: the device-level WARN lines fire on
// the hot, capped, battery-saving phone and on the powersave phone, and not on
// the healthy one; unknown things are INFO, never WARN. Kernel lines use this
// binary on this CPU (they differ per build and per qemu CPU model), so the
// tests look at them only where every build agrees.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/threads/topology.h"
#include "tests/bench/example_report.h"
#include "tools/bench/doctor_checks.h"
#include "tools/bench/environment.h"

namespace {

using namespace bench;

struct Doctor {
  std::vector<Check> checks;
  std::string text;

  explicit Doctor(const std::string& root, const ModelInfo* model = nullptr, double steal = kUnknown) {
    const FsRoot fs(root);
    const engine::CpuTopology topology = engine::CpuTopology::detect(root);
    DoctorInput in;
    in.fs = &fs;
    in.topology = &topology;
    in.cpu = kernels::host_cpu_features();
    in.build = collect_build();
    in.model = model;
    in.steal_share = steal;
    checks = doctor_checks(in);
    text = format_checks(checks);
  }
  std::vector<Check> with(const std::string& topic, Level level) const {
    std::vector<Check> out;
    for (const Check& c : checks) {
      if (c.topic == topic && c.level == level) out.push_back(c);
    }
    return out;
  }
  int device_warnings() const {
    return static_cast<int>(std::count_if(checks.begin(), checks.end(), [](const Check& c) {
      return c.level == Level::warn && c.topic.rfind("kernel", 0) != 0 && c.topic != "build" && c.topic != "ENGINE_MAX_TIER";
    }));
  }
};

TEST(Doctor, HotThrottledPhoneWarnsAboutHeatCapsAndBatterySaver) {
  const Doctor d(bench_test::bench_fixture("galaxy-s24-hot"));
  const auto caps = d.with("clock cap", Level::warn);
  ASSERT_EQ(caps.size(), 2u) << d.text;  // prime and big; the little cluster is not in the plan
  EXPECT_NE(caps[0].message.find("capped at 1555 MHz of 3302 MHz"), std::string::npos) << caps[0].message;
  EXPECT_FALSE(caps[0].advice.empty());
  const auto hot = d.with("temperature", Level::warn);
  ASSERT_EQ(hot.size(), 1u) << d.text;
  EXPECT_NE(hot[0].message.find("cpu-1-7-0 at 86.4 C"), std::string::npos) << hot[0].message;
  EXPECT_EQ(d.with("power", Level::warn).size(), 1u) << d.text;
  const auto pages = d.with("huge pages", Level::warn);
  ASSERT_EQ(pages.size(), 1u) << d.text;
  EXPECT_NE(pages[0].advice.find("transparent_hugepage/enabled"), std::string::npos);
  EXPECT_NE(d.text.find("doctor: "), std::string::npos);
  EXPECT_GE(warning_count(d.checks), 5);
}

TEST(Doctor, PowersaveGovernorOnTheCoresInUse) {
  const Doctor d(bench_test::bench_fixture("dimensity-800-powersave"));
  const auto gov = d.with("governor", Level::warn);
  ASSERT_EQ(gov.size(), 1u) << d.text;  // the big A76 cluster the plan uses
  EXPECT_NE(gov[0].message.find("cpu 4-7"), std::string::npos) << gov[0].message;
  EXPECT_NE(gov[0].advice.find("scaling_governor"), std::string::npos);
  EXPECT_EQ(d.with("governor", Level::info).size(), 1u) << d.text;  // the little cluster, not in use
  const auto power = d.with("power", Level::warn);
  ASSERT_EQ(power.size(), 1u) << d.text;
  EXPECT_NE(power[0].message.find("12%"), std::string::npos);
}

TEST(Doctor, HealthyPhoneHasNoDeviceWarnings) {
  const Doctor d(bench_test::bench_fixture("pixel-8-pro"));
  EXPECT_EQ(d.device_warnings(), 0) << d.text;
  EXPECT_EQ(d.with("governor", Level::ok).size(), 3u) << d.text;
  EXPECT_EQ(d.with("temperature", Level::ok).size(), 1u) << d.text;
  EXPECT_EQ(d.with("huge pages", Level::ok).size(), 1u) << d.text;
  const auto threads = d.with("threads", Level::ok);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_NE(threads[0].message.find("recommended: 5 threads"), std::string::npos) << threads[0].message;
  EXPECT_NE(threads[0].message.find("--cpus 8,4,5,6,7"), std::string::npos) << threads[0].message;
  EXPECT_NE(d.text.find("OK    device: Pixel 8 Pro (from build.prop)"), std::string::npos) << d.text;
}

TEST(Doctor, HardwareManagedPowersaveIsFine) {
  const Doctor d(bench_test::bench_fixture("x86-server-dmi"));
  EXPECT_EQ(d.with("governor", Level::warn).size(), 0u) << d.text;
  EXPECT_EQ(d.device_warnings(), 0) << d.text;
}

TEST(Doctor, UnreadableThingsAreInfoNotWarnings) {
  const Doctor d(bench_test::topology_fixture("container"));
  EXPECT_EQ(d.device_warnings(), 0) << d.text;
  EXPECT_FALSE(d.with("governor", Level::info).empty());
  EXPECT_EQ(d.with("temperature", Level::info).size(), 1u);
  EXPECT_EQ(d.with("power", Level::info).size(), 1u);
  EXPECT_EQ(d.with("memory", Level::info).size(), 1u);
  EXPECT_EQ(d.with("huge pages", Level::info).size(), 1u);
}

// A busy sample's steal time: WARN from 5%, OK below, no line unmeasured.
TEST(Doctor, StealTimeOfAVirtualMachineWarns) {
  const std::string root = bench_test::bench_fixture("x86-server-dmi");
  const Doctor stolen(root, nullptr, 0.14);
  const auto warn = stolen.with("steal", Level::warn);
  ASSERT_EQ(warn.size(), 1u) << stolen.text;
  EXPECT_NE(warn[0].message.find("steal time 14%"), std::string::npos) << warn[0].message;
  EXPECT_FALSE(warn[0].advice.empty());
  EXPECT_EQ(Doctor(root, nullptr, 0.01).with("steal", Level::ok).size(), 1u);
  const Doctor unmeasured(root);
  EXPECT_EQ(unmeasured.text.find("steal"), std::string::npos) << unmeasured.text;
}

// A small model next to the process's own memory: the few MiB the process
// had before the load, and the load's fixed part, are not an expansion.
TEST(Doctor, TheProcessesOwnMemoryIsNotAnExpansion) {
  ModelInfo m = bench_test::example_report().runs[0].model;
  m.file_bytes = 1185376;                    // the demo model
  m.rss_before_load_bytes = 4718592;         // 4.5 MiB, measured by doctor on it
  m.rss_after_load_bytes = 6396314;          // 6.1 MiB
  const Doctor d(bench_test::bench_fixture("pixel-8-pro"), &m);
  EXPECT_EQ(d.with("model memory", Level::ok).size(), 1u) << d.text;
}

TEST(Doctor, ModelMemoryFarAboveTheFileWarns) {
  ModelInfo m = bench_test::example_report().runs[0].model;
  m.rss_before_load_bytes = 5 << 20;
  m.rss_after_load_bytes = 3 * m.file_bytes + m.rss_before_load_bytes + bench::kLoadOverheadBytes;
  const Doctor d(bench_test::bench_fixture("pixel-8-pro"), &m);
  const auto mem = d.with("model memory", Level::warn);
  ASSERT_EQ(mem.size(), 1u) << d.text;
  EXPECT_NE(mem[0].message.find("(5.0 MiB before it)"), std::string::npos) << mem[0].message;
  EXPECT_NE(mem[0].message.find("the weights take 3.00x the file"), std::string::npos) << mem[0].message;
  // The model's kernels are the ones checked (the example's: i8mm, no fallback).
  EXPECT_EQ(d.with("kernel Q4_0", Level::ok).size(), 1u) << d.text;
}

}  // namespace
