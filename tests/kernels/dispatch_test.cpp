// CPU feature detection and kernel selection. Under qemu, ENGINE_QEMU_CPU names
// the -cpu model the test runs on, and the detected features must be that
// model's: the same binary sees a different CPU on each run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "engine/model/kernel_plan.h"
#include "engine/ops/ops_isa.h"
#include "engine/support/log.h"
#include "engine/threads/thread_pool.h"
#include "kernels/cpu_features.h"
#include "kernels/registry.h"

namespace {

using kernels::Arch;
using kernels::Feature;
using kernels::Tier;

std::string qemu_cpu() {
  const char* env = std::getenv("ENGINE_QEMU_CPU");
  return env ? env : "";
}

TEST(CpuFeatures, DetectsTheCpuItRunsOn) {
  const kernels::CpuFeatures& f = kernels::host_cpu_features();
  std::printf("detected: %s\n", f.describe().c_str());
  const std::string cpu = qemu_cpu();
#if defined(__aarch64__)
  EXPECT_EQ(f.arch, Arch::aarch64);
  EXPECT_TRUE(f.has(Feature::asimd));
  if (cpu == "cortex-a53") {  // Armv8.0: NEON only
    EXPECT_FALSE(f.has(Feature::fp16));
    EXPECT_FALSE(f.has(Feature::dotprod));
    EXPECT_FALSE(f.has(Feature::i8mm));
    EXPECT_FALSE(f.has(Feature::sve));
  } else if (cpu == "neoverse-n1") {  // Armv8.2 + dotprod
    EXPECT_TRUE(f.has(Feature::fp16));
    EXPECT_TRUE(f.has(Feature::dotprod));
    EXPECT_FALSE(f.has(Feature::i8mm));
    EXPECT_FALSE(f.has(Feature::sve));
  } else if (cpu.rfind("max", 0) == 0) {  // everything qemu implements
    EXPECT_TRUE(f.has(Feature::dotprod));
    EXPECT_TRUE(f.has(Feature::i8mm));
    EXPECT_TRUE(f.has(Feature::sve));
    EXPECT_TRUE(f.has(Feature::sve2));
    EXPECT_TRUE(f.has(Feature::svei8mm));
    EXPECT_GE(f.sve_vector_bits, 128u);
    EXPECT_TRUE(f.has(Feature::sme));
    // qemu's default streaming vector length is 256 bits; the label of a
    // model that sets it says so (scripts/test.sh: max-sme512)
    const size_t at = cpu.find("-sme");
    const uint32_t sme_bits = at == std::string::npos ? 256u : static_cast<uint32_t>(std::stoul(cpu.substr(at + 4)));
    EXPECT_EQ(f.sme_vector_bits, sme_bits);
  } else if (cpu == "a64fx") {  // SVE 512-bit, no dotprod
    EXPECT_TRUE(f.has(Feature::sve));
    EXPECT_EQ(f.sve_vector_bits, 512u);
    EXPECT_FALSE(f.has(Feature::sve2));
    EXPECT_FALSE(f.has(Feature::dotprod));
    EXPECT_FALSE(f.has(Feature::i8mm));
  } else {
    std::printf("not under a known qemu model (ENGINE_QEMU_CPU='%s'): only the baseline is checked\n", cpu.c_str());
  }
  if (f.has(Feature::sve)) {
    EXPECT_EQ(f.sve_vector_bits % 128, 0u);
  } else {
    EXPECT_EQ(f.sve_vector_bits, 0u);
  }
  if (!f.has(Feature::sme)) {
    EXPECT_EQ(f.sme_vector_bits, 0u);
  }
#elif defined(__x86_64__)
  EXPECT_EQ(f.arch, Arch::x86_64);
  EXPECT_TRUE(f.has(Feature::sse42));  // every x86-64 machine this project targets
  if (f.has(Feature::avx2)) {
    EXPECT_TRUE(f.has(Feature::avx));
  }
  if (f.has(Feature::avx512bw)) {
    EXPECT_TRUE(f.has(Feature::avx512f));
  }
#endif
}

TEST(CpuFeatures, DescribeNamesEveryFeature) {
  const auto f = kernels::features_of(Arch::aarch64, {Feature::asimd, Feature::dotprod, Feature::i8mm});
  EXPECT_EQ(f.describe(), "aarch64: asimd dotprod i8mm");
  kernels::CpuFeatures sve = kernels::features_of(Arch::aarch64, {Feature::asimd, Feature::sve});
  sve.sve_vector_bits = 512;
  EXPECT_EQ(sve.describe(), "aarch64: asimd sve (sve 512-bit)");
}

TEST(KernelSelection, ExpectedTierPerCpuModel) {
  using K = kernels::CpuFeatures;
  const K a53 = kernels::features_of(Arch::aarch64, {Feature::asimd});
  const K n1 = kernels::features_of(Arch::aarch64, {Feature::asimd, Feature::fp16, Feature::dotprod});
  K max = kernels::features_of(
      Arch::aarch64, {Feature::asimd, Feature::dotprod, Feature::i8mm, Feature::sve, Feature::sve2, Feature::svei8mm});
  max.sve_vector_bits = 128;  // a phone's SVE: i8mm on NEON registers does more per instruction
  K a64fx = kernels::features_of(Arch::aarch64, {Feature::asimd, Feature::fp16, Feature::sve});
  a64fx.sve_vector_bits = 512;
  const K x86 = kernels::features_of(Arch::x86_64, {Feature::sse42, Feature::avx2});
  EXPECT_EQ(kernels::expected_tier(a53), Tier::neon);
  EXPECT_EQ(kernels::expected_tier(n1), Tier::dotprod);
  EXPECT_EQ(kernels::expected_tier(max), Tier::i8mm);
  max.sve_vector_bits = 256;  // Graviton 3: as many cycles either way, i8mm stays (registry.cpp, sve_first)
  EXPECT_EQ(kernels::expected_tier(max), Tier::i8mm);
  max.sve_vector_bits = 512;  // qemu's max by default: SVE goes first
  EXPECT_EQ(kernels::expected_tier(max), Tier::sve);
  EXPECT_EQ(kernels::expected_tier(a64fx), Tier::sve);
  EXPECT_EQ(kernels::expected_tier(x86), Tier::hwy);
}

// The selection follows the measured instruction counts and, where they
// disagree, the cycles on LLVM's core models (kernels/registry.cpp): at 128
// bits dotprod before SVE; at 256 bits (Neoverse V1) dotprod for the quantized
// types and SVE for F32; from 512 bits SVE first. expected_tier agrees.
TEST(KernelSelection, DotprodBeforeSveAt128And256BitsSveFirstFrom512) {
#if defined(__aarch64__)
  kernels::CpuFeatures cpu = kernels::features_of(Arch::aarch64, {Feature::asimd, Feature::dotprod, Feature::sve});
  for (uint32_t bits : {128u, 256u, 512u}) {
    cpu.sve_vector_bits = bits;
    for (auto type : {gguf::GgmlType::Q4_0, gguf::GgmlType::Q4_K, gguf::GgmlType::Q6_K, gguf::GgmlType::Q8_0,
                      gguf::GgmlType::Q5_K, gguf::GgmlType::IQ4_NL, gguf::GgmlType::F16, gguf::GgmlType::F32}) {
      const bool sve = bits >= 512 || (bits == 256 && type == gguf::GgmlType::F32);
      const Tier want = sve ? Tier::sve : Tier::dotprod;
      EXPECT_EQ(kernels::expected_tier(cpu, type), want) << bits << " bits, " << gguf::type_name(type);
      const auto s = kernels::select_matmul(type, cpu, std::nullopt);
      ASSERT_NE(s.kernel, nullptr);
      EXPECT_EQ(s.kernel->tier, want) << bits << " bits, " << gguf::type_name(type) << ": " << s.describe();
      EXPECT_FALSE(s.is_fallback()) << s.describe();
    }
  }
#else
  GTEST_SKIP() << "the ARM tiers are compiled into aarch64 builds only";
#endif
}

// The types the ARM tiers cover get a kernel of the tier each CPU model should
// get, with no FALLBACK, on the feature sets of qemu's models (a53: neon, n1:
// dotprod, max at 128 bits: i8mm, a64fx: sve); F32 ran the ref kernel there, and so did BF16,
// and A64FX ran the types of issue 27 on neon.
TEST(KernelSelection, ArmTiersCoverTheirTypesWithoutFallback) {
#if defined(__aarch64__)
  kernels::CpuFeatures a64fx = kernels::features_of(Arch::aarch64, {Feature::asimd, Feature::fp16, Feature::sve});
  a64fx.sve_vector_bits = 512;
  kernels::CpuFeatures max = kernels::features_of(
      Arch::aarch64, {Feature::asimd, Feature::dotprod, Feature::i8mm, Feature::sve, Feature::sve2, Feature::svei8mm});
  max.sve_vector_bits = 128;
  const kernels::CpuFeatures cpus[] = {
      kernels::features_of(Arch::aarch64, {Feature::asimd}),
      kernels::features_of(Arch::aarch64, {Feature::asimd, Feature::fp16, Feature::dotprod}), max, a64fx};
  for (const kernels::CpuFeatures& cpu : cpus) {
    for (auto type : {gguf::GgmlType::F32, gguf::GgmlType::F16, gguf::GgmlType::BF16, gguf::GgmlType::Q8_0,
                      gguf::GgmlType::Q4_0, gguf::GgmlType::Q5_0, gguf::GgmlType::Q4_K, gguf::GgmlType::Q5_K,
                      gguf::GgmlType::Q6_K, gguf::GgmlType::IQ4_NL, gguf::GgmlType::IQ4_XS, gguf::GgmlType::Q4_1,
                      gguf::GgmlType::Q5_1, gguf::GgmlType::Q3_K, gguf::GgmlType::Q2_K}) {
      const auto s = kernels::select_matmul(type, cpu, std::nullopt);
      ASSERT_NE(s.kernel, nullptr);
      EXPECT_EQ(s.kernel->tier, kernels::expected_tier(cpu)) << s.describe();
      EXPECT_FALSE(s.is_fallback()) << s.describe();
    }
  }
  // Wide SVE (qemu's max at 512 bits): the sve kernels, for every type (BF16
  // with BFMMLA: the test below). A64FX ran Q5_K, Q3_K, Q2_K, IQ4_XS, Q4_1,
  // BF16 ... on neon with a FALLBACK until the sve tier had them.
  max.sve_vector_bits = 512;
  for (auto type : {gguf::GgmlType::Q4_K, gguf::GgmlType::Q5_0, gguf::GgmlType::Q5_K, gguf::GgmlType::IQ4_NL,
                    gguf::GgmlType::IQ4_XS, gguf::GgmlType::Q4_1, gguf::GgmlType::Q5_1, gguf::GgmlType::Q3_K,
                    gguf::GgmlType::Q2_K, gguf::GgmlType::BF16}) {
    const auto s = kernels::select_matmul(type, max, std::nullopt);
    ASSERT_NE(s.kernel, nullptr);
    EXPECT_EQ(s.kernel->tier, Tier::sve) << s.describe();
    EXPECT_FALSE(s.is_fallback()) << s.describe();
    EXPECT_EQ(kernels::expected_tier(max, type), Tier::sve) << gguf::type_name(type);
  }
#else
  GTEST_SKIP() << "the ARM tiers are compiled into aarch64 builds only";
#endif
}

// BF16 on i8mm: BFMMLA where the CPU has FEAT_BF16 (qemu's max, phones from
// Armv8.6 on); a CPU with i8mm and no bf16 gets the tier's widening kernel,
// and the log line names the BFMMLA kernel passed over and why. Neither is a
// fallback; below i8mm the tiers widen too (ArmTiersCoverTheirTypesWithoutFallback).
TEST(KernelSelection, Bf16UsesBfmmlaWhereTheCpuHasItAndWidensElsewhere) {
#if defined(__aarch64__)
  kernels::CpuFeatures i8mm = kernels::features_of(Arch::aarch64, {Feature::asimd, Feature::dotprod, Feature::i8mm});
  const auto widened = kernels::select_matmul(gguf::GgmlType::BF16, i8mm, std::nullopt);
  ASSERT_NE(widened.kernel, nullptr);
  EXPECT_STREQ(widened.kernel->name, "matmul_f32_f32_bf16_4x4_i8mm");
  EXPECT_FALSE(widened.is_fallback()) << widened.describe();
  EXPECT_EQ(widened.describe(),
            "BF16: matmul_f32_f32_bf16_4x4_i8mm [i8mm]; rejected: matmul_f32_bf16_bf16_8x4_bfmmla (cpu lacks bf16)");
  i8mm.set(Feature::bf16);
  const auto mmla = kernels::select_matmul(gguf::GgmlType::BF16, i8mm, std::nullopt);
  ASSERT_NE(mmla.kernel, nullptr);
  EXPECT_EQ(mmla.describe(), "BF16: matmul_f32_bf16_bf16_8x4_bfmmla [i8mm]");
  EXPECT_EQ(mmla.kernel->lhs_type, gguf::GgmlType::BF16) << "BFMMLA rounds the activations to bf16";
  EXPECT_EQ(mmla.kernel->required_features & kernels::feature_bits({Feature::bf16}),
            kernels::feature_bits({Feature::bf16}));
  // bf16 without i8mm (no such core is known, but the bits are independent):
  // the dotprod tier's widening kernel.
  const auto dot = kernels::select_matmul(
      gguf::GgmlType::BF16, kernels::features_of(Arch::aarch64, {Feature::asimd, Feature::dotprod, Feature::bf16}),
      std::nullopt);
  ASSERT_NE(dot.kernel, nullptr);
  EXPECT_STREQ(dot.kernel->name, "matmul_f32_f32_bf16_4x4_dotprod");
  EXPECT_FALSE(dot.is_fallback()) << dot.describe();
  const auto capped = kernels::select_matmul(gguf::GgmlType::BF16, i8mm, Tier::neon);
  ASSERT_NE(capped.kernel, nullptr);
  EXPECT_STREQ(capped.kernel->name, "matmul_f32_f32_bf16_4x4_neon");
  // Wide SVE widens in fewer instructions than the i8mm tier (0.691 per weight
  // at 256 bits against 0.786) and goes first, unless the CPU runs BFMMLA
  // (0.220): then the i8mm tier, as expected for BF16 there. At 128 bits
  // (1.378) the i8mm tier's widening kernel.
  kernels::CpuFeatures wide = kernels::features_of(
      Arch::aarch64, {Feature::asimd, Feature::dotprod, Feature::i8mm, Feature::sve, Feature::svei8mm});
  for (uint32_t bits : {128u, 256u, 512u}) {
    wide.sve_vector_bits = bits;
    const auto widening = kernels::select_matmul(gguf::GgmlType::BF16, wide, std::nullopt);
    ASSERT_NE(widening.kernel, nullptr);
    EXPECT_STREQ(widening.kernel->name, bits == 128 ? "matmul_f32_f32_bf16_4x4_i8mm" : "matmul_f32_f32_bf16_4x4_sve")
        << bits;
    EXPECT_FALSE(widening.is_fallback()) << widening.describe();
    wide.set(Feature::bf16);
    const auto bfmmla = kernels::select_matmul(gguf::GgmlType::BF16, wide, std::nullopt);
    ASSERT_NE(bfmmla.kernel, nullptr);
    EXPECT_STREQ(bfmmla.kernel->name, "matmul_f32_bf16_bf16_8x4_bfmmla") << bits;
    EXPECT_EQ(kernels::expected_tier(wide, gguf::GgmlType::BF16), Tier::i8mm) << bits;
    EXPECT_FALSE(bfmmla.is_fallback()) << bfmmla.describe();
    // Q4_0 is not BF16's case: its sve kernel goes first from 512 bits.
    const auto q4_0 = kernels::select_matmul(gguf::GgmlType::Q4_0, wide, std::nullopt);
    ASSERT_NE(q4_0.kernel, nullptr);
    EXPECT_EQ(q4_0.kernel->tier, bits >= 512 ? Tier::sve : Tier::i8mm) << q4_0.describe();
    wide = kernels::features_of(Arch::aarch64,
                                {Feature::asimd, Feature::dotprod, Feature::i8mm, Feature::sve, Feature::svei8mm});
  }
#else
  GTEST_SKIP() << "the ARM tiers are compiled into aarch64 builds only";
#endif
}

// x86: VDPBF16PS where the CPU has AVX512-BF16, Highway's widening kernel
// elsewhere, the rejection named.
TEST(KernelSelection, Bf16UsesVdpbf16psWhereTheCpuHasItAndWidensElsewhere) {
#if defined(__x86_64__)
  kernels::CpuFeatures avx512 = kernels::features_of(
      Arch::x86_64, {Feature::sse42, Feature::avx, Feature::avx2, Feature::fma, Feature::f16c, Feature::avx512f,
                     Feature::avx512bw, Feature::avx512vl, Feature::avx512dq, Feature::avx512vnni});
  const auto widened = kernels::select_matmul(gguf::GgmlType::BF16, avx512, std::nullopt);
  ASSERT_NE(widened.kernel, nullptr);
  EXPECT_STREQ(widened.kernel->name, "matmul_f32_f32_bf16_8x32_hwy");
  EXPECT_NE(widened.describe().find("rejected: matmul_f32_bf16_bf16_8x48_avx512bf16 (cpu lacks avx512bf16)"),
            std::string::npos)
      << widened.describe();
  EXPECT_FALSE(widened.is_fallback()) << widened.describe();
  avx512.set(Feature::avx512bf16);
  const auto dp = kernels::select_matmul(gguf::GgmlType::BF16, avx512, std::nullopt);
  ASSERT_NE(dp.kernel, nullptr);
  EXPECT_EQ(dp.describe(), "BF16: matmul_f32_bf16_bf16_8x48_avx512bf16 [hwy]") << "no Highway target named";
  EXPECT_EQ(dp.kernel->lhs_type, gguf::GgmlType::BF16) << "VDPBF16PS takes the activations rounded to bf16";
  EXPECT_FALSE(dp.is_fallback()) << dp.describe();
#else
  GTEST_SKIP() << "the AVX512-BF16 kernel is compiled into x86-64 builds only";
#endif
}

// SME goes first for the types it has (Q4_0) from a 256-bit streaming vector
// on where SVE is 128 bits; the other types keep i8mm, and that is no
// fallback; wide SVE keeps the sve kernels. At 128 bits the
// i8mm kernel runs fewer instructions and is chosen; the sme kernel comes
// after it. ENGINE_MAX_TIER=i8mm rejects sme by name.
TEST(KernelSelection, SmeFirstForQ4_0From256Bits) {
  bool built = false;
  for (const kernels::MatmulKernel* k : kernels::matmul_table(gguf::GgmlType::Q4_0)) built |= k->tier == Tier::sme;
  if (!built) GTEST_SKIP() << "no sme tier in this build (aarch64 ELF builds whose assembler has SME)";
  kernels::CpuFeatures cpu = kernels::features_of(
      Arch::aarch64, {Feature::asimd, Feature::fp16, Feature::dotprod, Feature::i8mm, Feature::sve, Feature::sme});
  cpu.sve_vector_bits = 128;
  for (uint32_t bits : {128u, 256u, 512u}) {
    cpu.sme_vector_bits = bits;
    const auto q4_0 = kernels::select_matmul(gguf::GgmlType::Q4_0, cpu, std::nullopt);
    ASSERT_NE(q4_0.kernel, nullptr);
    EXPECT_EQ(q4_0.kernel->tier, bits >= 256 ? Tier::sme : Tier::i8mm) << bits << ": " << q4_0.describe();
    EXPECT_FALSE(q4_0.is_fallback()) << q4_0.describe();
    const auto q6_k = kernels::select_matmul(gguf::GgmlType::Q6_K, cpu, std::nullopt);
    ASSERT_NE(q6_k.kernel, nullptr);
    EXPECT_EQ(q6_k.kernel->tier, Tier::i8mm) << q6_k.describe();
    EXPECT_FALSE(q6_k.is_fallback()) << q6_k.describe();
  }
  cpu.sve_vector_bits = 512;  // qemu's max by default: wide SVE runs fewer instructions than sme
  const auto wide = kernels::select_matmul(gguf::GgmlType::Q4_0, cpu, std::nullopt);
  ASSERT_NE(wide.kernel, nullptr);
  EXPECT_EQ(wide.kernel->tier, Tier::sve) << wide.describe();
  cpu.sve_vector_bits = 128;
  const auto capped = kernels::select_matmul(gguf::GgmlType::Q4_0, cpu, Tier::i8mm);
  ASSERT_NE(capped.kernel, nullptr);
  EXPECT_EQ(capped.kernel->tier, Tier::i8mm);
  EXPECT_NE(capped.describe().find("_sme (above ENGINE_MAX_TIER=i8mm)"), std::string::npos) << capped.describe();
}

TEST(KernelSelection, EveryComputedTypeHasAKernelEndingInRef) {
  for (auto type : {gguf::GgmlType::F32, gguf::GgmlType::F16, gguf::GgmlType::BF16, gguf::GgmlType::Q8_0,
                    gguf::GgmlType::Q4_0, gguf::GgmlType::Q4_1, gguf::GgmlType::Q5_0, gguf::GgmlType::Q5_1,
                    gguf::GgmlType::Q2_K, gguf::GgmlType::Q3_K, gguf::GgmlType::Q4_K, gguf::GgmlType::Q5_K,
                    gguf::GgmlType::Q6_K, gguf::GgmlType::IQ4_NL, gguf::GgmlType::IQ4_XS}) {
    SCOPED_TRACE(std::string(gguf::type_name(type)));
    const auto table = kernels::matmul_table(type);
    ASSERT_FALSE(table.empty());
    EXPECT_EQ(table.back()->tier, Tier::ref);
    for (const auto* k : table) EXPECT_EQ(k->rhs_type, type);
    const auto s = kernels::select_matmul(type, kernels::host_cpu_features(), std::nullopt);
    ASSERT_NE(s.kernel, nullptr);
    EXPECT_TRUE(kernels::can_run(*s.kernel, kernels::host_cpu_features()));
  }
  EXPECT_TRUE(kernels::matmul_table(gguf::GgmlType::IQ2_XXS).empty());
  const auto none = kernels::select_matmul(gguf::GgmlType::IQ2_XXS, kernels::host_cpu_features(), std::nullopt);
  EXPECT_EQ(none.kernel, nullptr);
  EXPECT_TRUE(none.is_fallback());
  EXPECT_NE(none.describe().find("this build cannot compute IQ2_XXS"), std::string::npos) << none.describe();
}

// On x86 the hwy tier computes every type the build computes (the ref
// tier's), so no weight type of a GGUF file falls back to ref there: Q2_K
// and Q3_K did, until they got hwy kernels.
TEST(KernelSelection, HwyCoversEveryComputedTypeOnX86) {
#if defined(__x86_64__)
  const kernels::CpuFeatures cpu = kernels::features_of(Arch::x86_64, {Feature::sse42, Feature::avx2});
  size_t computed = 0;
  for (uint32_t id = 0; id < gguf::kGgmlTypeIdCount; ++id) {
    const auto type = static_cast<gguf::GgmlType>(id);
    if (kernels::matmul_table(type).empty()) continue;
    ++computed;
    SCOPED_TRACE(std::string(gguf::type_name(type)));
    const auto s = kernels::select_matmul(type, cpu, std::nullopt);
    ASSERT_NE(s.kernel, nullptr);
    EXPECT_EQ(s.kernel->tier, Tier::hwy) << s.describe();
    EXPECT_FALSE(s.is_fallback()) << s.describe();
  }
  EXPECT_GE(computed, 15u);  // F32 F16 BF16, Q4_0 Q4_1 Q5_0 Q5_1 Q8_0, Q2_K..Q6_K, IQ4_NL IQ4_XS
#else
  GTEST_SKIP() << "the hwy tier is what x86 builds run";
#endif
}

TEST(KernelSelection, RejectsKernelsTheCpuCannotRun) {
  kernels::MatmulKernel dot{};
  dot.name = "matmul_test_dotprod";
  dot.tier = Tier::dotprod;
  dot.arch = Arch::aarch64;
  dot.required_features = kernels::features_of(Arch::aarch64, {Feature::asimd, Feature::dotprod}).bits;
  EXPECT_FALSE(kernels::can_run(dot, kernels::features_of(Arch::aarch64, {Feature::asimd})));
  EXPECT_TRUE(kernels::can_run(dot, kernels::features_of(Arch::aarch64, {Feature::asimd, Feature::dotprod})));
  EXPECT_FALSE(kernels::can_run(dot, kernels::features_of(Arch::x86_64, {Feature::asimd, Feature::dotprod})));
}

struct CapturedLog {
  std::vector<std::pair<engine::LogLevel, std::string>> lines;
  static void sink(engine::LogLevel level, std::string_view message, void* user) {
    static_cast<CapturedLog*>(user)->lines.emplace_back(level, std::string(message));
  }
};

class KernelPlanLog : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::set_log_sink(&CapturedLog::sink, &log_);
    unsetenv("ENGINE_MAX_TIER");
  }
  void TearDown() override {
    engine::set_log_sink(nullptr, nullptr);
    unsetenv("ENGINE_MAX_TIER");
  }
  CapturedLog log_;
};

TEST_F(KernelPlanLog, LogsTheCpuAndOneLinePerWeightType) {
  const std::vector<gguf::GgmlType> types = {gguf::GgmlType::Q4_0, gguf::GgmlType::Q6_K, gguf::GgmlType::Q4_0};
  const engine::KernelPlan plan = engine::plan_kernels(types);
  ASSERT_EQ(log_.lines.size(), 4u);  // cpu line + attention + Q4_0 + Q6_K
  for (const auto& [level, line] : log_.lines) std::printf("%s: %s\n", engine::log_level_name(level), line.c_str());
  EXPECT_EQ(log_.lines[0].second.rfind("cpu " + kernels::host_cpu_features().describe(), 0), 0u);
  EXPECT_NE(log_.lines[0].second.find("compiled tiers: "), std::string::npos);
  const std::string row_ops = "row operations (attention, activations, convolutions, delta rule): ";
  EXPECT_EQ(log_.lines[1].second.rfind(row_ops + engine::ops::isa_ops().isa, 0), 0u) << log_.lines[1].second;
  // Q8_0 activations, or float ones on the sme tier.
  EXPECT_EQ(log_.lines[2].second.rfind("kernel Q4_0: matmul_f32_", 0), 0u) << log_.lines[2].second;
  EXPECT_NE(log_.lines[2].second.find("_q4_0_"), std::string::npos) << log_.lines[2].second;
  EXPECT_EQ(log_.lines[3].second.rfind("kernel Q6_K: matmul_f32_q8_k_q6_k_", 0), 0u) << log_.lines[3].second;
  for (size_t i = 2; i < 4; ++i) {
    const bool fallback = plan.selections[i - 2].is_fallback();
    EXPECT_EQ(log_.lines[i].first, fallback ? engine::LogLevel::warning : engine::LogLevel::info);
    EXPECT_EQ(log_.lines[i].second.find("FALLBACK") != std::string::npos, fallback);
  }
  EXPECT_NE(plan.kernel_for(gguf::GgmlType::Q6_K), nullptr);
  EXPECT_EQ(plan.kernel_for(gguf::GgmlType::Q8_0), nullptr);
}

TEST_F(KernelPlanLog, MaxTierCapsTheChoiceAndSaysSo) {
  setenv("ENGINE_MAX_TIER", "ref", 1);
  const std::vector<gguf::GgmlType> types = {gguf::GgmlType::Q8_0};
  const engine::KernelPlan plan = engine::plan_kernels(types);
  ASSERT_EQ(plan.selections.size(), 1u);
  const auto& s = plan.selections[0];
  EXPECT_EQ(s.kernel->tier, Tier::ref);
  EXPECT_FALSE(s.is_fallback()) << "a fallback the user asked for is not a warning";
  EXPECT_NE(log_.lines[0].second.find("ENGINE_MAX_TIER=ref caps the choice"), std::string::npos);
  EXPECT_NE(s.describe().find("because ENGINE_MAX_TIER=ref"), std::string::npos) << s.describe();
  for (const auto& r : s.rejected) EXPECT_EQ(r.reason, "above ENGINE_MAX_TIER=ref");
}

TEST_F(KernelPlanLog, UnknownMaxTierIsAClearError) {
  setenv("ENGINE_MAX_TIER", "avx9000", 1);
  const std::vector<gguf::GgmlType> types = {gguf::GgmlType::Q8_0};
  try {
    engine::plan_kernels(types);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "ENGINE_MAX_TIER='avx9000' is not a tier (valid: ref, hwy, neon, dotprod, i8mm, sve, sme)");
  }
}

// The line a session logs when threads run on in-order cores: which they are
// and which kernels run their in-order schedule there.
TEST(KernelPlanInOrder, NamesTheThreadsAndTheKernelsWithAnInOrderSchedule) {
  const auto run = [](size_t, size_t, size_t, const void*, const void*, float*, size_t) {};
  kernels::MatmulKernel with{}, without{};
  with.name = "matmul_test_q4_0_dotprod";
  with.run = run;
  with.run_in_order = run;
  without.name = "matmul_test_q6_k_dotprod";
  without.run = run;
  engine::KernelPlan plan;
  plan.selections.push_back({gguf::GgmlType::Q4_0, &with, {}, Tier::dotprod, {}});
  plan.selections.push_back({gguf::GgmlType::Q6_K, &without, {}, Tier::dotprod, {}});
  const engine::LogLevel level = engine::log_level();
  engine::set_log_level(engine::LogLevel::warning);  // the pools' placement lines
  engine::ThreadPlan threads = engine::ThreadPlan::unpinned(2);
  {
    const engine::ThreadPool pool(threads);
    EXPECT_EQ(plan.describe_in_order(pool), "");  // not pinned, and other cores may run them
  }
  threads.only_in_order_cpus = true;  // a process confined to the little cores
  const engine::ThreadPool pool(threads);
  engine::set_log_level(level);
  const std::string line = plan.describe_in_order(pool);
  const std::string expected = "threads t0, t1 run on in-order cores: Q4_0 matmul_test_q4_0_dotprod run their in-order";
  EXPECT_EQ(line.rfind(expected, 0), 0u) << line;
  EXPECT_EQ(line.find("Q6_K"), std::string::npos) << line;
}

}  // namespace
