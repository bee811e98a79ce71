// CPU feature detection: hardware -> a bit set, once per process. Kept apart from
// kernel selection (registry.h), which maps the bit set to table entries.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace kernels {

enum class Arch : uint8_t { unknown, aarch64, x86_64 };

enum class Feature : uint32_t {
  // aarch64
  asimd = 0,  // Advanced SIMD (NEON)
  fp16,       // half-precision arithmetic (FEAT_FP16, HWCAP_ASIMDHP)
  dotprod,    // SDOT/UDOT (FEAT_DotProd, HWCAP_ASIMDDP)
  i8mm,       // SMMLA/UMMLA/USMMLA (FEAT_I8MM)
  bf16,       // BFDOT/BFMMLA (FEAT_BF16)
  sve,
  sve2,
  svei8mm,    // SVE forms of the int8 matrix multiply
  sme,
  // x86_64
  sse42,
  avx,
  avx2,
  fma,
  f16c,
  avx512f,
  avx512bw,
  avx512vl,
  avx512dq,
  avx512cd,
  avx512vnni,
  avx512bf16,
  avxvnni,
  kCount
};

// The bit set of some features, as CpuFeatures::bits and a kernel's
// required_features hold them: feature_bits({Feature::avx2, Feature::fma}).
constexpr uint64_t feature_bits(std::initializer_list<Feature> features) {
  uint64_t b = 0;
  for (Feature f : features) b |= uint64_t{1} << static_cast<uint32_t>(f);
  return b;
}

struct CpuFeatures {
  Arch arch = Arch::unknown;
  uint64_t bits = 0;
  uint32_t sve_vector_bits = 0;  // 0 unless sve: 128..2048
  uint32_t sme_vector_bits = 0;  // streaming vector length, 0 unless sme (and known)

  bool has(Feature f) const { return (bits >> static_cast<uint32_t>(f)) & 1; }
  void set(Feature f) { bits |= uint64_t{1} << static_cast<uint32_t>(f); }
  bool has_all(const CpuFeatures& required) const { return (bits & required.bits) == required.bits; }
  // "aarch64: asimd fp16 dotprod i8mm sve sve2 sme (sve 128-bit) (sme 256-bit)"
  std::string describe() const;
};

const char* feature_name(Feature f);
const char* arch_name(Arch a);

// Detects the running CPU (getauxval HWCAP/HWCAP2 on Linux and Android, sysctl on
// Apple, cpuid + xgetbv on x86). Cheap after the first call.
const CpuFeatures& host_cpu_features();

// Set from a list of names ("asimd dotprod"), for tests and kernel tables.
CpuFeatures features_of(Arch arch, std::initializer_list<Feature> features);

}  // namespace kernels
