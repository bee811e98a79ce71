// Roofline arithmetic: how close decode gets to the memory wall and prefill
// to the arithmetic peak.
//
//   decode GB/s        = decode tokens/s x weight bytes read per token / 1e9
//   decode efficiency  = decode GB/s / probe GB/s (medians of both)
//   prefill ops        = 2 x n_prompt x (elements of the per-layer matrices)
//                      + 2 x (elements of the output matrix: the last token only)
//                      + 2 x n_layer x (q_dim + v_dim) x sum over the prompt of
//                        the positions attended (depth + i + 1): QK^T and AV
//   prefill GOP/s      = prefill ops / prefill seconds / 1e9
//   prefill fraction   = prefill GOP/s / peak GOP/s
//
// The peak is an upper bound from issue width, not a measurement:
//   sum over the worker CPUs of  max clock (GHz) x ops per cycle,
//   ops per cycle = SIMD pipes x multiply-accumulates per instruction x 2,
// per tier, for 8-bit integer kernels (activations quantized to Q8) or float
// kernels (F16/F32 weights). Pipes per core: 4 for flagship cores (Cortex-X,
// Apple P-cores), 2 for other performance cores, 1 for efficiency cores
// (Cortex-A55/A510 issue one 128-bit NEON op per cycle); x86: 2 vector ports.
//   MACs per 128-bit instruction: neon SMLAL 8 (int8), FMLA 4 (f32);
//   dotprod SDOT 16; i8mm SMMLA 32, BFMMLA 16 (bf16); sve = its 128-bit twin
//   x vector length/128; x86 (hwy): AVX-512 VNNI 64 per instruction, AVX-VNNI
//   32, AVX2 16 (VPMADDUBSW + VPMADDWD pairs), VDPBF16PS 32, float FMA 16 / 8
//   lanes; ref: 1 MAC/cycle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/ggml_types.h"
#include "kernels/cpu_features.h"
#include "tools/bench/report.h"

namespace bench {

struct PeakCore {
  double ghz = 0;                    // max clock; 0 unknown
  std::string core_class = "unknown";  // flagship, performance, efficiency, unknown
};

struct PeakEstimate {
  double gop_s = kUnknown;
  std::string method;  // the arithmetic, in words
};

// Ops per cycle of one core for a kernel tier and its activation format (the
// kernel's lhs_type): 8-bit blocks (Q8_0, Q8_1, Q8_K) multiply integers,
// BF16 bf16 pairs where the CPU has the instruction, F32 / F16 floats.
double ops_per_cycle(const std::string& tier, gguf::GgmlType lhs, const kernels::CpuFeatures& cpu,
                     const std::string& core_class);
PeakEstimate estimate_peak(const std::string& tier, gguf::GgmlType lhs, const kernels::CpuFeatures& cpu,
                           const std::vector<PeakCore>& cores);

// Operations of one prefill of n_prompt tokens after n_depth cached tokens.
double prefill_ops(uint64_t layer_params, uint64_t output_params, uint32_t n_layer, uint32_t attn_dim,
                   uint32_t n_prompt, uint32_t n_depth);

struct RooflineInputs {
  double probe_gb_s = kUnknown;
  double decode_tokens_per_s = kUnknown;
  // The decode row's repetitions in the order they ran, and the probe passes
  // around them (one more than repetitions: before each and after the last).
  std::vector<double> decode_samples;
  std::vector<double> probe_between;
  uint64_t weight_bytes_per_token = 0;
  uint64_t kv_bytes_per_token = 0;
  double prefill_tokens_per_s = kUnknown;
  uint32_t n_prompt = 0;
  double prefill_ops_total = kUnknown;
  PeakEstimate peak;
};

Roofline compute_roofline(const RooflineInputs& in);

}  // namespace bench
