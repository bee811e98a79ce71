#include "kernels/cpu_features.h"

#if defined(__aarch64__) && (defined(__linux__) || defined(__ANDROID__))
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif
#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif
#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#endif

namespace kernels {
namespace {

constexpr const char* kFeatureNames[] = {
    "asimd",  "fp16",  "dotprod", "i8mm",     "bf16",     "sve",        "sve2",       "svei8mm", "sme",
    "sse4.2", "avx",   "avx2",    "fma",      "f16c",     "avx512f",    "avx512bw",   "avx512vl",
    "avx512dq", "avx512cd", "avx512vnni", "avx512bf16", "avxvnni",
};
static_assert(sizeof(kFeatureNames) / sizeof(kFeatureNames[0]) == static_cast<size_t>(Feature::kCount));

#if defined(__aarch64__) && (defined(__linux__) || defined(__ANDROID__))
// Bit numbers from the Linux uapi <asm/hwcap.h>, spelled out so that old
// headers (and Android NDK sysroots) that lack the newer names still build.
constexpr unsigned long kHwcapAsimd = 1ul << 1;
constexpr unsigned long kHwcapAsimdHp = 1ul << 10;
constexpr unsigned long kHwcapAsimdDp = 1ul << 20;
constexpr unsigned long kHwcapSve = 1ul << 22;
constexpr unsigned long kHwcap2Sve2 = 1ul << 1;
constexpr unsigned long kHwcap2SveI8mm = 1ul << 9;
constexpr unsigned long kHwcap2I8mm = 1ul << 13;
constexpr unsigned long kHwcap2Bf16 = 1ul << 14;
constexpr unsigned long kHwcap2Sme = 1ul << 23;
constexpr int kPrSveGetVl = 51;           // PR_SVE_GET_VL
constexpr int kPrSveVlLenMask = 0xffff;   // PR_SVE_VL_LEN_MASK
constexpr int kPrSmeGetVl = 64;           // PR_SME_GET_VL (same length mask)

CpuFeatures detect() {
  CpuFeatures f;
  f.arch = Arch::aarch64;
  const unsigned long hw = getauxval(AT_HWCAP);
  const unsigned long hw2 = getauxval(AT_HWCAP2);
  if (hw & kHwcapAsimd) f.set(Feature::asimd);
  if (hw & kHwcapAsimdHp) f.set(Feature::fp16);
  if (hw & kHwcapAsimdDp) f.set(Feature::dotprod);
  if (hw & kHwcapSve) f.set(Feature::sve);
  if (hw2 & kHwcap2Sve2) f.set(Feature::sve2);
  if (hw2 & kHwcap2SveI8mm) f.set(Feature::svei8mm);
  if (hw2 & kHwcap2I8mm) f.set(Feature::i8mm);
  if (hw2 & kHwcap2Bf16) f.set(Feature::bf16);
  if (hw2 & kHwcap2Sme) f.set(Feature::sme);
  if (f.has(Feature::sve)) {
    const int vl = prctl(kPrSveGetVl);
    if (vl > 0) f.sve_vector_bits = static_cast<uint32_t>(vl & kPrSveVlLenMask) * 8;
  }
  if (f.has(Feature::sme)) {
    const int vl = prctl(kPrSmeGetVl);
    if (vl > 0) f.sme_vector_bits = static_cast<uint32_t>(vl & kPrSveVlLenMask) * 8;
  }
  return f;
}

#elif defined(__aarch64__) && defined(__APPLE__)

bool sysctl_flag(const char* name) {
  int value = 0;
  size_t size = sizeof value;
  return sysctlbyname(name, &value, &size, nullptr, 0) == 0 && value != 0;
}

CpuFeatures detect() {
  CpuFeatures f;
  f.arch = Arch::aarch64;
  f.set(Feature::asimd);  // every Apple arm64 core
  if (sysctl_flag("hw.optional.arm.FEAT_FP16")) f.set(Feature::fp16);
  if (sysctl_flag("hw.optional.arm.FEAT_DotProd")) f.set(Feature::dotprod);
  if (sysctl_flag("hw.optional.arm.FEAT_I8MM")) f.set(Feature::i8mm);
  if (sysctl_flag("hw.optional.arm.FEAT_BF16")) f.set(Feature::bf16);
  if (sysctl_flag("hw.optional.arm.FEAT_SME")) f.set(Feature::sme);
  return f;
}

#elif defined(__x86_64__) || defined(_M_X64)

uint64_t xgetbv0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t{edx} << 32) | eax;
}

CpuFeatures detect() {
  CpuFeatures f;
  f.arch = Arch::x86_64;
  unsigned a, b, c, d;
  if (!__get_cpuid_count(1, 0, &a, &b, &c, &d)) return f;
  const bool osxsave = c & (1u << 27);
  // The OS must save the wider registers: YMM (bits 1-2) for AVX, and
  // opmask/ZMM (bits 5-7) for AVX-512, or using them faults.
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool ymm = (xcr0 & 0x6) == 0x6;
  const bool zmm = (xcr0 & 0xe6) == 0xe6;
  if (c & (1u << 20)) f.set(Feature::sse42);
  if (ymm && (c & (1u << 28))) f.set(Feature::avx);
  if (ymm && (c & (1u << 12))) f.set(Feature::fma);
  if (ymm && (c & (1u << 29))) f.set(Feature::f16c);
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    if (ymm && (b & (1u << 5))) f.set(Feature::avx2);
    if (zmm && (b & (1u << 16))) f.set(Feature::avx512f);
    if (zmm && (b & (1u << 30))) f.set(Feature::avx512bw);
    if (zmm && (b & (1u << 31))) f.set(Feature::avx512vl);
    if (zmm && (b & (1u << 17))) f.set(Feature::avx512dq);
    if (zmm && (b & (1u << 28))) f.set(Feature::avx512cd);
    if (zmm && (c & (1u << 11))) f.set(Feature::avx512vnni);
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
    if (ymm && (a & (1u << 4))) f.set(Feature::avxvnni);
    if (zmm && (a & (1u << 5))) f.set(Feature::avx512bf16);
  }
  return f;
}

#else

CpuFeatures detect() { return {}; }

#endif

}  // namespace

const char* feature_name(Feature f) {
  const auto i = static_cast<size_t>(f);
  return i < static_cast<size_t>(Feature::kCount) ? kFeatureNames[i] : "?";
}

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::aarch64:
      return "aarch64";
    case Arch::x86_64:
      return "x86_64";
    case Arch::unknown:
      break;
  }
  return "unknown";
}

std::string CpuFeatures::describe() const {
  std::string s = arch_name(arch);
  s += ":";
  bool any = false;
  for (uint32_t i = 0; i < static_cast<uint32_t>(Feature::kCount); ++i) {
    if (has(static_cast<Feature>(i))) {
      s += ' ';
      s += kFeatureNames[i];
      any = true;
    }
  }
  if (!any) s += " (no SIMD features)";
  if (sve_vector_bits != 0) s += " (sve " + std::to_string(sve_vector_bits) + "-bit)";
  if (sme_vector_bits != 0) s += " (sme " + std::to_string(sme_vector_bits) + "-bit)";
  return s;
}

const CpuFeatures& host_cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

CpuFeatures features_of(Arch arch, std::initializer_list<Feature> features) {
  CpuFeatures f;
  f.arch = arch;
  for (Feature x : features) f.set(x);
  return f;
}

}  // namespace kernels
