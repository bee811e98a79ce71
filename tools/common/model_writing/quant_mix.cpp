#include "tools/common/model_writing/quant_mix.h"

#include <algorithm>
#include <cctype>
#include <numeric>

#include "engine/arch/quant_quirks.h"

namespace tools {
namespace {

using gguf::GgmlType;

// llama_ftype values (llama.h) and the type each makes most tensors.
constexpr QuantTarget kTargets[] = {
    {"F32", GgmlType::F32, 0, Mix::none},     {"F16", GgmlType::F16, 1, Mix::none},
    {"BF16", GgmlType::BF16, 32, Mix::none},  {"Q8_0", GgmlType::Q8_0, 7, Mix::none},
    {"Q4_0", GgmlType::Q4_0, 2, Mix::none},   {"Q4_1", GgmlType::Q4_1, 3, Mix::none},
    {"Q5_0", GgmlType::Q5_0, 8, Mix::none},   {"Q5_1", GgmlType::Q5_1, 9, Mix::none},
    {"Q4_K", GgmlType::Q4_K, 14, Mix::none},  // recorded as MOSTLY_Q4_K_S, the ftype whose default is Q4_K
    {"Q5_K", GgmlType::Q5_K, 16, Mix::none},  // recorded as MOSTLY_Q5_K_S
    {"Q6_K", GgmlType::Q6_K, 18, Mix::none},  {"Q4_K_M", GgmlType::Q4_K, 15, Mix::q4_k_m},
    {"Q5_K_M", GgmlType::Q5_K, 17, Mix::q5_k_m},
    {"Q3_K", GgmlType::Q3_K, 11, Mix::none},  // recorded as MOSTLY_Q3_K_S
    {"Q2_K", GgmlType::Q2_K, 10, Mix::q2_k},  {"Q2_K_S", GgmlType::Q2_K, 21, Mix::q2_k_s},
    {"Q3_K_S", GgmlType::Q3_K, 11, Mix::q3_k_s},
    {"Q3_K_M", GgmlType::Q3_K, 12, Mix::q3_k_m}, {"Q3_K_L", GgmlType::Q3_K, 13, Mix::q3_k_l},
    {"IQ4_NL", GgmlType::IQ4_NL, 25, Mix::iq4_nl}, {"IQ4_XS", GgmlType::IQ4_XS, 30, Mix::iq4_xs},
};

enum class Category { token_embd, output, attn_q, attn_k, attn_v, attn_qkv, attn_kv_b, attn_output, ffn_down, other };

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

Category category(std::string_view name) {
  if (name == "output.weight") return Category::output;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Category::token_embd;
  if (contains(name, "attn_qkv.weight")) return Category::attn_qkv;
  if (contains(name, "attn_kv_b.weight")) return Category::attn_kv_b;
  if (contains(name, "attn_v.weight")) return Category::attn_v;
  if (contains(name, "attn_k.weight")) return Category::attn_k;
  if (contains(name, "attn_q.weight")) return Category::attn_q;
  if (contains(name, "attn_output.weight")) return Category::attn_output;
  if (contains(name, "ffn_down")) return Category::ffn_down;
  return Category::other;
}

bool is_attn_v_like(Category c) { return c == Category::attn_v || c == Category::attn_qkv || c == Category::attn_kv_b; }

// ggml_n_dims: trailing dimensions of size 1 do not count.
uint32_t effective_dims(const TensorDesc& t) {
  uint32_t n = 4;
  while (n > 1 && t.ne[n - 1] == 1) --n;
  return n;
}

// tensor_allows_quantization: 2+ dims, a "weight", and none of the small or
// precision-critical tensors llama.cpp keeps as they are.
bool allows_quantization(const TensorDesc& t) {
  if (effective_dims(t) < 2) return false;
  const std::string_view n = t.name;
  if (n.size() < 6 || n.substr(n.size() - 6) != "weight") return false;
  static constexpr std::string_view kKept[] = {
      "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel", "per_layer_model_proj",
      "ssm_conv1d", "shortconv.conv.weight", "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight",
      "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight",
      "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
      "time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight",
      "indexer.k_proj.weight", "indexer.q_proj.weight", ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_",
      ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd"};
  for (std::string_view part : kKept) {
    if (contains(n, part)) return false;
  }
  return n != "position_embd.weight" && n != "token_types.weight";
}

bool use_more_bits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

// "blk.12.attn_v.weight" -> 12; -1 outside blocks (sscanf("blk.%d.") semantics).
int layer_of(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return -1;
  size_t i = 4;
  int layer = 0;
  bool digits = false;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && layer < 1000000) {
    layer = layer * 10 + (name[i++] - '0');
    digits = true;
  }
  return digits ? layer : -1;
}

uint32_t block_size(GgmlType t) { return gguf::traits(t).block_size; }

struct MixState {
  const QuantTarget& target;
  const MixModel& model;
  bool has_imatrix = false;
  bool tied = true;  // no output.weight: token_embd is the LM head
  int n_attention_wv = 0, i_attention_wv = 0;
  int n_ffn_down = 0, i_ffn_down = 0;

  const engine::arch::QuantQuirks quirks = engine::arch::quant_quirks(model.arch);

  bool is_70b() const { return quirks.llama_70b_attn_v && model.n_layer == 80 && model.n_head != model.n_head_kv; }

  int n_gqa() const { return model.n_head_kv == 0 ? 0 : static_cast<int>(model.n_head / model.n_head_kv); }

  // llama_tensor_get_type_impl, for the targets offered here.
  GgmlType mix_type(GgmlType t, const TensorDesc& d, Category c) {
    const Mix mix = target.mix;
    const bool q4km = mix == Mix::q4_k_m, q5km = mix == Mix::q5_k_m;
    const bool iq4 = mix == Mix::iq4_nl || mix == Mix::iq4_xs;
    const bool falcon = quirks.falcon_rules;
    if (c == Category::output || (tied && c == Category::token_embd)) {
      if (falcon || d.ne[0] % block_size(t) != 0) {
        t = GgmlType::Q8_0;
      } else if (t != GgmlType::Q8_0) {
        t = GgmlType::Q6_K;
      }
    } else if (c == Category::token_embd) {
      // unchanged for every target offered here
    } else if (is_attn_v_like(c)) {
      if (mix == Mix::q2_k) {
        t = n_gqa() >= 4 ? GgmlType::Q4_K : GgmlType::Q3_K;
      } else if (mix == Mix::q2_k_s && n_gqa() >= 4) {
        t = GgmlType::Q4_K;
      } else if (mix == Mix::q3_k_m) {
        t = i_attention_wv < 2 ? GgmlType::Q5_K : GgmlType::Q4_K;
      } else if (mix == Mix::q3_k_l) {
        t = GgmlType::Q5_K;
      } else if (iq4 && n_gqa() >= 4) {
        t = GgmlType::Q5_K;
      } else if ((q4km || q5km) && use_more_bits(i_attention_wv, n_attention_wv)) {
        t = GgmlType::Q6_K;
      }
      if (is_70b() && (t == GgmlType::Q3_K || t == GgmlType::Q4_K)) t = GgmlType::Q5_K;
      if (model.n_expert == 8) t = GgmlType::Q8_0;
      ++i_attention_wv;
    } else if (c == Category::attn_k) {
      if (model.n_expert == 8) t = GgmlType::Q8_0;
    } else if (c == Category::ffn_down) {
      t = ffn_down_type(t, d, mix, falcon);
      ++i_ffn_down;
    } else if (c == Category::attn_output) {
      t = attn_output_type(t, mix, falcon);
    }
    return t;
  }

  GgmlType ffn_down_type(GgmlType t, const TensorDesc& d, Mix mix, bool falcon) const {
    int i_layer = i_ffn_down;
    const int n = n_ffn_down;
    if (model.n_expert > 1) {  // experts are not in layer order: read the layer from the name
      i_layer = layer_of(d.name);
      if (i_layer < 0 || i_layer >= n) throw MixError("tensor '" + d.name + "': cannot tell its layer");
    }
    switch (mix) {
      case Mix::q2_k: return GgmlType::Q3_K;
      case Mix::q2_k_s: return i_layer < n / 8 ? GgmlType::Q4_K : t;
      case Mix::q3_k_m:
        return i_layer < n / 16                            ? GgmlType::Q5_K
               : !falcon || use_more_bits(i_layer, n) ? GgmlType::Q4_K
                                                           : GgmlType::Q3_K;
      case Mix::q3_k_l: return falcon ? GgmlType::Q4_K : GgmlType::Q5_K;
      case Mix::q4_k_m:
        if (falcon) {
          return i_layer < n / 16 ? GgmlType::Q6_K : use_more_bits(i_layer, n) ? GgmlType::Q5_K : GgmlType::Q4_K;
        }
        return use_more_bits(i_layer, n) ? GgmlType::Q6_K : t;
      case Mix::iq4_nl:
      case Mix::iq4_xs: return i_layer < n / 8 && !has_imatrix ? GgmlType::Q5_K : t;
      case Mix::q5_k_m: return use_more_bits(i_layer, n) ? GgmlType::Q6_K : t;
      case Mix::none:
        // With an importance matrix, llama.cpp guards the first ffn_down
        // layers of Q4_0 / Q5_0 files with the offset types.
        if (has_imatrix && i_layer < n / 8 && target.default_type == GgmlType::Q4_0) return GgmlType::Q4_1;
        if (has_imatrix && i_layer < n / 8 && target.default_type == GgmlType::Q5_0) return GgmlType::Q5_1;
        return t;
      default: return t;
    }
  }

  GgmlType attn_output_type(GgmlType t, Mix mix, bool falcon) const {
    if (falcon) return mix == Mix::q3_k_l ? GgmlType::Q4_K : t;
    if (model.n_expert == 8) {
      const bool bumped = mix == Mix::q2_k || mix == Mix::q3_k_s || mix == Mix::q3_k_m || mix == Mix::iq4_nl ||
                          mix == Mix::q4_k_m || mix == Mix::iq4_xs;
      return bumped ? GgmlType::Q5_K : t;
    }
    switch (mix) {
      case Mix::q2_k: return GgmlType::Q3_K;
      case Mix::q3_k_m: return GgmlType::Q4_K;
      case Mix::q3_k_l: return GgmlType::Q5_K;
      default: return t;
    }
  }
};

// tensor_type_fallback: a row length the type's blocks do not divide.
GgmlType fallback(const TensorDesc& d, GgmlType t, std::string& why) {
  const uint64_t n = d.ne[0];
  if (n % block_size(t) == 0) return t;
  GgmlType f;
  switch (t) {
    case GgmlType::Q2_K:
    case GgmlType::Q3_K: f = GgmlType::Q4_0; break;
    case GgmlType::Q4_K: f = GgmlType::Q5_0; break;
    case GgmlType::Q5_K: f = GgmlType::Q5_1; break;
    case GgmlType::Q6_K: f = GgmlType::Q8_0; break;
    case GgmlType::IQ4_XS: f = GgmlType::IQ4_NL; break;
    default:
      throw MixError("tensor '" + d.name + "': its row length " + std::to_string(n) + " is not a multiple of " +
                     std::to_string(block_size(t)) + ", the block size of " + std::string(gguf::type_name(t)) +
                     ", which has no fallback type (as in llama.cpp); F16 and BF16 fit any row length");
  }
  if (n % block_size(f) != 0) f = GgmlType::F16;
  why = "row length " + std::to_string(n) + " is not a multiple of " + std::to_string(block_size(t)) + ": " +
        std::string(gguf::type_name(t)) + " -> " + std::string(gguf::type_name(f));
  return f;
}

}  // namespace

const QuantTarget* find_target(std::string_view name) {
  for (const QuantTarget& t : kTargets) {
    if (t.name.size() == name.size() &&
        std::equal(name.begin(), name.end(), t.name.begin(),
                   [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; })) {
      return &t;
    }
  }
  return nullptr;
}

std::span<const QuantTarget> all_targets() { return kTargets; }

std::string target_names() {
  std::string s;
  for (const QuantTarget& t : kTargets) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

std::string unknown_target_message(std::string_view name) {
  return "unknown type '" + std::string(name) + "'; known types: " + target_names();
}

double bits_per_weight(GgmlType type) {
  const gguf::GgmlTypeTraits& tr = gguf::traits(type);
  return tr.block_size == 0 ? 0.0 : tr.block_bytes * 8.0 / tr.block_size;
}

std::vector<size_t> llama_cpp_order(std::span<const TensorDesc> tensors) {
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int la = layer_of(tensors[a].name), lb = layer_of(tensors[b].name);
    if (la != lb) return la < lb;
    return tensors[a].name < tensors[b].name;
  });
  return order;
}

bool requires_imatrix(const QuantTarget& target, std::string_view name, GgmlType type) {
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight" || name == "output.weight") return false;
  return type == GgmlType::Q2_K && target.mix == Mix::q2_k_s;
}

std::string imatrix_needed(const QuantTarget& target, std::span<const TensorDesc> tensors,
                           std::span<const TypeChoice> choices) {
  const TensorDesc* first = nullptr;
  size_t n = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (choices[i].quantizable && requires_imatrix(target, tensors[i].name, choices[i].type) && n++ == 0) {
      first = &tensors[i];
    }
  }
  if (first == nullptr) return {};
  return std::string(target.name) + " needs an importance matrix: tensor '" + first->name + "'" +
         (n > 1 ? " (and " + std::to_string(n - 1) + " more)" : std::string()) + " would be " +
         std::string(gguf::type_name(GgmlType::Q2_K)) + ", which without one comes out unusable (llama-quantize refuses it too)";
}

std::vector<TypeChoice> choose_types(const QuantTarget& target, bool pure, const MixModel& model,
                                     std::span<const TensorDesc> tensors, bool has_imatrix) {
  MixState s{target, model, has_imatrix};
  for (const TensorDesc& d : tensors) {
    const Category c = category(d.name);
    if (c == Category::output) s.tied = false;
    if (is_attn_v_like(c)) ++s.n_attention_wv;
    if (c == Category::ffn_down) ++s.n_ffn_down;
  }
  if (model.n_layer > 0) s.n_ffn_down = static_cast<int>(model.n_layer);

  const bool quantized_target = gguf::traits(target.default_type).quantized;
  std::vector<TypeChoice> out(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorDesc& d = tensors[i];
    TypeChoice& choice = out[i];
    choice.quantizable = allows_quantization(d);
    if (!choice.quantizable) {
      choice.type = d.type;
      continue;
    }
    GgmlType t = target.default_type;
    if (quantized_target) {
      if (!pure) t = s.mix_type(t, d, category(d.name));
      t = fallback(d, t, choice.fallback);
    }
    choice.type = t;
  }
  return out;
}

}  // namespace tools
