// kernel_insn: runs ONE matmul kernel of the registry on one shape (or one
// row operation of the forward pass: op:shortconv, op:delta_net_conv, op:delta_rule
// and their scalar twins; the attention products op:dot_rows, op:weighted_rows
// and their F16 forms op:dot_rows_f16, op:weighted_rows_f16; op:softmax,
// op:silu_mul, op:rmsnorm), for
// counting instructions under qemu with ../shared/tools/insncount (timing under
// emulation means nothing; the instruction count is deterministic). Plain C++,
// no Google Benchmark, so it links statically for aarch64.
//
//   kernel_insn --kernel matmul_f32_q8_0_q4_0_4x4_dotprod --m 1 --n 4096 --k 4096 --reps 2
//   kernel_insn --kernel matmul_f32_q8_0_q4_0_4x4_dotprod_in_order ...  (its run_in_order)
//
// Setup (random data, quantized weights), pack_rhs once, pack_lhs --pack-reps
// times (default 1), then run() --reps times, single-threaded. Everything but
// the repeated calls is the same for every --reps, so
//   insns per run()      = (count(--reps 3) - count(--reps 1)) / 2
//   insns per pack_lhs() = (count(--pack-reps 3) - count(--pack-reps 1)) / 2
// The weights are 16 distinct quantized rows repeated over n (quantizing
// 4096 x 4096 K-quants with the reference would dominate the run under qemu);
// no kernel branches on the data, so the count does not depend on it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "engine/mixers/delta_net.h"
#include "engine/mixers/shortconv.h"
#include "engine/ops/ops.h"
#include "engine/ops/ops_isa.h"
#include "kernels/matmul.h"
#include "kernels/ref/matmul_ref.h"
#include "kernels/ref/type_ops.h"
#include "kernels/registry.h"

namespace {

const kernels::MatmulKernel* find_kernel(std::string_view name) {
  for (const kernels::MatmulKernel& k : kernels::ref::ref_matmul_kernels()) {
    if (name == k.name) return &k;
  }
  for (uint32_t id = 0; id < gguf::kGgmlTypeIdCount; ++id) {
    for (const kernels::MatmulKernel* k : kernels::matmul_table(static_cast<gguf::GgmlType>(id))) {
      if (name == k->name) return k;
      if (const kernels::MatmulKernel* in_order = kernels::in_order_variant(*k); in_order && name == in_order->name) {
        return in_order;
      }
    }
  }
  return nullptr;
}

// One line per kernel: its name, tier and the CPU features its run() executes
// (bench/cycles/cycle_table.py reads them to know which cores can run it); a
// kernel's in-order schedule as "<name>_in_order".
void list_kernels() {
  const auto print = [](const kernels::MatmulKernel& k) {
    std::string features;
    for (uint32_t f = 0; f < static_cast<uint32_t>(kernels::Feature::kCount); ++f) {
      if ((k.required_features >> f) & 1) features += std::string(" ") + kernels::feature_name(static_cast<kernels::Feature>(f));
    }
    std::printf("  %s %s%s\n", k.name, std::string(kernels::tier_name(k.tier)).c_str(), features.c_str());
  };
  for (const kernels::MatmulKernel& k : kernels::ref::ref_matmul_kernels()) print(k);
  for (uint32_t id = 0; id < gguf::kGgmlTypeIdCount; ++id) {
    for (const kernels::MatmulKernel* k : kernels::matmul_table(static_cast<gguf::GgmlType>(id))) {
      if (k->tier != kernels::Tier::ref) print(*k);
      if (const kernels::MatmulKernel* in_order = kernels::in_order_variant(*k)) print(*in_order);
    }
  }
}

int usage() {
  std::fprintf(stderr,
               "usage: kernel_insn --kernel NAME --m M --n N --k K [--reps R] [--pack-reps P]\n"
               "       kernel_insn --kernel op:shortconv|op:shortconv_ref --m TOKENS --n TAPS --k CHANNELS [--reps R]\n"
               "       kernel_insn --kernel op:delta_net_conv[_ref] --m TOKENS --n TAPS --k CHANNELS [--reps R]\n"
               "       kernel_insn --kernel op:delta_rule[_ref] --m TOKENS --k HEAD_DIM [--reps R]\n"
               "       kernel_insn --kernel op:dot_rows[_f16]|op:weighted_rows[_f16] --m QUERIES --n KEYS --k HEAD_DIM [--reps R]\n"
               "       kernel_insn --kernel op:softmax|op:silu_mul|op:rmsnorm --k N [--reps R]\n"
               "       kernel_insn --list\n");
  return 2;
}

// LFM2's short convolution (engine/ops/ops.h), the vector form chosen for
// this CPU or its scalar twin, on m tokens of k channels with n taps.
int run_shortconv(bool scalar, size_t m, size_t taps, size_t d, size_t reps) {
  if (m == 0 || d == 0 || taps < 2) return usage();
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> kernel(d * taps), state((taps - 1) * d), bcx(m * 3 * d), y(m * d);
  for (auto* v : {&kernel, &state, &bcx}) {
    for (float& x : *v) x = normal(rng);
  }
  const auto ds = static_cast<uint32_t>(d);
  for (size_t r = 0; r < reps; ++r) {
    if (scalar) {
      engine::shortconv_rows_ref(kernel.data(), static_cast<uint32_t>(taps), ds, 0, ds, state.data(), bcx.data(),
                                 static_cast<uint32_t>(m), y.data());
    } else {
      engine::ops::shortconv_rows(kernel.data(), static_cast<uint32_t>(taps), ds, 0, ds, state.data(), bcx.data(),
                                  static_cast<uint32_t>(m), y.data());
    }
  }
  double checksum = 0;
  for (float v : y) checksum += v;
  std::printf("shortconv%s m=%zu taps=%zu d=%zu reps=%zu (%s) checksum=%.6g\n", scalar ? "_ref" : "", m, taps, d, reps,
              scalar ? "scalar" : engine::ops::isa_ops().isa, checksum);
  return 0;
}

// Qwen3.5's DeltaNet convolution (m tokens, k channels, n taps) and one
// head's delta rule (m tokens of k x k state: the recurrence for one token,
// chunks of 64 for more), the vector forms chosen for this CPU or their
// scalar twins.
int run_delta_net(const std::string& name, size_t m, size_t taps, size_t d, size_t reps) {
  const bool scalar = name.ends_with("_ref");
  const bool conv = name.starts_with("op:delta_net_conv");
  if (m == 0 || d == 0 || (conv && taps < 2)) return usage();
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const auto mm = static_cast<uint32_t>(m), dd = static_cast<uint32_t>(d), tt = static_cast<uint32_t>(taps);
  std::vector<float> in(m * d), out(m * d), state(conv ? (taps - 1) * d : d * d), kernel(conv ? d * taps : 0);
  std::vector<float> q(m * d), k(m * d), beta(m, 0.5f), g(m, -0.1f);
  for (auto* v : {&in, &state, &kernel, &q, &k}) {
    for (float& x : *v) x = normal(rng) * 0.1f;
  }
  std::vector<float> scratch(engine::delta_rule_chunk_scratch(engine::DeltaNetMixer::kChunk, dd, dd));
  const engine::ops::DeltaRuleRows rows{q.data(), k.data(), d, in.data(), d, beta.data(), g.data(), 1, out.data(), d};
  for (size_t r = 0; r < reps; ++r) {
    if (conv && scalar) engine::delta_net_conv_ref(kernel.data(), tt, dd, 0, dd, state.data(), in.data(), mm, out.data());
    if (conv && !scalar) engine::ops::delta_net_conv(kernel.data(), tt, dd, 0, dd, state.data(), in.data(), mm, out.data());
    if (!conv && m == 1) (scalar ? engine::delta_rule_token_ref : engine::ops::delta_rule_token)(rows, mm, dd, dd, state.data());
    if (!conv && m > 1) {
      (scalar ? engine::delta_rule_chunk_ref : engine::ops::delta_rule_chunk)(rows, mm, dd, dd, engine::DeltaNetMixer::kChunk,
                                                                          state.data(), scratch.data());
    }
  }
  double checksum = 0;
  for (float v : out) checksum += v;
  std::printf("%s m=%zu taps=%zu d=%zu reps=%zu (%s) checksum=%.6g\n", name.c_str() + 3, m, taps, d, reps,
              scalar ? "scalar" : engine::ops::isa_ops().isa, checksum);
  return 0;
}

// Attention's row products (m query or weight rows against n key or value
// rows of k values, F32 or the F16 cache's rows) and the elementwise
// operations over k values, in the instruction set chosen for this CPU.
int run_row_op(const std::string& name, size_t m, size_t n, size_t k, size_t reps) {
  const bool products = name.starts_with("op:dot_rows") || name.starts_with("op:weighted_rows");
  if (k == 0 || (products && (m == 0 || n == 0))) return usage();
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> a(products ? m * std::max(n, k) : k), b(products ? n * k : k), out(products ? m * std::max(n, k) : k);
  for (auto* v : {&a, &b}) {
    for (float& x : *v) x = normal(rng) * 0.1f;
  }
  std::vector<uint16_t> b16(b.size());
  engine::ops::fp32_to_fp16(b.data(), b16.data(), b.size());
  for (size_t r = 0; r < reps; ++r) {
    if (name == "op:dot_rows") engine::ops::dot_rows(a.data(), k, m, b.data(), k, n, k, 0.125f, out.data(), n);
    if (name == "op:dot_rows_f16") engine::ops::dot_rows(a.data(), k, m, b16.data(), k, n, k, 0.125f, out.data(), n);
    if (name == "op:weighted_rows") engine::ops::weighted_rows(a.data(), n, m, b.data(), k, n, k, out.data(), k);
    if (name == "op:weighted_rows_f16") engine::ops::weighted_rows(a.data(), n, m, b16.data(), k, n, k, out.data(), k);
    if (name == "op:softmax") engine::ops::softmax(out.data(), k);
    if (name == "op:silu_mul") engine::ops::silu_mul(out.data(), a.data(), b.data(), k);
    if (name == "op:rmsnorm") engine::ops::rmsnorm(out.data(), a.data(), b.data(), k, 1e-6f);
  }
  double checksum = 0;
  for (float v : out) checksum += v;
  std::printf("%s m=%zu n=%zu k=%zu reps=%zu (%s) checksum=%.6g\n", name.c_str() + 3, m, n, k, reps,
              engine::ops::isa_ops().isa, checksum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string name;
  size_t m = 1, n = 4096, k = 4096, reps = 1, pack_reps = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--list") {
      list_kernels();
      return 0;
    }
    if (i + 1 >= argc) return usage();
    const char* value = argv[++i];
    if (arg == "--kernel") {
      name = value;
    } else if (arg == "--m") {
      m = std::strtoull(value, nullptr, 10);
    } else if (arg == "--n") {
      n = std::strtoull(value, nullptr, 10);
    } else if (arg == "--k") {
      k = std::strtoull(value, nullptr, 10);
    } else if (arg == "--reps") {
      reps = std::strtoull(value, nullptr, 10);
    } else if (arg == "--pack-reps") {
      pack_reps = std::strtoull(value, nullptr, 10);
    } else {
      return usage();
    }
  }
  if (name == "op:shortconv" || name == "op:shortconv_ref") return run_shortconv(name.ends_with("_ref"), m, n, k, reps);
  if (name.starts_with("op:delta_net_conv") || name.starts_with("op:delta_rule")) return run_delta_net(name, m, n, k, reps);
  for (const char* op : {"op:dot_rows", "op:dot_rows_f16", "op:weighted_rows", "op:weighted_rows_f16", "op:softmax",
                         "op:silu_mul", "op:rmsnorm"}) {
    if (name == op) return run_row_op(name, m, n, k, reps);
  }
  const kernels::MatmulKernel* kern = find_kernel(name);
  if (kern == nullptr) {
    std::fprintf(stderr, "kernel_insn: no kernel named '%s' in this build (--list shows them)\n", name.c_str());
    return 2;
  }
  if (!kernels::can_run(*kern, kernels::host_cpu_features())) {
    std::fprintf(stderr, "kernel_insn: %s cannot run on this CPU (%s)\n", kern->name,
                 kernels::host_cpu_features().describe().c_str());
    return 2;
  }
  const auto row_bytes = gguf::row_bytes(kern->rhs_type, k);
  if (m == 0 || n == 0 || !row_bytes) {
    std::fprintf(stderr, "kernel_insn: k=%zu is not a multiple of %s's block size\n", k,
                 std::string(gguf::type_name(kern->rhs_type)).c_str());
    return 2;
  }

  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(m * k);  // (m, k) activations
  for (float& v : x) v = normal(rng);
  constexpr size_t kDistinctRows = 16;
  std::vector<uint8_t> w(n * *row_bytes);  // (n rows) weights, GGUF layout
  {
    std::vector<float> row(k);
    const kernels::ref::TypeOps* ops = kernels::ref::type_ops(kern->rhs_type);
    for (size_t j = 0; j < std::min(n, kDistinctRows); ++j) {
      for (float& v : row) v = normal(rng) * 0.05f;
      ops->quantize_row(row.data(), w.data() + j * *row_bytes, k);
    }
    for (size_t j = kDistinctRows; j < n; ++j)
      std::memcpy(&w[j * *row_bytes], &w[j % kDistinctRows * *row_bytes], *row_bytes);
  }

  const uint8_t* rhs = w.data();
  std::vector<uint8_t> rhs_packed;
  if (kern->pack_rhs != nullptr) {
    rhs_packed.resize(kern->rhs_packed_size(n, k));
    kern->pack_rhs(n, k, w.data(), rhs_packed.data());
    rhs = rhs_packed.data();
  }
  std::vector<uint8_t> lhs(kern->lhs_packed_size(m, k));
  for (size_t r = 0; r < pack_reps; ++r) kern->pack_lhs(m, k, x.data(), k, lhs.data());

  std::vector<float> y(m * n);  // (m, n) outputs
  for (size_t r = 0; r < reps; ++r) kern->run(m, n, k, lhs.data(), rhs, y.data(), n);

  double checksum = 0;
  for (float v : y) checksum += v;
  std::printf("%s m=%zu n=%zu k=%zu reps=%zu pack_reps=%zu checksum=%.6g\n", kern->name, m, n, k, reps, pack_reps,
              checksum);
  return 0;
}
