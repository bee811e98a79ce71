// The environment block from captured trees (tests/fixtures/bench): the device
// name from build.prop, the device tree or DMI; clusters with governors;
// clocks, thermal zones, power and memory; and "unknown" where nothing is
// readable (tests/fixtures/topology/container).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "engine/threads/topology.h"
#include "tests/bench/example_report.h"
#include "tools/bench/environment.h"
#include "tools/bench/report.h"

namespace {

using namespace bench;
using bench_test::bench_fixture;
using bench_test::topology_fixture;

struct Collected {
  DeviceInfo device;
  Snapshot snapshot;
  kernels::CpuFeatures cpu;
};

Collected collect(const std::string& root) {
  const FsRoot fs(root);
  const engine::CpuTopology topology = engine::CpuTopology::detect(root);
  Collected c;
  c.cpu = features_from_cpuinfo(fs.read("/proc/cpuinfo").value_or(""));
  c.device = collect_device(fs, topology, c.cpu);
  c.snapshot = take_snapshot(fs, topology);
  return c;
}

const ThermalZone* zone(const Snapshot& s, const std::string& type) {
  for (const ThermalZone& z : s.thermal) {
    if (z.type == type) return &z;
  }
  return nullptr;
}

TEST(Environment, AndroidPhoneFromBuildProp) {
  const Collected c = collect(bench_fixture("pixel-8-pro"));
  EXPECT_EQ(c.device.model, "Pixel 8 Pro");
  EXPECT_EQ(c.device.model_source, "build.prop");
  EXPECT_EQ(c.device.manufacturer, "Google");
  EXPECT_EQ(c.device.soc, "Tensor G3");
  EXPECT_EQ(c.device.kernel, "5.15.110-android14-11-gcc48824eebe8");
  EXPECT_EQ(c.device.arch, "aarch64");
  EXPECT_TRUE(c.cpu.has(kernels::Feature::i8mm));
  EXPECT_TRUE(c.cpu.has(kernels::Feature::dotprod));
  EXPECT_TRUE(c.cpu.has(kernels::Feature::sve2));
  ASSERT_EQ(c.device.clusters.size(), 3u);
  EXPECT_EQ(c.device.clusters[0].rank, "prime");
  EXPECT_EQ(c.device.clusters[0].core_name, "Cortex-X3");
  EXPECT_EQ(c.device.clusters[0].cpus, std::vector<int>{8});
  EXPECT_EQ(c.device.clusters[2].rank, "little");
  EXPECT_EQ(c.device.clusters[2].cpus, (std::vector<int>{0, 1, 2, 3}));
  for (const ClusterInfo& cl : c.device.clusters) {
    EXPECT_EQ(cl.governor, "schedutil");
    EXPECT_EQ(cl.driver, "cpufreq-dt");
  }
  EXPECT_EQ(c.device.llc_bytes, 8u << 20);
  EXPECT_EQ(c.device.mem_total_bytes, 11718464ull * 1024);

  ASSERT_EQ(c.snapshot.cores.size(), 9u);
  EXPECT_EQ(c.snapshot.cores[8].cpu, 8);
  EXPECT_EQ(c.snapshot.cores[8].cur_khz, 2802000u);
  EXPECT_EQ(c.snapshot.cores[8].policy_max_khz, 2914000u);
  EXPECT_EQ(c.snapshot.cores[8].hw_max_khz, 2914000u);
  ASSERT_EQ(c.snapshot.thermal.size(), 5u);
  ASSERT_NE(zone(c.snapshot, "BIG"), nullptr);
  EXPECT_DOUBLE_EQ(zone(c.snapshot, "BIG")->celsius, 41.2);
  EXPECT_DOUBLE_EQ(max_temp(c.snapshot), 41.2);
  EXPECT_EQ(c.snapshot.power.battery_status, "Discharging");
  EXPECT_DOUBLE_EQ(c.snapshot.power.battery_percent, 78);
  EXPECT_EQ(c.snapshot.power.charger, "offline");
  EXPECT_EQ(c.snapshot.power.power_save, "off");
  EXPECT_EQ(c.snapshot.mem_available_bytes, 5234112ull * 1024);
}

TEST(Environment, HotThrottledPhone) {
  const Collected c = collect(bench_fixture("galaxy-s24-hot"));
  EXPECT_EQ(c.device.model, "SM-S921B");
  EXPECT_EQ(c.device.manufacturer, "samsung");
  EXPECT_EQ(c.device.soc, "SM8650");
  ASSERT_EQ(c.device.clusters.size(), 3u);
  EXPECT_EQ(c.device.clusters[0].governor, "walt");
  // The prime core: capped at 1555 of 3302 MHz.
  const CoreFreq& prime = c.snapshot.cores[7];
  EXPECT_EQ(prime.policy_max_khz, 1555200u);
  EXPECT_EQ(prime.hw_max_khz, 3302400u);
  EXPECT_NEAR(mean_policy_max_mhz(c.snapshot, {7}), 1555.2, 1e-9);
  EXPECT_DOUBLE_EQ(max_temp(c.snapshot), 86.4);
  EXPECT_EQ(c.snapshot.power.power_save, "on");
  EXPECT_EQ(c.snapshot.power.charger, "online");
  EXPECT_EQ(c.snapshot.power.battery_status, "Charging");
}

TEST(Environment, PowersaveGovernorAndLowBattery) {
  const Collected c = collect(bench_fixture("dimensity-800-powersave"));
  EXPECT_EQ(c.device.model, "M2004J7AC");
  for (const ClusterInfo& cl : c.device.clusters) {
    EXPECT_EQ(cl.governor, "powersave");
    EXPECT_TRUE(is_slow_governor(cl.governor, cl.driver));
  }
  EXPECT_DOUBLE_EQ(c.snapshot.power.battery_percent, 12);
  EXPECT_EQ(c.device.llc_bytes, 0u);  // no cache directory in this tree
  EXPECT_FALSE(c.cpu.has(kernels::Feature::i8mm));
  EXPECT_TRUE(c.cpu.has(kernels::Feature::dotprod));
}

TEST(Environment, BoardFromDeviceTree) {
  const Collected c = collect(bench_fixture("raspberry-pi-5"));
  EXPECT_EQ(c.device.model, "Raspberry Pi 5 Model B Rev 1.0");  // the trailing NUL is dropped
  EXPECT_EQ(c.device.model_source, "device-tree");
  EXPECT_EQ(c.device.clusters.at(0).governor, "ondemand");
  ASSERT_EQ(c.snapshot.thermal.size(), 1u);
  EXPECT_EQ(c.snapshot.thermal[0].zone, "thermal_zone0");
  EXPECT_DOUBLE_EQ(c.snapshot.thermal[0].celsius, 52.35);
  EXPECT_EQ(c.snapshot.power.battery_status, "unknown");
  EXPECT_EQ(c.snapshot.power.charger, "unknown");
}

TEST(Environment, ServerFromDmiWithHardwareManagedPowersave) {
  const Collected c = collect(bench_fixture("x86-server-dmi"));
  EXPECT_EQ(c.device.model, "Supermicro AS -1014S-WTRT");
  EXPECT_EQ(c.device.model_source, "dmi");
  EXPECT_EQ(c.device.arch, "x86_64");
  EXPECT_TRUE(c.cpu.has(kernels::Feature::avx2));
  EXPECT_TRUE(c.cpu.has(kernels::Feature::fma));
  EXPECT_FALSE(c.cpu.has(kernels::Feature::avx512f));
  const ClusterInfo& cl = c.device.clusters.at(0);
  EXPECT_EQ(cl.governor, "powersave");
  EXPECT_EQ(cl.driver, "amd-pstate-epp");
  EXPECT_FALSE(is_slow_governor(cl.governor, cl.driver));  // hardware-managed: not slow
  EXPECT_EQ(c.snapshot.power.platform_profile, "performance");
  EXPECT_EQ(c.device.llc_bytes, 128u << 20);
}

TEST(Environment, NothingReadableIsUnknown) {
  const Collected c = collect(topology_fixture("container"));
  EXPECT_EQ(c.device.model, "unknown");
  EXPECT_EQ(c.device.model_source, "none");
  EXPECT_EQ(c.device.soc, "unknown");
  EXPECT_EQ(c.device.kernel, "unknown");
  for (const ClusterInfo& cl : c.device.clusters) EXPECT_EQ(cl.governor, "unknown");
  EXPECT_TRUE(c.snapshot.thermal.empty());
  EXPECT_TRUE(std::isnan(max_temp(c.snapshot)));
  EXPECT_EQ(c.snapshot.power.power_save, "unknown");
  EXPECT_EQ(c.snapshot.power.battery_status, "unknown");
  EXPECT_EQ(c.snapshot.mem_available_bytes, 0u);
  EXPECT_TRUE(std::isnan(mean_cur_mhz(c.snapshot, {})));
}

TEST(Environment, ThreadsInfoWithoutAPool) {
  const engine::CpuTopology topology = engine::CpuTopology::detect(bench_fixture("pixel-8-pro"));
  const engine::ThreadPlan plan = engine::ThreadPlan::make(topology, {});
  const ThreadsInfo t = threads_info(plan, nullptr);
  EXPECT_EQ(t.n_threads, 5);
  EXPECT_EQ(t.recommended, 5);
  ASSERT_EQ(t.workers.size(), 5u);
  EXPECT_EQ(t.workers[0].cpu_asked, 8);
  EXPECT_EQ(worker_cpus(t), (std::vector<int>{8, 4, 5, 6, 7}));
  const DeviceInfo d = collect(bench_fixture("pixel-8-pro")).device;
  EXPECT_EQ(big_core_count(d), 5);
  ASSERT_NE(cluster_of(d, 2), nullptr);
  EXPECT_EQ(cluster_of(d, 2)->rank, "little");
}

// Steal time from /proc/stat, read twice from a tree written here: the share
// of the CPUs' time between the reads that the hypervisor took.
TEST(Environment, StealShareFromProcStat) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("bench-steal-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "proc");
  const auto write_stat = [&](const std::string& text) { std::ofstream(root / "proc" / "stat") << text; };
  const FsRoot fs(root.string());
  //           user nice system idle iowait irq softirq steal guest guest_nice
  write_stat("cpu  2000 0 400 1500 10 0 10 80 0 0\n"
             "cpu0 1000 0 200 760 5 0 5 30 0 0\n"
             "cpu1 1000 0 200 740 5 0 5 50 0 0\n"
             "intr 12345 0 0\nctxt 67890\n");
  const std::vector<CpuTicks> before = read_cpu_ticks(fs);
  ASSERT_EQ(before.size(), 2u);  // the "cpu " sum is not a CPU
  EXPECT_EQ(before[1].cpu, 1);
  EXPECT_EQ(before[1].total, 2000u);
  EXPECT_EQ(before[1].steal, 50u);
  // cpu0: 400 more ticks, 40 of them stolen; cpu1: 400 more, 120 stolen.
  write_stat("cpu  2580 0 400 1560 10 0 10 240 0 0\n"
             "cpu0 1300 0 200 820 5 0 5 70 0 0\n"
             "cpu1 1280 0 200 740 5 0 5 170 0 0\n");
  const std::vector<CpuTicks> after = read_cpu_ticks(fs);
  std::vector<CpuTicks> elapsed;
  add_elapsed(elapsed, before, after);
  EXPECT_DOUBLE_EQ(steal_share(elapsed, {0}), 0.1);
  EXPECT_DOUBLE_EQ(steal_share(elapsed, {1}), 0.3);
  EXPECT_DOUBLE_EQ(steal_share(elapsed, {}), 0.2);  // every CPU
  EXPECT_TRUE(std::isnan(steal_share(elapsed, {2})));  // not listed
  // A second interval adds up: cpu1 400 more ticks, none stolen.
  add_elapsed(elapsed, {{1, 0, 0}}, {{1, 400, 0}});
  EXPECT_DOUBLE_EQ(steal_share(elapsed, {1}), 0.15);
  std::vector<CpuTicks> none;
  add_elapsed(none, before, before);
  EXPECT_TRUE(std::isnan(steal_share(none, {0})));  // no time passed
  // A kernel without the steal field (before 2.6.11): nothing to report.
  write_stat("cpu0 1000 0 200 760 5 0 5\n");
  EXPECT_TRUE(read_cpu_ticks(fs).empty());
  std::filesystem::remove_all(root);
  EXPECT_TRUE(read_cpu_ticks(fs).empty());  // unreadable
}

}  // namespace
