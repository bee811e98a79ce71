// doctor: checks this device for what would make inference slow — kernel tier
// per weight type, core topology and the recommended threads, governors and
// clock caps, temperatures, battery saver, memory — and says what to do.
// Exit code 1 when something would make inference slow (a WARN line).
//
//   doctor                  # the device and this binary
//   doctor -m model.gguf    # also the model's kernels and its resident memory
//   doctor --root DIR       # a captured sysfs/proc tree (tests)
#include <cstdio>
#include <memory>
#include <string>

#include "engine/support/log.h"
#include "engine/support/memory.h"
#include "engine/model/model.h"
#include "engine/threads/topology.h"
#include "engine/support/version.h"
#include "kernels/registry.h"
#include "tools/bench/doctor_checks.h"
#include "tools/bench/environment.h"
#include "tools/bench/model_info.h"
#include "tools/common/args.h"
#include "tools/common/log_level.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: doctor [[-m] MODEL.gguf] [options]\n"
               "  -m, --model FILE     also check this model: its kernels and resident memory after load\n"
               "                       (the -m is optional)\n"
               "  -t, --threads N      check this thread count (default 0: the recommended one)\n"
               "      --cpus SPEC      check this placement: default | all | none | a CPU list such as 4-7\n"
               "      --root DIR       read sysfs/proc under DIR (a captured tree) instead of /\n"
               "      --report-only    exit 0 even when there are warnings\n"
               "exit code: 0 no warnings, 1 something would make inference slow, 2 usage error\n");
}

int run(int argc, char** argv) {
  std::string model_path, root = "/", cpus;
  int64_t threads = 0;
  bool report_only = false;
  tools::Args a(argc, argv);
  while (!a.done()) {
    if (a.model(model_path) || a.option({"--root"}, root) || a.option({"--cpus"}, cpus) ||
        a.option({"-t", "--threads"}, threads)) {
    } else if (a.flag({"--report-only"})) {
      report_only = true;
    } else if (a.flag({"-h", "--help"})) {
      usage(stdout);
      return 0;
    } else {
      a.unknown();
    }
  }
  if (threads < 0) throw tools::ArgError("-t must be >= 0");

  tools::set_tool_log_level(engine::LogLevel::error);
  const bench::FsRoot fs(root);
  const engine::CpuTopology topology = engine::CpuTopology::detect(root);
  bench::DoctorInput in;
  in.fs = &fs;
  in.topology = &topology;
  in.cpu = kernels::host_cpu_features();  // the kernels are this binary's on this CPU, whatever the root
  in.cap = kernels::max_tier_from_env();
  in.build = bench::collect_build();
  in.threads.n_threads = static_cast<size_t>(threads);
  if (!cpus.empty()) in.threads.set_cpus(cpus);
  // Steal time needs the CPUs busy to show: a third of a second of spinning
  // on each, on the live system only.
  if (fs.is_live()) in.steal_share = bench::steal_sample(fs, topology, 0.3);

  bench::ModelInfo model;
  std::unique_ptr<engine::Model> loaded;
  if (!model_path.empty()) {
    const engine::MemoryUsage before = engine::memory_usage();
    loaded = engine::Model::load(model_path);
    const engine::MemoryUsage mem = engine::memory_usage();
    model = bench::describe_model(*loaded, model_path);
    model.rss_before_load_bytes = before.known ? before.rss_bytes : 0;
    model.rss_after_load_bytes = mem.known ? mem.rss_bytes : 0;
    in.model = &model;
  }
  std::printf("doctor: engine %s (%s), compiled tiers: %s%s\n", engine::version(), engine::compiler(),
              engine::compiled_tiers().c_str(), fs.is_live() ? "" : (", tree " + root).c_str());
  const std::vector<bench::Check> checks = bench::doctor_checks(in);
  std::fputs(bench::format_checks(checks).c_str(), stdout);
  return bench::warning_count(checks) > 0 && !report_only ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tools::tool_main("doctor", usage, argc, [&] { return run(argc, argv); });
}
