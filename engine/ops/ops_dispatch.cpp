// Picks the row operations' instruction set once (ops_isa.h).
#include <string>
#include <vector>

#include "engine/ops/ops.h"
#include "engine/ops/ops_isa.h"
#include "kernels/choose.h"
#include "kernels/cpu_features.h"
#include "kernels/registry.h"

namespace engine::ops {

namespace baseline {
extern const IsaOps kIsaOps;
}
#if defined(ENGINE_OPS_X86_VARIANTS)
namespace x86_avx2 {
extern const IsaOps kIsaOps;
}
namespace x86_avx512 {
extern const IsaOps kIsaOps;
}
#endif
#if defined(ENGINE_OPS_SVE_VARIANTS)
namespace aarch64_sve256 {
extern const RecurrentOps kRecurrentOps;
}
namespace aarch64_sve512 {
extern const RecurrentOps kRecurrentOps;
}
#endif

namespace {

#if defined(ENGINE_OPS_SVE_VARIANTS)
// NEON's operations with the recurrent layers' of a fixed SVE length. A
// vector of 256 or 512 bits holds 2 or 4 of NEON's, and the delta rule is
// most of a Qwen3.5 token's row-operation work: under qemu a64fx (512 bits)
// it runs 0.66 instructions per state value for one token against NEON's 2.04
// (docs/kernels.md). Attention, softmax and the activations have no SVE form
// yet; at 128 bits, every phone's length, NEON is as wide.
IsaOps with_recurrent_ops(const char* name, const RecurrentOps& r) {
  IsaOps ops = baseline::kIsaOps;
  ops.isa = name;
  ops.shortconv_rows = r.shortconv_rows;
  ops.delta_net_conv = r.delta_net_conv;
  ops.delta_rule_token = r.delta_rule_token;
  ops.delta_rule_chunk = r.delta_rule_chunk;
  return ops;
}
#endif

using kernels::Feature;
using kernels::feature_bits;

// Every variant compiled in, best first, with what it executes: the flags each
// is compiled with (engine/CMakeLists.txt) as the kernels' detection sees them
// (cpuid, and xgetbv for the OS's support). The x86 variants count as the hwy
// tier (x86's SIMD tier) and the baseline as ref, so ENGINE_MAX_TIER caps them
// as it caps the matmul kernels.
struct Variant {
  const char* name;
  kernels::Tier tier;
  kernels::Arch arch;
  uint64_t required_features;
  uint32_t sve_bits;  // compiled for exactly this SVE length; 0: any
  const IsaOps& (*ops)();
};
constexpr Variant kVariants[] = {
#if defined(ENGINE_OPS_SVE_VARIANTS)
    {"aarch64_sve512", kernels::Tier::sve, kernels::Arch::aarch64, feature_bits({Feature::sve}), 512,
     []() -> const IsaOps& {
       static const IsaOps ops = with_recurrent_ops("aarch64_sve512", aarch64_sve512::kRecurrentOps);
       return ops;
     }},
    {"aarch64_sve256", kernels::Tier::sve, kernels::Arch::aarch64, feature_bits({Feature::sve}), 256,
     []() -> const IsaOps& {
       static const IsaOps ops = with_recurrent_ops("aarch64_sve256", aarch64_sve256::kRecurrentOps);
       return ops;
     }},
#endif
#if defined(ENGINE_OPS_X86_VARIANTS)
    {"x86_avx512", kernels::Tier::hwy, kernels::Arch::x86_64,
     feature_bits({Feature::avx2, Feature::fma, Feature::f16c, Feature::avx512f, Feature::avx512bw, Feature::avx512dq,
           Feature::avx512vl, Feature::avx512cd}),
     0, []() -> const IsaOps& { return x86_avx512::kIsaOps; }},
    {"x86_avx2", kernels::Tier::hwy, kernels::Arch::x86_64, feature_bits({Feature::avx2, Feature::fma, Feature::f16c}), 0,
     []() -> const IsaOps& { return x86_avx2::kIsaOps; }},
#endif
    {"baseline", kernels::Tier::ref, kernels::Arch::unknown, 0, 0, []() -> const IsaOps& { return baseline::kIsaOps; }},
};

// A variant of a fixed SVE length on an SVE CPU of another length: the
// reason it is passed over, as kernels::choose gives the others'.
std::string other_sve_length(const Variant& v, const kernels::CpuFeatures& cpu) {
  if (v.sve_bits == 0 || !cpu.has(Feature::sve) || cpu.sve_vector_bits == v.sve_bits) return "";
  return "compiled for " + std::to_string(v.sve_bits) + "-bit SVE, cpu has " + std::to_string(cpu.sve_vector_bits) +
         "-bit";
}

kernels::Choice<Variant> choice_for(const kernels::CpuFeatures& cpu, std::optional<kernels::Tier> cap) {
  std::vector<const Variant*> best_first;
  std::vector<kernels::Passed<Variant>> wrong_length;
  for (const Variant& v : kVariants) {
    if (std::string why = other_sve_length(v, cpu); !why.empty()) {
      wrong_length.push_back({&v, std::move(why)});
    } else {
      best_first.push_back(&v);
    }
  }
  kernels::Choice<Variant> c = kernels::choose<Variant>(best_first, cpu, cap);
  // They head the list (kVariants), so the log keeps its best-first order.
  c.rejected.insert(c.rejected.begin(), wrong_length.begin(), wrong_length.end());
  return c;
}

}  // namespace

std::span<const IsaOps* const> isa_ops_variants() {
  static const std::vector<const IsaOps*> runnable = [] {
    std::vector<const IsaOps*> out;
    const kernels::CpuFeatures& cpu = kernels::host_cpu_features();
    for (const Variant& v : kVariants) {
      if (kernels::can_run(v.arch, v.required_features, cpu) && other_sve_length(v, cpu).empty()) out.push_back(&v.ops());
    }
    return out;
  }();
  return runnable;
}

const IsaOps& choose_isa_ops(const kernels::CpuFeatures& cpu, std::optional<kernels::Tier> cap) {
  // The baseline runs everywhere and no tier is below ref: there is always a choice.
  return choice_for(cpu, cap).chosen->ops();
}

std::string describe_isa_ops_choice(const kernels::CpuFeatures& cpu, std::optional<kernels::Tier> cap) {
  return kernels::describe_choice(choice_for(cpu, cap), "none");
}

const IsaOps& isa_ops() {
  static const IsaOps& ops = choose_isa_ops(kernels::host_cpu_features(), kernels::max_tier_from_env());
  return ops;
}

void dot_rows(const float* q, size_t q_stride, size_t n_q, const float* k, size_t k_stride, size_t n_k, size_t d,
              float scale, float* out, size_t out_stride) {
  isa_ops().dot_rows(q, q_stride, n_q, k, k_stride, n_k, d, scale, out, out_stride);
}

void weighted_rows(const float* w, size_t w_stride, size_t n_w, const float* v, size_t v_stride, size_t n_v, size_t d,
                   float* out, size_t out_stride) {
  isa_ops().weighted_rows(w, w_stride, n_w, v, v_stride, n_v, d, out, out_stride);
}

void dot_rows(const float* q, size_t q_stride, size_t n_q, const uint16_t* k, size_t k_stride, size_t n_k, size_t d,
              float scale, float* out, size_t out_stride) {
  isa_ops().dot_rows_f16(q, q_stride, n_q, k, k_stride, n_k, d, scale, out, out_stride);
}

void weighted_rows(const float* w, size_t w_stride, size_t n_w, const uint16_t* v, size_t v_stride, size_t n_v,
                   size_t d, float* out, size_t out_stride) {
  isa_ops().weighted_rows_f16(w, w_stride, n_w, v, v_stride, n_v, d, out, out_stride);
}

void dot_rows_quant(RowQuant t, const float* q, size_t q_stride, size_t n_q, const uint8_t* k, size_t k_row_bytes,
                    size_t n_k, size_t d, float scale, float* out, size_t out_stride) {
  isa_ops().dot_rows_quant(t, q, q_stride, n_q, k, k_row_bytes, n_k, d, scale, out, out_stride);
}

void weighted_rows_quant(RowQuant t, const float* w, size_t w_stride, size_t n_w, const uint8_t* v,
                         size_t v_row_bytes, size_t n_v, size_t d, float* out, size_t out_stride) {
  isa_ops().weighted_rows_quant(t, w, w_stride, n_w, v, v_row_bytes, n_v, d, out, out_stride);
}

bool f16_rows_in_place() { return isa_ops().f16_rows_in_place; }

void fp16_to_fp32(const uint16_t* x, float* y, size_t n) { isa_ops().fp16_to_fp32(x, y, n); }

void softmax(float* x, size_t n) { isa_ops().softmax(x, n); }

void silu_mul(float* out, const float* gate, const float* up, size_t n) { isa_ops().silu_mul(out, gate, up, n); }

void gelu_mul(float* out, const float* gate, const float* up, size_t n) { isa_ops().gelu_mul(out, gate, up, n); }

void shortconv_rows(const float* kernel, uint32_t taps, uint32_t d, uint32_t first, uint32_t last, float* state,
                    float* bcx, uint32_t n, float* y) {
  isa_ops().shortconv_rows(kernel, taps, d, first, last, state, bcx, n, y);
}

void delta_net_conv(const float* kernel, uint32_t taps, uint32_t channels, uint32_t first, uint32_t last,
                    float* window, const float* in, uint32_t n, float* out) {
  isa_ops().delta_net_conv(kernel, taps, channels, first, last, window, in, n, out);
}

void delta_rule_token(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, float* state) {
  isa_ops().delta_rule_token(r, n, dk, dv, state);
}

void delta_rule_chunk(const DeltaRuleRows& r, uint32_t n, uint32_t dk, uint32_t dv, uint32_t chunk, float* state,
                      float* scratch) {
  isa_ops().delta_rule_chunk(r, n, dk, dv, chunk, state, scratch);
}

}  // namespace engine::ops
