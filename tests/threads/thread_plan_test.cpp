// Thread plans on the fixtures: the policies and the guard-rail WARNINGs, as
// they reach the log sink.
#include <gtest/gtest.h>

#include "engine/support/error.h"
#include "engine/threads/thread_plan.h"
#include "engine/threads/topology.h"
#include "log_capture.h"

namespace {

using engine::Affinity;
using engine::CpuTopology;
using engine::ThreadOptions;
using engine::ThreadPlan;
using threads_test::contains;
using threads_test::LogCapture;

CpuTopology load(const std::string& name) {
  return CpuTopology::detect(std::string(ENGINE_TOPOLOGY_FIXTURES) + "/" + name);
}

ThreadOptions threads(size_t n, const std::string& cpus = "default") {
  ThreadOptions o;
  o.n_threads = n;
  o.set_cpus(cpus);
  return o;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

TEST(ThreadPlan, DescribesPlacement) {
  LogCapture log;
  EXPECT_TRUE(contains(ThreadPlan::make(load("dimensity-9300"), {}).describe(), "t0-t3 cpu7,4-6 prime Cortex-X4"));
  const ThreadPlan plan = ThreadPlan::make(load("snapdragon-8-gen-3"), {});
  EXPECT_EQ(plan.describe(), "6 threads (default): t0 cpu7 prime Cortex-X4; t1-t5 cpu2-6 big Cortex-A720");
  const ThreadPlan x86 = ThreadPlan::make(load("x86-server"), threads(10));
  EXPECT_TRUE(contains(x86.describe(), "t8-t9 cpu8-9 big AMD EPYC 7262 8-Core Processor (SMT sibling")) << x86.describe();
}

TEST(ThreadPlan, MoreThreadsThanPerformanceCoresWarnsAboutLittleCores) {
  LogCapture log;
  const ThreadPlan plan = ThreadPlan::make(load("snapdragon-8-gen-3"), threads(8));
  EXPECT_EQ(plan.cpus, (std::vector<int>{7, 2, 3, 4, 5, 6, 0, 1}));
  ASSERT_EQ(plan.warnings.size(), 1u) << joined(plan.warnings);
  const std::string& w = plan.warnings[0];
  EXPECT_TRUE(contains(w, "--threads 8 puts 2 of 8 threads on little cores (cpu0-1, Cortex-A520)")) << w;
  EXPECT_TRUE(contains(w, "6 performance cores (prime cpu7, big cpu2-6)")) << w;
  EXPECT_TRUE(contains(w, "Expected effect:")) << w;
  EXPECT_TRUE(contains(w, "Recommended: --threads 6")) << w;
  EXPECT_EQ(log.warnings(), plan.warnings);  // logged once, as WARNINGs
}

TEST(ThreadPlan, MoreThreadsThanCpusLeavesTheRestUnpinnedAndWarns) {
  LogCapture log;
  const ThreadPlan plan = ThreadPlan::make(load("snapdragon-8-gen-3"), threads(10));
  ASSERT_EQ(plan.size(), 10u);
  EXPECT_EQ(plan.cpus[8], -1);
  EXPECT_EQ(plan.cpus[9], -1);
  ASSERT_EQ(plan.warnings.size(), 2u) << joined(plan.warnings);
  EXPECT_TRUE(contains(plan.warnings[0], "little cores")) << plan.warnings[0];
  EXPECT_TRUE(contains(plan.warnings[1], "2 threads are not pinned")) << plan.warnings[1];
  EXPECT_TRUE(contains(plan.warnings[1], "Recommended: --threads 6")) << plan.warnings[1];
  EXPECT_EQ(log.warnings().size(), 2u);
}

// -t 10000 once started 10,000 threads and -t 100000 ended in EAGAIN: past 4
// per CPU the plan is refused, naming the CPUs and the most it allows.
TEST(ThreadPlan, FarMoreThreadsThanCpusIsRefusedNamingTheCpus) {
  const CpuTopology topo = load("snapdragon-8-gen-3");  // 8 CPUs
  EXPECT_EQ(ThreadPlan::make(topo, threads(32)).size(), 32u);
  try {
    ThreadPlan::make(topo, threads(10000));
    FAIL() << "10000 threads on 8 CPUs were accepted";
  } catch (const engine::Error& e) {
    EXPECT_TRUE(contains(e.what(), "--threads 10000: this process may run on 8 CPUs (cpu 0-7), so at most 32 threads"))
        << e.what();
  }
  EXPECT_THROW(ThreadPlan::make(topo, threads(33)), engine::Error);
}

TEST(ThreadPlan, FewerThreadsTakeTheFastestCores) {
  LogCapture log;
  EXPECT_EQ(ThreadPlan::make(load("dimensity-9300"), threads(2)).cpus, (std::vector<int>{7, 4}));
  EXPECT_EQ(ThreadPlan::make(load("snapdragon-8-elite"), threads(3)).cpus, (std::vector<int>{6, 7, 0}));
  EXPECT_EQ(ThreadPlan::make(load("tensor-g3"), threads(1)).cpus, (std::vector<int>{8}));
  EXPECT_TRUE(log.warnings().empty());
}

TEST(ThreadPlan, AllUsesEveryCpuAndWarnsAboutLittleCores) {
  LogCapture log;
  const ThreadPlan plan = ThreadPlan::make(load("tensor-g3"), threads(0, "all"));
  EXPECT_EQ(plan.cpus, (std::vector<int>{8, 4, 5, 6, 7, 0, 1, 2, 3}));
  ASSERT_EQ(plan.warnings.size(), 1u) << joined(plan.warnings);
  EXPECT_TRUE(contains(plan.warnings[0], "--cpus all puts 4 of 9 threads on little cores (cpu0-3, Cortex-A510)"))
      << plan.warnings[0];
  EXPECT_TRUE(contains(plan.warnings[0], "Recommended: --threads 5 with --cpus default")) << plan.warnings[0];
  // On a symmetric layout "all" is the default and says nothing.
  EXPECT_TRUE(ThreadPlan::make(load("raspberry-pi-5"), threads(0, "all")).warnings.empty());
  EXPECT_EQ(log.warnings().size(), 1u);
}

TEST(ThreadPlan, ExplicitListIsTakenAsGiven) {
  LogCapture log;
  const ThreadPlan plan = ThreadPlan::make(load("snapdragon-8-gen-3"), threads(0, "7,2-3"));
  EXPECT_EQ(plan.affinity, Affinity::list);
  EXPECT_EQ(plan.cpus, (std::vector<int>{7, 2, 3}));
  EXPECT_TRUE(plan.warnings.empty());

  const ThreadPlan little = ThreadPlan::make(load("snapdragon-8-gen-3"), threads(0, "0-7"));
  ASSERT_EQ(little.warnings.size(), 1u);
  EXPECT_TRUE(contains(little.warnings[0], "--cpus 0-7 puts 2 of 8 threads on little cores")) << little.warnings[0];

  const ThreadPlan more = ThreadPlan::make(load("snapdragon-8-gen-3"), threads(6, "4-7"));
  EXPECT_EQ(more.cpus, (std::vector<int>{4, 5, 6, 7, -1, -1}));
  ASSERT_EQ(more.warnings.size(), 1u);
  EXPECT_TRUE(contains(more.warnings[0], "--threads 6 with --cpus 4-7 asks for more threads than the chosen CPUs"))
      << more.warnings[0];

  EXPECT_EQ(ThreadPlan::make(load("snapdragon-8-gen-3"), threads(2, "4-7")).cpus, (std::vector<int>{4, 5}));
}

TEST(ThreadPlan, ExplicitListWithAnOfflineCpuIsAnError) {
  try {
    ThreadPlan::make(load("snapdragon-8-gen-3"), threads(0, "6-9"));
    FAIL() << "expected engine::Error";
  } catch (const engine::Error& e) {
    EXPECT_TRUE(contains(e.what(), "CPU 8 is not online (online: 0-7)")) << e.what();
  }
}

TEST(ThreadPlan, NoneKeepsTheDefaultCountUnpinned) {
  LogCapture log;
  const ThreadPlan plan = ThreadPlan::make(load("snapdragon-8-gen-3"), threads(0, "none"));
  EXPECT_EQ(plan.cpus, std::vector<int>(6, -1));
  EXPECT_TRUE(plan.warnings.empty());
  const ThreadPlan more = ThreadPlan::make(load("snapdragon-8-gen-3"), threads(8, "none"));
  ASSERT_EQ(more.warnings.size(), 1u);
  EXPECT_TRUE(contains(more.warnings[0], "more threads than the 6 performance cores")) << more.warnings[0];
}

TEST(ThreadPlan, SmtSiblingsAreUsedLastAndWarned) {
  LogCapture log;
  const ThreadPlan plan = ThreadPlan::make(load("x86-server"), threads(16));
  EXPECT_EQ(plan.cpus, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  ASSERT_EQ(plan.warnings.size(), 1u) << joined(plan.warnings);
  EXPECT_TRUE(contains(plan.warnings[0], "8 threads on SMT siblings")) << plan.warnings[0];
  EXPECT_TRUE(contains(plan.warnings[0], "Recommended: --threads 8")) << plan.warnings[0];
}

TEST(ThreadPlan, CpusetRestrictions) {
  LogCapture log;
  // Android background cpuset: little cores only.
  CpuTopology background = load("snapdragon-8-gen-3");
  background.restrict_to({0, 1});
  const ThreadPlan plan = ThreadPlan::make(background, {});
  EXPECT_EQ(plan.cpus, (std::vector<int>{0, 1}));
  ASSERT_EQ(plan.warnings.size(), 1u) << joined(plan.warnings);
  EXPECT_TRUE(contains(plan.warnings[0], "may only run on little cores (cpu0-1)")) << plan.warnings[0];
  EXPECT_TRUE(contains(plan.warnings[0], "(cpu2-7) are outside its CPU set")) << plan.warnings[0];

  // The prime core taken away (taskset): the default plan skips it quietly.
  CpuTopology no_prime = load("snapdragon-8-gen-3");
  no_prime.restrict_to({0, 1, 2, 3, 4, 5, 6});
  const ThreadPlan rest = ThreadPlan::make(no_prime, {});
  EXPECT_EQ(rest.cpus, (std::vector<int>{2, 3, 4, 5, 6}));
  EXPECT_TRUE(rest.warnings.empty());

  // An explicit list naming a forbidden CPU warns that pinning will fail.
  const ThreadPlan forced = ThreadPlan::make(no_prime, threads(0, "7"));
  ASSERT_EQ(forced.warnings.size(), 1u);
  EXPECT_TRUE(contains(forced.warnings[0], "CPUs 7 are outside this process's CPU set")) << forced.warnings[0];
}

TEST(ThreadPlan, ParsesCpusFlag) {
  ThreadOptions o;
  o.set_cpus("all");
  EXPECT_EQ(o.affinity, Affinity::all);
  o.set_cpus("none");
  EXPECT_EQ(o.affinity, Affinity::none);
  o.set_cpus("4-7");
  EXPECT_EQ(o.affinity, Affinity::list);
  EXPECT_EQ(o.cpus, "4-7");
  o.set_cpus("default");
  EXPECT_EQ(o.affinity, Affinity::automatic);
  EXPECT_TRUE(o.cpus.empty());
  EXPECT_THROW(o.set_cpus("big"), engine::Error);
  EXPECT_THROW(o.set_cpus(" , "), engine::Error);
}

TEST(ThreadPlan, CarriesNice) {
  ThreadOptions o;
  o.nice = 5;
  const ThreadPlan plan = ThreadPlan::make(load("raspberry-pi-5"), o);
  EXPECT_EQ(plan.nice, 5);
  EXPECT_TRUE(contains(plan.describe(), "nice 5"));
}

TEST(ThreadPlan, Unpinned) {
  const ThreadPlan plan = ThreadPlan::unpinned(3);
  EXPECT_EQ(plan.cpus, (std::vector<int>{-1, -1, -1}));
  EXPECT_EQ(plan.describe(), "3 threads (none): t0-t2 not pinned");
  EXPECT_EQ(ThreadPlan::unpinned(0).size(), 1u);
}

// The plan knows which threads sit on in-order cores (by their MIDR), where
// the kernels with an in-order schedule use it (MatmulKernel::run_in_order).
TEST(ThreadPlan, KnowsTheThreadsOnInOrderCores) {
  LogCapture log;
  const ThreadPlan eight = ThreadPlan::make(load("snapdragon-8-gen-3"), threads(8));
  ASSERT_EQ(eight.cpus, (std::vector<int>{7, 2, 3, 4, 5, 6, 0, 1}));
  EXPECT_EQ(eight.in_order, (std::vector<bool>{false, false, false, false, false, false, true, true}));  // A520
  EXPECT_FALSE(eight.only_in_order_cpus);
  const ThreadPlan all = ThreadPlan::make(load("tensor-g3"), threads(0, "all"));
  for (size_t t = 0; t < all.size(); ++t) {
    EXPECT_EQ(all.in_order[t], all.cpus[t] <= 3) << "cpu " << all.cpus[t];  // Cortex-A510
  }
  const ThreadPlan pi = ThreadPlan::make(load("raspberry-pi-5"), {});
  EXPECT_EQ(pi.in_order, std::vector<bool>(4, false));  // Cortex-A76
  const ThreadPlan x86 = ThreadPlan::make(load("x86-server"), {});
  EXPECT_EQ(x86.in_order, std::vector<bool>(x86.size(), false));  // no MIDR: nothing is assumed
  // A process confined to the little cores (Android's background cpuset):
  // unpinned threads are on in-order cores too.
  CpuTopology background = load("dimensity-800");
  background.restrict_to({0, 1, 2, 3});
  const ThreadPlan confined = ThreadPlan::make(background, threads(2, "none"));
  EXPECT_TRUE(confined.only_in_order_cpus);
  EXPECT_EQ(confined.in_order, (std::vector<bool>{false, false}));  // not pinned
}

}  // namespace
