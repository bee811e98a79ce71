// The bench report: everything measured and everything that explains the
// measurement (device, build, kernels, threads, clocks, heat, the model file),
// so two reports from two phones can be compared cause by cause. One data
// model for every output format (report_json, format_text) and for
// `bench --compare`, which reads the JSON back into it.
//
// Unknown values: strings "unknown", numbers NaN (JSON null), counts 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tools/bench/stats.h"

namespace bench {

inline constexpr const char* kReportSchema = "engine-bench-report/1";
inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
inline bool known(double v) { return !std::isnan(v); }

struct BuildInfo {
  std::string version;         // engine::version()
  std::string compiler;        // engine::compiler()
  std::string compiled_tiers;  // "ref hwy"
  std::string build_type;      // "optimized" or "unoptimized"
};

// One cluster of CPUs (engine::CpuTopology), with its cpufreq policy.
struct ClusterInfo {
  std::string rank;            // "prime", "big", "little"
  std::string core_name;       // "Cortex-A720"; "unknown"
  std::string core_class;      // "flagship", "performance", "efficiency", "unknown"
  std::vector<int> cpus;
  uint64_t max_freq_khz = 0;   // cpuinfo_max_freq
  int capacity = 0;
  std::string governor = "unknown";  // scaling_governor of its first CPU ("mixed" when they differ)
  std::string driver = "unknown";    // scaling_driver
};

struct DeviceInfo {
  std::string model = "unknown";         // "Pixel 8 Pro", "Raspberry Pi 5 Model B Rev 1.0"
  std::string model_source = "none";     // getprop, build.prop, device-tree, dmi, none
  std::string manufacturer = "unknown";
  std::string soc = "unknown";           // ro.soc.model, /sys/devices/soc0/machine, cpuinfo Hardware
  std::string kernel = "unknown";        // /proc/sys/kernel/osrelease
  std::string arch = "unknown";          // aarch64, x86_64
  std::string cpu_features;              // kernels::CpuFeatures::describe()
  std::vector<ClusterInfo> clusters;     // fastest first
  std::string topology_ranked_by;        // how big was told from little
  std::vector<std::string> topology_notes;
  uint64_t mem_total_bytes = 0;
  uint64_t llc_bytes = 0;                // largest cache in sysfs; 0 unknown
  std::string transparent_huge_pages = "unknown";  // always, madvise, never
};

// Clocks, heat, power and memory at one moment (before and after a run).
struct CoreFreq {
  int cpu = -1;
  uint64_t cur_khz = 0;         // scaling_cur_freq
  uint64_t policy_max_khz = 0;  // scaling_max_freq: lowered by thermal caps and power-save
  uint64_t hw_max_khz = 0;      // cpuinfo_max_freq
};

struct ThermalZone {
  std::string zone;  // "thermal_zone3"
  std::string type;  // "cpu-1-0-usr", "battery", "x86_pkg_temp"
  double celsius = kUnknown;
};

struct PowerState {
  std::string battery_status = "unknown";   // Charging, Discharging, Full, Not charging
  double battery_percent = kUnknown;
  std::string charger = "unknown";          // online, offline
  std::string power_save = "unknown";       // on, off (Android battery saver)
  std::string platform_profile = "unknown"; // ACPI platform profile (laptops)
};

struct Snapshot {
  std::vector<CoreFreq> cores;
  std::vector<ThermalZone> thermal;
  PowerState power;
  uint64_t mem_available_bytes = 0;
  double load_avg_1m = kUnknown;  // /proc/loadavg: runnable (and, on Linux, blocked) tasks
};

struct KernelChoice {
  std::string weight_type;    // "Q4_0"
  std::string kernel;         // "matmul_f32_q8_0_q4_0_4x16_hwy"; "none"
  std::string tier;           // "hwy"
  std::string expected_tier;  // what this CPU should get from a complete build
  bool fallback = false;      // below the expectation, not because of ENGINE_MAX_TIER
  std::vector<std::string> rejected;  // "<kernel>: <reason>", better entries first
};

struct TensorTypeBytes {
  std::string type;
  uint64_t tensors = 0;
  uint64_t bytes = 0;
};

struct ModelInfo {
  std::string path;
  std::string name;           // general.name
  std::string arch;           // "llama"
  uint64_t file_bytes = 0;
  std::string sha256 = "unknown";
  std::string sha256_source = "skipped";  // computed, cache, skipped
  std::vector<TensorTypeBytes> tensor_types;  // every tensor of the file, by type
  uint32_t n_layer = 0, n_embd = 0, n_ff = 0, n_head = 0, n_head_kv = 0, n_vocab = 0;
  uint64_t weight_bytes_per_token = 0;  // every matrix read once per decoded token
  uint64_t layer_params = 0;            // elements of the per-layer matrices
  uint64_t output_params = 0;           // elements of the output matrix
  std::vector<KernelChoice> kernels;
  // Where a type is on a fallback: the quantize command to a type that runs at
  // full speed here, with the measured speed-up (tools/common/fallback_advice.h).
  std::vector<std::string> fallback_advice;
  std::string ops_isa = "unknown";  // instruction set of the attention row operations (engine/ops/ops_isa.h)
  std::string kv_type = "f16";
  std::string kv_layers;  // the cache by kind of layer: "22 attention layers x 44.0 MiB"; empty: unknown
  // The session's cache (engine::KvSize): its bytes for kv_n_ctx positions
  // beside a full cache's, and the sliding windows that make the difference.
  uint32_t kv_n_ctx = 0;                // 0: unknown (an older report)
  uint64_t kv_bytes = 0;
  uint64_t kv_full_bytes = 0;           // every layer keeping all kv_n_ctx positions
  uint32_t kv_cached_layers = 0;        // layers with a cache
  uint32_t kv_windowed_layers = 0;      // of them, with a sliding window
  std::vector<uint32_t> kv_windows;     // their distinct windows, ascending
  // A recurrent model's copies of its states after a timed test, the most of
  // any (engine/runtime/recurrent_checkpoints.h); 0 without recurrent layers.
  uint64_t checkpoint_bytes = 0;
  uint32_t n_checkpoints = 0;
  double load_ms = kUnknown;
  double load_repack_ms = kUnknown;  // of the load, repacking weights
  double plain_read_ms = kUnknown;   // a plain sequential read() of the file, after the load
  std::string repack_cache;          // "off", "hit", "written", "write failed"; "" unknown
  uint64_t rss_before_load_bytes = 0;   // the process alone (binary, libraries, threads); 0 unknown
  uint64_t rss_after_load_bytes = 0;    // 0 unknown
  uint64_t peak_rss_bytes = 0;          // at the end of the run
  uint64_t repacked_bytes = 0;          // matrices in a kernel's layout (engine/model/stream_arena.h)
  uint64_t repacked_huge_page_bytes = 0;  // of them, in 2 MiB pages after load
};

// What a load adds besides the weights, whatever the file: the tokenizer's
// tables, the tensor index, allocator arenas. The 1.1 MiB demo model's load
// added 1.6 MiB (doctor, 2026-12-04); a 53 MiB Q4_0 file's, 0.93x the file.
inline constexpr uint64_t kLoadOverheadBytes = uint64_t{1} << 20;

// Resident memory the weights take after load, over the file size: the growth
// from before the load to after it, less kLoadOverheadBytes (the process's own
// few MiB and the load's fixed part are not the weights: on the demo model they
// read as a 5x "expansion"); the whole resident size where the size before is
// unknown; kUnknown without data.
double load_rss_ratio(const ModelInfo& m);


struct WorkerInfo {
  int thread = 0;       // 0 = the calling thread
  int cpu_asked = -1;   // -1 not pinned
  std::string pin = "not pinned";  // pinned, failed, not pinned
  int pin_error = 0;    // errno when failed
  int last_cpu = -1;    // where it was last seen running
};

struct ThreadsInfo {
  int n_threads = 0;
  std::string affinity = "default";  // default, all, list, none
  std::string plan;                  // engine::ThreadPlan::describe()
  int recommended = 0;               // what the default policy picks on this device
  std::vector<WorkerInfo> workers;
  std::vector<std::string> warnings; // the plan's guard-rail WARNINGs
};

struct ProbeResult {
  uint64_t buffer_bytes = 0;  // 0: not run
  uint64_t llc_bytes = 0;
  int threads = 0;
  std::string loads = "unknown";  // load width: avx512, avx2, baseline
  uint64_t huge_page_bytes = 0;   // of the buffer, in 2 MiB pages (the weights' kind of memory)
  Stats gb_per_s;             // per pass before the tests, GB = 1e9 bytes
  Stats gb_per_s_after;       // the same passes after the tests (empty: not run)
  // One pass right before each counted repetition of the roofline's decode
  // test and one after the last (empty: not run), in the order they ran.
  Stats gb_per_s_between;
  // The decode kernel of the model's largest weight type, streaming the same
  // buffer as packed weights right after each plain pass before the tests
  // (kernel "none": not run): how much of the probe the matrix stream alone
  // reaches, apart from the rest of a token (norms, attention, pool waits).
  std::string kernel = "none";
  Stats kernel_gb_per_s;
  double kernel_share = kUnknown;  // median over the passes of kernel / the plain pass before it
};

// The bandwidth the roofline compares decode with: the median of every pass,
// before and after the tests, so that bandwidth which moved during the run
// (other load on the memory system, a throttled phone) counts from both ends.
double probe_reference_gb_s(const ProbeResult& p);
// How far the medians before and after differ, as a fraction of the larger
// (0 when either is missing).
double probe_drift(const ProbeResult& p);
// A drift above this is noted in the report: a shared machine's bandwidth
// moved by 20-30% within minutes here (docs/roofline.md).
inline constexpr double kProbeDriftNote = 0.10;

// One row of results. Kinds: prefill (n_prompt tokens in one eval), decode
// (n_gen single-token evals), ttft (the prefill's wall time to the first
// token's logits, in ms), mixed (prompt and generation timed together, as
// llama-bench's -pg: tokens/s over both).
struct TestResult {
  std::string name;  // "pp512", "tg128", "ttft512", "pp512+tg128"
  std::string kind;  // prefill, decode, ttft, mixed
  uint32_t n_prompt = 0;
  uint32_t n_gen = 0;
  uint32_t n_depth = 0;  // tokens in the KV cache before the timed part
  Stats tokens_per_s;
  Stats ms;              // wall time per repetition
};

// Decode against memory bandwidth, prefill against arithmetic peak.
struct Roofline {
  double probe_gb_s = kUnknown;          // median of the probe's passes
  double decode_tokens_per_s = kUnknown; // median of the first decode row
  uint64_t weight_bytes_per_token = 0;
  uint64_t kv_bytes_per_token = 0;       // K and V read per token at that row's depth
  double decode_gb_s = kUnknown;         // decode t/s x weight bytes
  double decode_efficiency = kUnknown;   // decode_gb_s / probe_gb_s, or the median of the paired ratios
  // Per repetition of the decode row: its GB/s over the mean of the probe
  // passes right before and after it (empty without those passes).
  Stats decode_efficiency_paired;
  double prefill_tokens_per_s = kUnknown;
  double prefill_gop_per_token = kUnknown;
  double prefill_gop_s = kUnknown;
  double peak_gop_s = kUnknown;
  std::string peak_method;               // how the peak was estimated
  double prefill_fraction = kUnknown;    // prefill_gop_s / peak_gop_s
};

struct Round {
  int index = 0;
  double elapsed_s = 0;              // at the end of the round, since the first one started
  double tokens_per_s = kUnknown;
  double max_temp_c = kUnknown;      // hottest thermal zone after the round
  double mean_freq_mhz = kUnknown;   // mean scaling_cur_freq of the worker CPUs
  double mean_policy_max_mhz = kUnknown;
};

struct Sustained {
  int rounds = 0;                  // 0: not run
  double interval_s = 0;
  uint32_t n_gen = 0;
  std::vector<Round> per_round;
  std::string verdict = "not run"; // not run, stable, throttling, slowdown
  std::string evidence;
};

// bench --profile: milliseconds per token of one operation class, from an
// extra prefill and decode pass with the session's profile attached.
struct ProfileRow {
  std::string op;  // "matmul Q4_0", "attention", "elementwise", ...
  double prefill_ms_per_token = kUnknown;
  double decode_ms_per_token = kUnknown;
};

// One model at one thread setting.
struct Run {
  ModelInfo model;
  ThreadsInfo threads;
  ProbeResult probe;
  std::vector<TestResult> tests;
  Roofline roofline;
  Sustained sustained;
  std::vector<ProfileRow> profile;  // empty without --profile
  Snapshot before;
  Snapshot after;
  // CPU time the process got during the tests (the probe passes between
  // decode repetitions left out) / (wall time x threads): below
  // 1 when other processes took the cores (the workers spin, so an
  // uncontested run is close to 1).
  double cpu_share = kUnknown;
  // Steal time over the same window, on the CPUs the workers ran on
  // (/proc/stat): the share a hypervisor gave to other guests. It explains a
  // CPU share below 1 on a virtual machine with nothing else running.
  double steal_share = kUnknown;
};

struct Settings {
  int repetitions = 5;
  int warmup = 1;
  int n_batch = 512;
  uint32_t seed = 42;
  std::string command_line;
};

struct Report {
  std::string schema = kReportSchema;
  std::string created;  // ISO 8601 UTC
  BuildInfo build;
  DeviceInfo device;
  Settings settings;
  std::vector<Run> runs;
};

// Derived figures shared by the formats and the diagnosis.
const TestResult* first_of_kind(const Run& run, const std::string& kind);
// The cluster holding `cpu`, nullptr when unknown.
const ClusterInfo* cluster_of(const DeviceInfo& device, int cpu);
// CPUs the workers ran on: last seen, else asked; unknown ones skipped.
std::vector<int> worker_cpus(const ThreadsInfo& threads);
// Prime and big cores (the ones the default policy uses).
int big_core_count(const DeviceInfo& device);
// Hottest zone, NaN when none is readable.
double max_temp(const Snapshot& s);
// Mean over `cpus` of a CoreFreq field in MHz; NaN when unknown.
double mean_cur_mhz(const Snapshot& s, const std::vector<int>& cpus);
double mean_policy_max_mhz(const Snapshot& s, const std::vector<int>& cpus);
// Governors that keep clocks low for inference: powersave (except under the
// hardware-managed intel_pstate / amd-pstate drivers, where "powersave" is
// the normal mode), conservative, userspace.
bool is_slow_governor(const std::string& governor, const std::string& driver);

}  // namespace bench
