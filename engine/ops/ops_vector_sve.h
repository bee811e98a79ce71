// The row operations' vector at a fixed SVE length, for the files compiled
// with -msve-vector-bits=N (engine/CMakeLists.txt: the aarch64_sve256 and
// aarch64_sve512 variants, chosen only on a CPU of exactly that length,
// ops_dispatch.cpp). xsimd 8 has no SVE; the ACLE's fixed-length types
// (arm_sve_vector_bits) are ordinary types that arrays and templates take,
// so the loops written over xsimd's batch compile unchanged over this one.
// It has what those loops use (ops_delta_net.cpp, ops_conv.cpp and
// exp_approx in ops_vector.h), not xsimd's whole surface.
#pragma once

#include <arm_sve.h>

#include <cstddef>
#include <cstdint>

#ifndef ENGINE_OPS_ISA
#error "included by engine/ops/ops_vector.h"
#endif

// The files' own SVE paths (fma4, the taps' gather) test this.
#define ENGINE_OPS_FIXED_SVE 1

namespace engine::ops::ENGINE_OPS_ISA {

using SveFloats = svfloat32_t __attribute__((arm_sve_vector_bits(__ARM_FEATURE_SVE_BITS)));
using SveInts = svint32_t __attribute__((arm_sve_vector_bits(__ARM_FEATURE_SVE_BITS)));
using SveMask = svbool_t __attribute__((arm_sve_vector_bits(__ARM_FEATURE_SVE_BITS)));

inline svbool_t all_lanes() { return svptrue_b32(); }

struct Batch {
  static constexpr size_t size = __ARM_FEATURE_SVE_BITS / 32;
  SveFloats data;

  Batch() = default;
  Batch(float x) : data(svdup_n_f32(x)) {}  // NOLINT: broadcast, as xsimd's batch converts
  explicit Batch(SveFloats v) : data(v) {}
  static Batch load_unaligned(const float* x) { return Batch(svld1_f32(all_lanes(), x)); }
  void store_unaligned(float* x) const { svst1_f32(all_lanes(), x, data); }
};
constexpr size_t kLanes = Batch::size;

struct IntBatch {
  SveInts data;
};
struct Mask {
  SveMask data;
};

inline Batch operator+(Batch a, Batch b) { return Batch(svadd_f32_x(all_lanes(), a.data, b.data)); }
inline Batch operator-(Batch a, Batch b) { return Batch(svsub_f32_x(all_lanes(), a.data, b.data)); }
inline Batch operator*(Batch a, Batch b) { return Batch(svmul_f32_x(all_lanes(), a.data, b.data)); }
// x * y + acc, as xsimd::fma.
inline Batch fma(Batch x, Batch y, Batch acc) { return Batch(svmla_f32_x(all_lanes(), acc.data, x.data, y.data)); }
inline float hadd(Batch v) { return svaddv_f32(all_lanes(), v.data); }
inline Batch operator/(Batch a, Batch b) { return Batch(svdiv_f32_x(all_lanes(), a.data, b.data)); }
inline Batch operator-(Batch a) { return Batch(svneg_f32_x(all_lanes(), a.data)); }
// acc - x * y, as xsimd::fnma(x, y, acc).
inline Batch fnma(Batch x, Batch y, Batch acc) { return Batch(svmls_f32_x(all_lanes(), acc.data, x.data, y.data)); }
inline Batch min(Batch a, Batch b) { return Batch(svmin_f32_x(all_lanes(), a.data, b.data)); }
inline Batch max(Batch a, Batch b) { return Batch(svmax_f32_x(all_lanes(), a.data, b.data)); }
inline Mask operator<(Batch a, Batch b) { return Mask{svcmplt_f32(all_lanes(), a.data, b.data)}; }
inline Mask isnan(Batch a) { return Mask{svcmpuo_f32(all_lanes(), a.data, a.data)}; }
inline Batch select(Mask m, Batch a, Batch b) { return Batch(svsel_f32(m.data, a.data, b.data)); }
// Toward zero, as xsimd::to_int.
inline IntBatch to_int(Batch a) { return IntBatch{svcvt_s32_f32_x(all_lanes(), a.data)}; }
inline IntBatch operator+(IntBatch a, IntBatch b) { return IntBatch{svadd_s32_x(all_lanes(), a.data, b.data)}; }
inline IntBatch operator<<(IntBatch a, int bits) { return IntBatch{svlsl_n_s32_x(all_lanes(), a.data, static_cast<uint32_t>(bits))}; }
inline IntBatch float_bits(Batch v) { return IntBatch{svreinterpret_s32_f32(v.data)}; }
inline Batch from_bits(IntBatch v) { return Batch(svreinterpret_f32_s32(v.data)); }

// The first count lanes; the others load as zero and are not stored.
inline Batch load_part(const float* x, size_t count) {
  return Batch(svld1_f32(svwhilelt_b32_u64(0, count), x));
}
inline void store_part(const Batch& v, float* x, size_t count) { svst1_f32(svwhilelt_b32_u64(0, count), x, v.data); }

}  // namespace engine::ops::ENGINE_OPS_ISA
