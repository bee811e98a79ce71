#include "tests/fuzz/model_synth.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "gguf/ggml_types.h"
#include "kernels/ref/type_ops.h"
#include "tests/support/gguf_bytes.h"

namespace engine_fuzz {
namespace {

using engine_test::GgufBytes;
using gguf::GgmlType;

// Weight types, the plain ones first: a zero byte picks F32.
constexpr GgmlType kTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::Q8_0, GgmlType::Q4_0,
                               GgmlType::BF16, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                               GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};
constexpr uint32_t kTypeCount = sizeof(kTypes) / sizeof(kTypes[0]);

uint32_t block_of(GgmlType t) { return gguf::ggml_type_traits(static_cast<uint32_t>(t))->block_size; }

struct Tensor {
  std::string name;
  std::vector<uint64_t> ne;
  GgmlType type;
  bool norm;  // values around 1 (a norm's weight) rather than around 0
};

// A u32 hyperparameter: as computed (most bytes), missing, arbitrary, a
// string, or off by one.
void hyper(GgufBytes& b, uint64_t& n_kv, FuzzInput& in, const std::string& key, uint32_t value) {
  const uint8_t mode = in.byte();
  if (mode >= 224 && mode < 240) return;
  ++n_kv;
  if (mode >= 248 && mode < 252) {
    b.key(key, engine_test::kString).str(std::to_string(value));
    return;
  }
  if (mode >= 240 && mode < 248) value = in.u32();
  if (mode >= 252) value += mode & 1 ? 1 : static_cast<uint32_t>(-1);
  b.key(key, engine_test::kU32).u32(value);
}

// Values of one tensor: smooth pseudo-random (most bytes), zeros, one special
// value (NaN, Inf, huge, denormal) among them, or the input's own bytes.
std::vector<uint8_t> tensor_data(const Tensor& t, FuzzInput& in) {
  uint64_t n = 1;
  for (uint64_t d : t.ne) n *= d;
  const uint64_t bytes = *gguf::row_bytes(t.type, t.ne[0]) * (n / t.ne[0]);
  std::vector<uint8_t> out(bytes);
  const uint8_t mode = in.byte();
  if (mode >= 240) {
    const auto raw = in.rest();
    for (uint64_t i = 0; i < bytes && !raw.empty(); ++i) out[i] = raw[i % raw.size()];
    return out;
  }
  // A few distinct rows, repeated: quantizing every row with the reference
  // K-quant search cost a second per input (measured), for nothing the
  // loader would see.
  constexpr uint64_t kDistinctRows = 3;
  const uint64_t row_len = t.ne[0];
  const uint64_t rows = n / row_len;
  const uint64_t distinct = std::min(rows, kDistinctRows);
  std::vector<float> x(distinct * row_len, 0.0f);
  if (mode < 200 || mode >= 220) {
    uint32_t state = 0x9E3779B9u;
    const float scale = t.norm ? 0.1f : 1.0f / std::sqrt(static_cast<float>(row_len));
    for (float& v : x) {
      state = state * 1664525u + 1013904223u;
      v = (t.norm ? 1.0f : 0.0f) + scale * (static_cast<float>(state >> 8) / 8388608.0f - 1.0f);
    }
  }
  uint64_t special_at = UINT64_MAX;
  float special = 0.0f;
  if (mode >= 220) {
    constexpr float kSpecial[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(), 3e38f, 1e-45f, 65504.0f};
    special_at = in.u32() % n;
    special = kSpecial[in.range(0, 5)];
  }
  const uint64_t row_bytes = bytes / rows;
  const kernels::ref::TypeOps* ops = kernels::ref::type_ops(t.type);
  // Even a few rows through the reference K-quant search cost ~0.2 s under
  // the fuzz build's instrumentation: the quantized rows are cached by what
  // determines them (the target stays a pure function of its input). The
  // values do not depend on the input, so the cache stays small and stops
  // growing early: a run that allocates without freeing makes libFuzzer
  // search for leaks, which cost 30% of the time while the cache grew.
  static std::map<std::tuple<GgmlType, uint64_t, uint64_t, bool, bool>, std::vector<uint8_t>> cache;
  const auto key = std::tuple{t.type, row_len, distinct, mode >= 200 && mode < 220, t.norm};
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::vector<uint8_t> q(distinct * row_bytes);
    ops->quantize_row(x.data(), q.data(), distinct * row_len);
    it = cache.emplace(key, std::move(q)).first;
  }
  std::copy(it->second.begin(), it->second.end(), out.begin());
  for (uint64_t r = distinct; r < rows; ++r) {
    std::copy_n(out.data() + (r % distinct) * row_bytes, row_bytes, out.data() + r * row_bytes);
  }
  if (special_at != UINT64_MAX) {  // the special value's whole row, quantized again
    const uint64_t r = special_at / row_len;
    std::vector<float> row(x.begin() + static_cast<long>((r % distinct) * row_len),
                           x.begin() + static_cast<long>((r % distinct + 1) * row_len));
    row[special_at % row_len] = special;
    ops->quantize_row(row.data(), out.data() + r * row_bytes, row_len);
  }
  return out;
}

void vocabulary(GgufBytes& b, uint64_t& n_kv, FuzzInput& in, uint32_t n_vocab) {
  const uint8_t mode = in.byte();
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  for (uint32_t i = 3; i < n_vocab; ++i) {
    const uint32_t k = i - 3;
    tokens.push_back((k % 2 ? "\xE2\x96\x81" : "") + std::string(1, static_cast<char>('a' + k / 2 % 26)) +
                     std::string(k / 52, 'z'));
  }
  if (mode == 240 && n_vocab > 4) tokens[4] = tokens[3];       // duplicate
  if (mode == 241 && n_vocab > 3) tokens[3] = "\xC3\x28";      // ill-formed UTF-8
  if (mode == 242) tokens.push_back(std::string(in.string(64)));  // one more than n_vocab, any bytes
  if (mode != 243) {
    ++n_kv;
    b.key("tokenizer.ggml.model", engine_test::kString).str(mode == 244 ? "gpt2" : "llama");
  }
  if (mode != 245) {
    ++n_kv;
    b.key("tokenizer.ggml.tokens", engine_test::kArray).u32(engine_test::kString).u64(tokens.size());
    for (const std::string& t : tokens) b.str(t);
  }
  const uint64_t n_scores = mode == 246 ? tokens.size() + 1 : tokens.size();
  ++n_kv;
  b.key("tokenizer.ggml.scores", engine_test::kArray).u32(engine_test::kF32).u64(n_scores);
  for (uint64_t i = 0; i < n_scores; ++i) {
    b.put<float>(mode == 247 && i == 3 ? std::numeric_limits<float>::quiet_NaN() : -static_cast<float>(i));
  }
  ++n_kv;
  b.key("tokenizer.ggml.token_type", engine_test::kArray).u32(engine_test::kI32).u64(tokens.size());
  for (uint64_t i = 0; i < tokens.size(); ++i) b.put<int32_t>(i == 0 ? 2 : i < 3 ? 3 : mode == 248 ? 9 : 1);
  ++n_kv;
  b.key("tokenizer.ggml.bos_token_id", engine_test::kU32).u32(mode == 249 ? in.u32() : 1);
  ++n_kv;
  b.key("tokenizer.ggml.eos_token_id", engine_test::kU32).u32(2);
}

}  // namespace

std::vector<uint8_t> synthesize_model(FuzzInput& in) {
  const uint32_t arch = in.range(0, 3);  // llama, qwen2, qwen3, or a name from the input
  const GgmlType wtype = kTypes[in.byte() % kTypeCount];
  const uint32_t block = block_of(wtype);
  // Small sizes keep a forward pass fast; quantized types need rows of whole blocks.
  const uint32_t n_head = uint32_t{1} << in.range(0, 2);
  const uint32_t n_head_kv = std::max(1u, n_head >> in.range(0, 2));
  const uint32_t n_embd = block == 1 ? n_head * 2 * in.range(1, 4) : block;
  const uint32_t head_dim = n_embd / n_head;
  const uint32_t n_ff = block == 1 ? in.range(1, 24) : block;
  const uint32_t n_layer = in.range(1, 2);
  const uint32_t n_vocab = in.range(4, 40);
  const bool tied = in.flag();
  const std::string arch_name = arch == 0 ? "llama" : arch == 1 ? "qwen2" : arch == 2 ? "qwen3" : std::string(in.string(16));

  GgufBytes meta;
  uint64_t n_kv = 1;
  meta.key("general.architecture", engine_test::kString).str(arch_name);
  const std::string p = arch_name + ".";
  hyper(meta, n_kv, in, p + "context_length", in.range(0, 64));
  hyper(meta, n_kv, in, p + "embedding_length", n_embd);
  hyper(meta, n_kv, in, p + "block_count", n_layer);
  hyper(meta, n_kv, in, p + "feed_forward_length", n_ff);
  hyper(meta, n_kv, in, p + "attention.head_count", n_head);
  hyper(meta, n_kv, in, p + "attention.head_count_kv", n_head_kv);
  const uint8_t optional = in.byte();  // bit flags: which optional keys appear
  if (optional & 1) hyper(meta, n_kv, in, p + "attention.key_length", head_dim);
  if (optional & 2) hyper(meta, n_kv, in, p + "attention.value_length", head_dim);
  if (optional & 4) hyper(meta, n_kv, in, p + "rope.dimension_count", head_dim);
  if (optional & 8) hyper(meta, n_kv, in, p + "vocab_size", n_vocab);
  if (optional & 16) {
    n_kv += 2;
    meta.key(p + "rope.scaling.type", engine_test::kString).str(optional & 32 ? "linear" : "yarn");
    meta.key(p + "rope.scaling.factor", engine_test::kF32).put<float>(in.f32());
  }
  n_kv += 2;
  meta.key(p + "rope.freq_base", engine_test::kF32).put<float>(optional & 64 ? in.f32() : 10000.0f);
  meta.key(p + "attention.layer_norm_rms_epsilon", engine_test::kF32).put<float>(optional & 128 ? in.f32() : 1e-5f);
  vocabulary(meta, n_kv, in, n_vocab);

  // The tensors a consistent model of this shape has.
  auto matrix_type = [&](uint64_t in_dim) { return in_dim % block == 0 ? wtype : GgmlType::F32; };
  std::vector<Tensor> tensors;
  auto matrix = [&](std::string name, uint64_t in_dim, uint64_t out_dim) {
    tensors.push_back({std::move(name), {in_dim, out_dim}, matrix_type(in_dim), false});
  };
  auto vector = [&](std::string name, uint64_t n, bool norm) { tensors.push_back({std::move(name), {n}, GgmlType::F32, norm}); };
  matrix("token_embd.weight", n_embd, n_vocab);
  vector("output_norm.weight", n_embd, true);
  if (!tied) matrix("output.weight", n_embd, n_vocab);
  if (arch == 0 && (optional & 4)) vector("rope_freqs.weight", head_dim / 2, true);
  for (uint32_t l = 0; l < n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    vector(b + "attn_norm.weight", n_embd, true);
    vector(b + "ffn_norm.weight", n_embd, true);
    matrix(b + "attn_q.weight", n_embd, n_embd);
    matrix(b + "attn_k.weight", n_embd, uint64_t{head_dim} * n_head_kv);
    matrix(b + "attn_v.weight", n_embd, uint64_t{head_dim} * n_head_kv);
    matrix(b + "attn_output.weight", n_embd, n_embd);
    matrix(b + "ffn_gate.weight", n_embd, n_ff);
    matrix(b + "ffn_up.weight", n_embd, n_ff);
    matrix(b + "ffn_down.weight", n_ff, n_embd);
    if (arch == 1) {
      vector(b + "attn_q.bias", n_embd, false);
      vector(b + "attn_k.bias", uint64_t{head_dim} * n_head_kv, false);
      vector(b + "attn_v.bias", uint64_t{head_dim} * n_head_kv, false);
    }
    if (arch == 2) {
      vector(b + "attn_q_norm.weight", head_dim, true);
      vector(b + "attn_k_norm.weight", head_dim, true);
    }
  }

  // Bend some of them: missing, a dimension off, transposed, another type.
  std::vector<Tensor> kept;
  for (Tensor& t : tensors) {
    const uint8_t mode = in.byte();
    if (mode >= 232 && mode < 240) continue;
    if (mode >= 240 && mode < 248) t.ne[in.range(0, static_cast<uint32_t>(t.ne.size() - 1))] += in.range(1, 2);
    if (mode >= 248 && mode < 252 && t.ne.size() == 2) std::swap(t.ne[0], t.ne[1]);
    if (mode >= 252 && mode < 254) t.type = kTypes[in.byte() % kTypeCount];
    if (mode >= 254) t.ne.push_back(in.range(1, 2));
    if (t.ne[0] % block_of(t.type) != 0) t.type = GgmlType::F32;  // the header must stay well formed
    kept.push_back(std::move(t));
  }

  GgufBytes file;
  file.header(3, kept.size(), n_kv);
  file.bytes.insert(file.bytes.end(), meta.bytes.begin(), meta.bytes.end());
  std::vector<std::vector<uint8_t>> data;
  uint64_t offset = 0;
  for (const Tensor& t : kept) {
    data.push_back(tensor_data(t, in));
    file.str(t.name).u32(static_cast<uint32_t>(t.ne.size()));
    for (uint64_t d : t.ne) file.u64(d);
    file.u32(static_cast<uint32_t>(t.type)).u64(offset);
    offset += (data.back().size() + 31) / 32 * 32;
  }
  file.pad_to(32);
  for (const auto& d : data) {
    file.bytes.insert(file.bytes.end(), d.begin(), d.end());
    file.pad_to(32);
  }
  return file.bytes;
}

}  // namespace engine_fuzz
