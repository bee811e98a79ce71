// Topology detection on the fixture trees of real layouts (tests/fixtures/
// topology), on odd synthetic layouts, and on this machine.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/threads/cpu_list.h"
#include "engine/threads/thread_plan.h"
#include "engine/threads/topology.h"
#include "log_capture.h"
#include "tests/support/shared_data.h"

namespace {

using engine::Cluster;
using engine::CoreInfo;
using engine::CpuTopology;
using Rank = engine::Cluster::Rank;

std::string fixture(const std::string& name) { return std::string(ENGINE_TOPOLOGY_FIXTURES) + "/" + name; }

struct ExpectedCluster {
  Rank rank;
  std::vector<int> cpus;  // fastest first
  std::string core_name;
};

struct FixtureCase {
  std::string name;
  size_t n_cpus;
  std::string ranked_by;
  std::vector<ExpectedCluster> clusters;
  std::vector<int> default_plan;
};

std::ostream& operator<<(std::ostream& os, const FixtureCase& c) { return os << c.name; }

const std::vector<FixtureCase>& fixture_cases() {
  static const std::vector<FixtureCase> cases = {
      {"snapdragon-8-gen-3", 8, "cpu_capacity",
       {{Rank::prime, {7}, "Cortex-X4"}, {Rank::big, {2, 3, 4, 5, 6}, "Cortex-A720"}, {Rank::little, {0, 1}, "Cortex-A520"}},
       {7, 2, 3, 4, 5, 6}},
      {"snapdragon-8-elite", 8, "cpu_capacity",
       {{Rank::prime, {6, 7}, "Oryon"}, {Rank::big, {0, 1, 2, 3, 4, 5}, "Oryon"}},
       {6, 7, 0, 1, 2, 3, 4, 5}},
      {"dimensity-9300", 8, "cpu_capacity",
       {{Rank::prime, {7, 4, 5, 6}, "Cortex-X4"}, {Rank::big, {0, 1, 2, 3}, "Cortex-A720"}},
       {7, 4, 5, 6, 0, 1, 2, 3}},
      {"tensor-g3", 9, "cpu_capacity",
       {{Rank::prime, {8}, "Cortex-X3"}, {Rank::big, {4, 5, 6, 7}, "Cortex-A715"}, {Rank::little, {0, 1, 2, 3}, "Cortex-A510"}},
       {8, 4, 5, 6, 7}},
      {"dimensity-800", 8, "cpu_capacity",
       {{Rank::big, {4, 5, 6, 7}, "Cortex-A76"}, {Rank::little, {0, 1, 2, 3}, "Cortex-A55"}},
       {4, 5, 6, 7}},
      {"raspberry-pi-5", 4, "cpu_capacity", {{Rank::big, {0, 1, 2, 3}, "Cortex-A76"}}, {0, 1, 2, 3}},
      {"x86-server", 16, "cpuinfo_max_freq",
       {{Rank::big, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, "AMD EPYC 7262 8-Core Processor"}},
       {0, 1, 2, 3, 4, 5, 6, 7}},
      {"container", 4, "core type", {{Rank::big, {0, 1, 2, 3}, "Neoverse-N1"}}, {0, 1, 2, 3}},
  };
  return cases;
}

class Fixtures : public testing::TestWithParam<FixtureCase> {};

TEST_P(Fixtures, ClustersRanksNamesAndDefaultPlan) {
  const FixtureCase& c = GetParam();
  threads_test::LogCapture log;
  const CpuTopology topo = CpuTopology::detect(fixture(c.name));
  std::printf("%s: %s\n", c.name.c_str(), topo.describe().c_str());
  ASSERT_EQ(topo.cores.size(), c.n_cpus);
  EXPECT_EQ(topo.ranked_by, c.ranked_by);
  ASSERT_EQ(topo.clusters.size(), c.clusters.size());
  for (size_t i = 0; i < c.clusters.size(); ++i) {
    SCOPED_TRACE("cluster " + std::to_string(i));
    const Cluster& got = topo.clusters[i];
    EXPECT_EQ(got.rank, c.clusters[i].rank) << engine::rank_name(got.rank);
    EXPECT_EQ(got.cpus, c.clusters[i].cpus);
    EXPECT_EQ(got.core_name, c.clusters[i].core_name);
    for (int cpu : got.cpus) {
      ASSERT_NE(topo.core(cpu), nullptr);
      EXPECT_EQ(topo.core(cpu)->cluster, static_cast<int>(i));
      EXPECT_EQ(topo.core(cpu)->core_name, c.clusters[i].core_name);
      EXPECT_TRUE(topo.core(cpu)->allowed);  // fixtures are not the live system
    }
  }
  const engine::ThreadPlan plan = engine::ThreadPlan::make(topo, {});
  std::printf("  default plan: %s\n", plan.describe().c_str());
  EXPECT_EQ(plan.cpus, c.default_plan);
  EXPECT_EQ(plan.recommended_threads, c.default_plan.size());
  EXPECT_TRUE(plan.warnings.empty()) << plan.warnings.front();
  EXPECT_TRUE(log.warnings().empty());
}

INSTANTIATE_TEST_SUITE_P(Topology, Fixtures, testing::ValuesIn(fixture_cases()),
                         [](const testing::TestParamInfo<FixtureCase>& param) {
                           std::string name = param.param.name;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

TEST(Topology, ReadsEveryFieldOfAPhone) {
  const CpuTopology topo = CpuTopology::detect(fixture("snapdragon-8-gen-3"));
  const CoreInfo* x4 = topo.core(7);
  ASSERT_NE(x4, nullptr);
  EXPECT_EQ(x4->midr, engine::make_midr(0x41, 0, 0xD82, 1));
  EXPECT_EQ(x4->max_freq_khz, 3302400u);
  EXPECT_EQ(x4->capacity, 1024);
  EXPECT_EQ(x4->core_class, engine::CoreClass::flagship);
  EXPECT_EQ(x4->smt_primary, 7);
  EXPECT_EQ(x4->sysfs_group, 0);  // one DynamIQ cluster in the device tree: ignored for ranking
  EXPECT_EQ(topo.clusters[1].max_freq_khz, 3148800u);  // the A720 cluster spans two clocks
  EXPECT_EQ(topo.clusters[1].capacity, 781);
  EXPECT_TRUE(topo.notes.empty()) << topo.notes.front();
}

TEST(Topology, OldKernelWithCoreSiblingsAndHardwareLine) {
  const CpuTopology topo = CpuTopology::detect(fixture("dimensity-800"));
  EXPECT_EQ(topo.hardware, "MT6873");
  EXPECT_EQ(topo.core(0)->sysfs_group, 0);
  EXPECT_EQ(topo.core(5)->sysfs_group, 4);  // core_siblings_list is the cluster on 4.14
  // Same 2.0 GHz clock on both clusters: capacity and core type decide.
  EXPECT_EQ(topo.core(0)->max_freq_khz, topo.core(4)->max_freq_khz);
}

TEST(Topology, SmtSiblingsOnX86) {
  const CpuTopology topo = CpuTopology::detect(fixture("x86-server"));
  EXPECT_EQ(topo.physical_cores(), 8u);
  EXPECT_FALSE(topo.core(3)->is_smt_secondary());
  EXPECT_TRUE(topo.core(11)->is_smt_secondary());
  EXPECT_EQ(topo.core(11)->smt_primary, 3);
  EXPECT_EQ(topo.core(0)->midr, 0u);
}

TEST(Topology, ContainerFallsBackAndSaysSo) {
  const CpuTopology topo = CpuTopology::detect(fixture("container"));
  std::string notes;
  for (const std::string& n : topo.notes) notes += n + "\n";
  EXPECT_TRUE(threads_test::contains(notes, "no readable sys/devices/system/cpu/online")) << notes;
  EXPECT_TRUE(threads_test::contains(notes, "no cpufreq/cpuinfo_max_freq for any CPU")) << notes;
  EXPECT_TRUE(threads_test::contains(notes, "no cpu_capacity for any CPU")) << notes;
  EXPECT_TRUE(threads_test::contains(notes, "ranked by core type only")) << notes;
}

TEST(Topology, NothingAtAllIsOneCpu) {
  const CpuTopology topo = CpuTopology::detect(fixture("does-not-exist"));
  ASSERT_EQ(topo.cores.size(), 1u);
  EXPECT_EQ(topo.cores[0].cpu, 0);
  ASSERT_EQ(topo.clusters.size(), 1u);
  EXPECT_EQ(topo.clusters[0].rank, Rank::big);
  std::string notes;
  for (const std::string& n : topo.notes) notes += n + "\n";
  EXPECT_TRUE(threads_test::contains(notes, "no CPU information found")) << notes;
  EXPECT_TRUE(threads_test::contains(notes, "no readable /proc/cpuinfo")) << notes;
}

// A tree written by the test: cpuN directories only (no online/possible), an
// old-format cpuinfo with one MIDR block for all CPUs, core_siblings_list
// clusters and nothing else.
TEST(Topology, OldCpuinfoFormatAndSysfsClustersOnly) {
  const std::filesystem::path root = engine_test::temp_dir("topology-old");
  const auto write = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  };
  for (int cpu = 0; cpu < 4; ++cpu) {
    write("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/core_siblings_list", cpu < 2 ? "0-1\n" : "2-3\n");
  }
  write("proc/cpuinfo",
        "Processor\t: AArch64 Processor rev 4 (aarch64)\nprocessor\t: 0\nprocessor\t: 1\nprocessor\t: 2\n"
        "processor\t: 3\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\n"
        "CPU part\t: 0xd03\nCPU revision\t: 4\n\nHardware\t: Qualcomm Technologies, Inc MSM8939\n");
  const CpuTopology topo = CpuTopology::detect(root.string());
  std::printf("%s\n", topo.describe().c_str());
  std::filesystem::remove_all(root);
  ASSERT_EQ(topo.cores.size(), 4u);
  EXPECT_EQ(topo.hardware, "Qualcomm Technologies, Inc MSM8939");
  for (const CoreInfo& c : topo.cores) EXPECT_EQ(c.midr, 0u) << "a shared MIDR must not be given to every CPU";
  ASSERT_EQ(topo.clusters.size(), 2u);  // from core_siblings_list
  EXPECT_EQ(topo.clusters[0].cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(topo.clusters[1].cpus, (std::vector<int>{2, 3}));
  EXPECT_EQ(topo.clusters[0].rank, Rank::big);
  EXPECT_EQ(topo.clusters[1].rank, Rank::big);  // nothing tells them apart
  std::string notes;
  for (const std::string& n : topo.notes) notes += n + "\n";
  EXPECT_TRUE(threads_test::contains(notes, "one MIDR for all CPUs")) << notes;
  EXPECT_TRUE(threads_test::contains(notes, "using the cpuN directories")) << notes;
  EXPECT_TRUE(threads_test::contains(notes, "kernel's topology files")) << notes;
}

// Intel hybrid: one model name, the core types in sys/devices/cpu_core and cpu_atom.
TEST(Topology, IntelHybridCoreTypes) {
  const std::filesystem::path root = engine_test::temp_dir("topology-hybrid");
  const auto write = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << text;
  };
  write("sys/devices/system/cpu/online", "0-3\n");
  std::string cpuinfo;
  for (int cpu = 0; cpu < 4; ++cpu) {
    write("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/cpuinfo_max_freq",
          cpu < 2 ? "4700000\n" : "3500000\n");
    cpuinfo += "processor\t: " + std::to_string(cpu) + "\nmodel name\t: 12th Gen Intel(R) Core(TM) i7-1260P\n\n";
  }
  write("sys/devices/cpu_core/cpus", "0-1\n");
  write("sys/devices/cpu_atom/cpus", "2-3\n");
  write("proc/cpuinfo", cpuinfo);
  const CpuTopology topo = CpuTopology::detect(root.string());
  std::filesystem::remove_all(root);
  ASSERT_EQ(topo.clusters.size(), 2u);
  EXPECT_EQ(topo.clusters[0].core_name, "12th Gen Intel(R) Core(TM) i7-1260P (P-core)");
  EXPECT_EQ(topo.clusters[0].rank, Rank::big);
  EXPECT_EQ(topo.clusters[1].core_name, "12th Gen Intel(R) Core(TM) i7-1260P (E-core)");
  EXPECT_EQ(topo.clusters[1].rank, Rank::little);
  threads_test::LogCapture log;
  EXPECT_EQ(engine::ThreadPlan::make(topo, {}).cpus, (std::vector<int>{0, 1}));
}

CoreInfo core(int cpu, uint32_t midr, uint64_t khz, int capacity) {
  CoreInfo c;
  c.cpu = cpu;
  c.midr = midr;
  c.max_freq_khz = khz;
  c.capacity = capacity;
  return c;
}

TEST(Topology, CoreTypeRanksWhenClocksAreEqualAndCapacityIsMissing) {
  const uint32_t a55 = engine::make_midr(0x41, 0, 0xD05, 0), a76 = engine::make_midr(0x41, 0, 0xD0B, 0);
  const CpuTopology topo = CpuTopology::from_cores(
      {core(0, a55, 2000000, 0), core(1, a55, 2000000, 0), core(2, a76, 2000000, 0), core(3, a76, 2000000, 0)});
  EXPECT_EQ(topo.ranked_by, "cpuinfo_max_freq");
  ASSERT_EQ(topo.clusters.size(), 2u);
  EXPECT_EQ(topo.clusters[0].core_name, "Cortex-A76");
  EXPECT_EQ(topo.clusters[0].rank, Rank::big);
  EXPECT_EQ(topo.clusters[1].rank, Rank::little);
}

TEST(Topology, UnknownCoresRankByCapacityShare) {
  // No MIDR: little below half of the top capacity, else big (prime on top).
  const CpuTopology split = CpuTopology::from_cores({core(0, 0, 0, 300), core(1, 0, 0, 300), core(2, 0, 0, 1024)});
  ASSERT_EQ(split.clusters.size(), 2u);
  EXPECT_EQ(split.clusters[0].rank, Rank::big);
  EXPECT_EQ(split.clusters[1].rank, Rank::little);
  const CpuTopology mid = CpuTopology::from_cores({core(0, 0, 0, 700), core(1, 0, 0, 700), core(2, 0, 0, 1024)});
  ASSERT_EQ(mid.clusters.size(), 2u);
  EXPECT_EQ(mid.clusters[0].rank, Rank::prime);
  EXPECT_EQ(mid.clusters[1].rank, Rank::big);
}

TEST(Topology, UniformCapacityFallsBackToFrequency) {
  // Kernels without capacity-dmips-mhz in the device tree report 1024 everywhere.
  const CpuTopology topo = CpuTopology::from_cores({core(0, 0, 1800000, 1024), core(1, 0, 2800000, 1024)});
  EXPECT_EQ(topo.ranked_by, "cpuinfo_max_freq");
  ASSERT_EQ(topo.clusters.size(), 2u);
  EXPECT_EQ(topo.clusters[0].cpus, std::vector<int>{1});
}

TEST(Topology, RestrictToMarksAndNotes) {
  CpuTopology topo = CpuTopology::detect(fixture("tensor-g3"));
  topo.restrict_to({0, 1, 2, 3});
  EXPECT_TRUE(topo.core(0)->allowed);
  EXPECT_FALSE(topo.core(8)->allowed);
  ASSERT_FALSE(topo.notes.empty());
  EXPECT_TRUE(threads_test::contains(topo.notes.back(), "may not run on CPUs 4-8")) << topo.notes.back();
}

TEST(Topology, DetectsThisMachine) {
  const CpuTopology topo = CpuTopology::detect();
  std::printf("this machine: %s\n", topo.describe().c_str());
  ASSERT_FALSE(topo.cores.empty());
  ASSERT_FALSE(topo.clusters.empty());
  size_t clustered = 0;
  for (const Cluster& cl : topo.clusters) clustered += cl.cpus.size();
  EXPECT_EQ(clustered, topo.cores.size());
  EXPECT_NE(topo.clusters[0].rank, Rank::little);
  const engine::ThreadPlan plan = engine::ThreadPlan::make(topo, {});
  std::printf("default plan here: %s\n", plan.describe().c_str());
  EXPECT_GE(plan.size(), 1u);
}

}  // namespace
