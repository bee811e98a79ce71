#include "tools/common/fallback_advice.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

#include "kernels/ref/type_ops.h"
#include "kernels/registry.h"

namespace tools {
namespace {

using gguf::GgmlType;

// quantize's targets that phones run well, and the weight types each makes
// (Q4_K_M: mostly Q4_K, the sensitive matrices Q6_K).
struct Target {
  const char* name;
  GgmlType main;
  GgmlType other;
};
constexpr Target kQ4KM{"Q4_K_M", GgmlType::Q4_K, GgmlType::Q6_K};
constexpr Target kQ8_0{"Q8_0", GgmlType::Q8_0, GgmlType::Q8_0};
constexpr Target kQ4_0{"Q4_0", GgmlType::Q4_0, GgmlType::Q4_0};

bool is_float(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }

// Elements of the matrices a decoded token multiplies, by weight type: every
// 2-D tensor but the token embeddings (rows gathered, not multiplied) unless
// the output projection is tied to them.
std::map<GgmlType, uint64_t> matmul_weights(const gguf::File& file) {
  bool has_output = false;
  for (const gguf::TensorInfo& t : file.tensors()) has_output |= t.name == "output.weight";
  std::map<GgmlType, uint64_t> by_type;
  for (const gguf::TensorInfo& t : file.tensors()) {
    if (t.n_dims != 2 || (t.name == "token_embd.weight" && has_output)) continue;
    by_type[t.type] += t.n_elements;
  }
  return by_type;
}

// A kernel this CPU runs at its expected tier (or the tier the user capped).
const kernels::MatmulKernel* good_kernel(GgmlType type, const engine::KernelPlan& plan) {
  const kernels::MatmulSelection s = kernels::select_matmul(type, plan.cpu, plan.cap);
  return s.kernel != nullptr && !s.is_fallback() ? s.kernel : nullptr;
}

std::string output_path(const std::string& in, const char* target) {
  std::filesystem::path p(in);
  std::string stem = p.stem().string();
  return (p.parent_path() / (stem + "-" + target + ".gguf")).string();
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

double time_per_weight(const kernels::MatmulKernel& kernel) {
  using Clock = std::chrono::steady_clock;
  const kernels::ref::TypeOps* ops = kernels::ref::type_ops(kernel.rhs_type);
  if (ops == nullptr || ops->quantize_row == nullptr) return 0;
  // 64 rows of 2048: 128 Ki weights, in cache, a few milliseconds even for a
  // scalar kernel under emulation.
  constexpr size_t k = 2048;
  const size_t step = std::max<size_t>(kernel.n_step, 1);
  const size_t n = (64 + step - 1) / step * step;
  const size_t row_bytes = *gguf::row_bytes(kernel.rhs_type, k);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> row(k), x(k);
  for (float& v : x) v = uniform(rng);
  std::vector<uint8_t> raw(n * row_bytes);
  for (size_t r = 0; r < n; ++r) {
    for (float& v : row) v = uniform(rng);
    ops->quantize_row(row.data(), raw.data() + r * row_bytes, k);
  }
  std::vector<uint8_t> packed;
  const void* rhs = raw.data();
  if (kernel.pack_rhs != nullptr) {
    packed.resize(kernel.rhs_packed_size(n, k));
    kernel.pack_rhs(n, k, raw.data(), packed.data());
    rhs = packed.data();
  }
  std::vector<uint8_t> lhs(kernel.lhs_packed_size(1, k));
  kernel.pack_lhs(1, k, x.data(), k, lhs.data());
  std::vector<float> out(n);
  kernel.run(1, n, k, lhs.data(), rhs, out.data(), n);  // warm-up
  // Best of three batches, each of at least 10 ms.
  double best = 0;
  for (int batch = 0; batch < 3; ++batch) {
    size_t calls = 0;
    const auto t0 = Clock::now();
    double seconds = 0;
    do {
      kernel.run(1, n, k, lhs.data(), rhs, out.data(), n);
      ++calls;
      seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (seconds < 0.01);
    const double per_weight = seconds / static_cast<double>(calls * n * k);
    if (best == 0 || per_weight < best) best = per_weight;
  }
  return best;
}

std::vector<std::string> FallbackAdvice::lines() const {
  std::vector<std::string> out;
  if (empty()) return out;
  out.push_back("slow weights: " + slow_kernels + ", below this CPU's tier");
  if (options.empty()) {
    out.push_back("no weight type that quantize writes has a kernel at this CPU's tier in this build");
  }
  for (const QuantizeAdvice& o : options) {
    std::string line = "to run at full speed here: " + o.command;
    if (o.speedup() > 0) {
      line += "  (matrix products about " + fixed(o.speedup(), 1) + "x faster: " + fixed(o.matmul_ms_now, 1) +
              " -> " + fixed(o.matmul_ms_after, 1) + " ms a token on one thread, measured here)";
    }
    out.push_back(line);
  }
  if (!options.empty() && options.front().command.find("--allow-requantize") != std::string::npos) {
    out.push_back("requantizing adds error: quantize from the original F16/BF16 file if you have it");
  }
  return out;
}

FallbackAdvice advise_on_fallbacks(const gguf::File& file, const engine::KernelPlan& plan, const std::string& path,
                                   const KernelTimer& timer) {
  FallbackAdvice advice;
  bool quantized_source = false, float_slow = false;
  for (const kernels::MatmulSelection& s : plan.selections) {
    if (!is_float(s.weight_type)) quantized_source = true;
    if (!s.is_fallback()) continue;
    const std::string type(gguf::type_name(s.weight_type));
    advice.slow_types.push_back(type);
    std::string kernel = s.kernel != nullptr ? std::string(s.kernel->name) + " [" + std::string(kernels::tier_name(s.kernel->tier)) + "]"
                                             : std::string("no kernel");
    advice.slow_kernels += (advice.slow_kernels.empty() ? "" : ", ") + type + " on " + kernel;
    float_slow |= is_float(s.weight_type);
  }
  if (advice.empty()) return advice;

  const auto is_slow = [&](GgmlType type) {
    return std::find(advice.slow_types.begin(), advice.slow_types.end(), gguf::type_name(type)) != advice.slow_types.end();
  };
  const std::map<GgmlType, uint64_t> weights = matmul_weights(file);
  std::map<const kernels::MatmulKernel*, double> seconds;  // per weight, measured once
  const auto per_weight = [&](const kernels::MatmulKernel* k) {
    if (k == nullptr) return 0.0;
    auto [it, fresh] = seconds.try_emplace(k, 0.0);
    if (fresh) it->second = timer(*k);
    return it->second;
  };
  // A float file goes to Q8_0 first (close to lossless); a quantized one to
  // Q4_K_M first (smaller and faster), Q8_0 to keep what it has.
  const std::vector<Target> order = float_slow ? std::vector<Target>{kQ8_0, kQ4KM} : std::vector<Target>{kQ4KM, kQ8_0, kQ4_0};
  for (const Target& t : order) {
    if (advice.options.size() == 2) break;
    const kernels::MatmulKernel* main = good_kernel(t.main, plan);
    if (main == nullptr || good_kernel(t.other, plan) == nullptr) continue;
    if (is_slow(t.main)) continue;
    QuantizeAdvice o;
    o.target = t.name;
    o.command = std::string("quantize ") + (quantized_source ? "--allow-requantize " : "") + path + " " +
                output_path(path, t.name) + " " + t.name;
    bool measured = true;
    for (const auto& [type, count] : weights) {
      const kernels::MatmulKernel* now = plan.kernel_for(type);
      const bool slow = is_slow(type);
      const double s_now = per_weight(now), s_after = per_weight(slow ? main : now);
      measured &= s_now > 0 && s_after > 0;
      o.matmul_ms_now += 1e3 * s_now * static_cast<double>(count);
      o.matmul_ms_after += 1e3 * s_after * static_cast<double>(count);
    }
    if (!measured) o.matmul_ms_now = o.matmul_ms_after = 0;
    advice.options.push_back(std::move(o));
  }
  return advice;
}

}  // namespace tools
