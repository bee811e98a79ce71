#include "tools/bench/roofline.h"

#include <cstdio>

#include "tools/common/plural.h"

namespace bench {
namespace {

int arm_pipes(const std::string& core_class) {
  if (core_class == "flagship") return 4;
  if (core_class == "efficiency") return 1;
  return 2;
}

}  // namespace

bool is_int8(gguf::GgmlType lhs) {
  return lhs != gguf::GgmlType::F32 && lhs != gguf::GgmlType::F16 && lhs != gguf::GgmlType::BF16;
}

double ops_per_cycle(const std::string& tier, gguf::GgmlType lhs, const kernels::CpuFeatures& cpu,
                     const std::string& core_class) {
  using kernels::Feature;
  const bool int8 = is_int8(lhs);
  const bool bf16 = lhs == gguf::GgmlType::BF16;
  if (tier == "ref") return 2;
  if (tier == "hwy") {
    constexpr int kPorts = 2;
    if (int8) {
      if (cpu.has(Feature::avx512vnni)) return kPorts * 64 * 2;
      if (cpu.has(Feature::avxvnni)) return kPorts * 32 * 2;
      if (cpu.has(Feature::avx2)) return kPorts * 16 * 2;
      return kPorts * 8 * 2;
    }
    if (bf16 && cpu.has(Feature::avx512bf16)) return kPorts * 32 * 2;  // VDPBF16PS: 2 products per lane
    if (cpu.has(Feature::avx512f)) return kPorts * 16 * 2;
    if (cpu.has(Feature::fma)) return kPorts * 8 * 2;
    return kPorts * 4;
  }
  if (tier == "sme") {
    // The sme kernels multiply in float (FMOPA): one outer product per cycle
    // from the SME unit, which a cluster's cores often share, so no pipes.
    const double lanes = cpu.sme_vector_bits > 0 ? cpu.sme_vector_bits / 32.0 : 16.0;
    return lanes * lanes * 2;
  }
  const int pipes = arm_pipes(core_class);
  double macs = 0;
  if (bf16) {
    macs = 16;  // BFMMLA: a 2x4 by 4x2 product per instruction
  } else if (!int8) {
    macs = cpu.has(Feature::fp16) ? 8 : 4;  // F16 kernels use FMLA on 8 halves where the CPU has fp16
  } else if (tier == "neon") {
    macs = 8;
  } else if (tier == "dotprod") {
    macs = 16;
  } else if (tier == "i8mm") {
    macs = 32;
  } else if (tier == "sve") {
    const double lanes = cpu.sve_vector_bits > 0 ? cpu.sve_vector_bits / 128.0 : 1.0;
    macs = (cpu.has(Feature::svei8mm) ? 32 : 16) * lanes;
  } else {
    return 2;
  }
  return pipes * macs * 2;
}

PeakEstimate estimate_peak(const std::string& tier, gguf::GgmlType lhs, const kernels::CpuFeatures& cpu,
                           const std::vector<PeakCore>& cores) {
  PeakEstimate p;
  double sum = 0;
  double ghz_sum = 0;
  double ops_sum = 0;
  for (const PeakCore& c : cores) {
    if (c.ghz <= 0) {
      p.method = "unknown: no maximum clock for the worker CPUs (no cpufreq, no cpu MHz)";
      return p;
    }
    const double ops = ops_per_cycle(tier, lhs, cpu, c.core_class);
    sum += c.ghz * ops;
    ghz_sum += c.ghz;
    ops_sum += ops;
  }
  if (cores.empty()) {
    p.method = "unknown: no worker CPUs";
    return p;
  }
  p.gop_s = sum;
  const double n = static_cast<double>(cores.size());
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s x %.2f GHz x %.0f %s ops/cycle (%s tier, issue-width bound) = %.0f GOP/s",
                tools::plural(static_cast<int64_t>(cores.size()), "core").c_str(), ghz_sum / n, ops_sum / n,
                is_int8(lhs) ? "int8" : lhs == gguf::GgmlType::BF16 ? "bf16" : "float", tier.c_str(), sum);
  p.method = buf;
  return p;
}

double prefill_ops(uint64_t layer_params, uint64_t output_params, uint32_t n_layer, uint32_t attn_dim,
                   uint32_t n_prompt, uint32_t n_depth) {
  const double p = n_prompt;
  // sum_{i=0}^{p-1} (depth + i + 1) = p * depth + p (p + 1) / 2
  const double attended = p * n_depth + p * (p + 1) / 2;
  return 2.0 * p * static_cast<double>(layer_params) + (n_prompt > 0 ? 2.0 * static_cast<double>(output_params) : 0) +
         2.0 * n_layer * static_cast<double>(attn_dim) * attended;
}

Roofline compute_roofline(const RooflineInputs& in) {
  Roofline r;
  r.probe_gb_s = in.probe_gb_s;
  r.decode_tokens_per_s = in.decode_tokens_per_s;
  r.weight_bytes_per_token = in.weight_bytes_per_token;
  r.kv_bytes_per_token = in.kv_bytes_per_token;
  if (known(in.decode_tokens_per_s) && in.weight_bytes_per_token > 0) {
    const auto gb_s = [&](double tokens_per_s) { return tokens_per_s * static_cast<double>(in.weight_bytes_per_token) / 1e9; };
    r.decode_gb_s = gb_s(in.decode_tokens_per_s);
    if (known(in.probe_gb_s) && in.probe_gb_s > 0) r.decode_efficiency = r.decode_gb_s / in.probe_gb_s;
    // Paired: each repetition against the bandwidth of the moment it ran, so a
    // machine whose bandwidth drifts (other tenants, a phone heating up) moves
    // both sides of each ratio alike.
    if (!in.decode_samples.empty() && in.probe_between.size() == in.decode_samples.size() + 1) {
      std::vector<double> ratios;
      for (size_t i = 0; i < in.decode_samples.size(); ++i) {
        const double around = (in.probe_between[i] + in.probe_between[i + 1]) / 2;
        if (around > 0) ratios.push_back(gb_s(in.decode_samples[i]) / around);
      }
      if (ratios.size() == in.decode_samples.size()) {
        r.decode_efficiency_paired = Stats::of(std::move(ratios));
        r.decode_efficiency = r.decode_efficiency_paired.median;
      }
    }
  }
  r.prefill_tokens_per_s = in.prefill_tokens_per_s;
  if (known(in.prefill_ops_total) && in.n_prompt > 0) {
    r.prefill_gop_per_token = in.prefill_ops_total / in.n_prompt / 1e9;
    if (known(in.prefill_tokens_per_s)) {
      r.prefill_gop_s = in.prefill_tokens_per_s * r.prefill_gop_per_token;
      if (known(in.peak.gop_s) && in.peak.gop_s > 0) r.prefill_fraction = r.prefill_gop_s / in.peak.gop_s;
    }
  }
  r.peak_gop_s = in.peak.gop_s;
  r.peak_method = in.peak.method;
  return r;
}

}  // namespace bench
