#include "tools/common/model_writing/synth_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numbers>

#include "engine/arch/registry.h"
#include "engine/support/memory.h"
#include "engine/threads/thread_pool.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "tools/common/model_writing/quant_mix.h"
#include "tools/common/model_writing/row_stream.h"
#include "tools/common/model_writing/synth_tensors.h"
#include "tools/common/plural.h"

namespace tools {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// SplitMix64's finalizer: a bijective 64-bit mix.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t row_key(uint64_t key, uint64_t row) { return mix64(key ^ mix64(row + kGolden)); }

// Irwin-Hall(4) of 16-bit uniforms, centred and scaled to variance 1:
// sd = sqrt(4 * (65536^2 - 1) / 12).
const double kInvSd = 1.0 / std::sqrt((65536.0 * 65536.0 - 1.0) / 3.0);

inline double deviate(uint64_t rkey, uint64_t i) {
  const uint64_t b = mix64(rkey + (i + 1) * kGolden);
  const int64_t sum = static_cast<int64_t>((b & 0xFFFF) + ((b >> 16) & 0xFFFF) + ((b >> 32) & 0xFFFF) + (b >> 48));
  return static_cast<double>(sum - 131070) * kInvSd;
}

// One tensor to generate: value = offset + scale * deviate, or fixed values.
struct GenTensor {
  TensorDesc desc;
  double offset = 0.0;
  double scale = 0.0;
  std::vector<float> fixed;  // rope_freqs: computed, not random
};

// convert_hf_to_gguf.py (LlamaModel): per frequency pair of the n_rot
// rotated dimensions, 1 above the high frequency cutoff, `factor` below the
// low one, smoothly between.
std::vector<float> llama3_rope_factors(const SynthShape& s, uint32_t n_rot) {
  std::vector<float> out;
  const double low_wavelen = s.rope_original_ctx / static_cast<double>(s.rope_low_freq_factor);
  const double high_wavelen = s.rope_original_ctx / static_cast<double>(s.rope_high_freq_factor);
  for (uint32_t i = 0; i < n_rot; i += 2) {
    const double freq = 1.0 / std::pow(static_cast<double>(s.rope_base), i / static_cast<double>(n_rot));
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double f;
    if (wavelen < high_wavelen) {
      f = 1.0;
    } else if (wavelen > low_wavelen) {
      f = s.rope_factor;
    } else {
      const double smooth = (s.rope_original_ctx / wavelen - s.rope_low_freq_factor) /
                            (s.rope_high_freq_factor - s.rope_low_freq_factor);
      f = 1.0 / ((1.0 - smooth) / s.rope_factor + smooth);
    }
    out.push_back(static_cast<float>(f));
  }
  return out;
}

// convert_hf_to_gguf.py (Gemma4Model): the global layers rotate the first
// partial_rotary_factor of each head; the other pairs get a divisor of 1e30,
// which leaves them unrotated (a frequency of ~0).
std::vector<float> proportional_rope_factors(const SynthShape& s, uint64_t pairs) {
  const auto rotated = static_cast<uint64_t>(static_cast<double>(2 * pairs) * s.rope_partial_global / 2);
  std::vector<float> out(pairs, 1e30f);
  std::fill(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(std::min(rotated, pairs)), 1.0f);
  return out;
}

// LongRoPE's factors are learned; synth writes a smooth ramp of the right
// kind: the short ones near 1 (1 .. 1.1), the long ones from 1 for the fastest
// pair to the context's scale n_ctx / original for the slowest, the shape
// of Phi-3.5's and Phi-4-mini's published long factors.
std::vector<float> longrope_factors(const SynthShape& s, uint32_t n_pairs, bool long_factors) {
  const double scale = s.rope_original_ctx != 0 ? std::max(1.0, static_cast<double>(s.n_ctx) / s.rope_original_ctx) : 1.0;
  std::vector<float> out;
  for (uint32_t j = 0; j < n_pairs; ++j) {
    const double t = n_pairs > 1 ? j / static_cast<double>(n_pairs - 1) : 0.0;
    out.push_back(static_cast<float>(long_factors ? std::pow(scale, t) : 1.0 + 0.1 * t));
  }
  return out;
}

// A DeltaNet's decay rates a = -exp(A_log), one per value head: a ramp from
// -0.1 to -1, so that with softplus(alpha + dt_bias) near 0.7 the heads keep
// their state e^g per token from about 0.93 (a memory of tens of tokens) down
// to about 0.5. Negative always: a positive rate would grow the state.
std::vector<float> decay_rates(uint64_t n) {
  std::vector<float> out;
  for (uint64_t h = 0; h < n; ++h) out.push_back(-static_cast<float>(0.1 + 0.9 * (n > 1 ? h / static_cast<double>(n - 1) : 0.0)));
  return out;
}

// The description's tensors with the values synth fills them with.
std::vector<GenTensor> tensors_of(const SynthShape& s, uint32_t n_vocab) {
  using engine::arch::TensorKind;
  const engine::ModelConfig c = synth_config(s, n_vocab);
  std::vector<GenTensor> out;
  for (SynthTensor& t : synth_tensors(c, s)) {
    GenTensor g;
    g.desc.name = std::move(t.name);
    g.desc.n_dims = static_cast<uint32_t>(t.ne.size());
    std::copy(t.ne.begin(), t.ne.end(), g.desc.ne.begin());
    switch (t.kind) {
      case TensorKind::embedding:
      case TensorKind::matrix: g.scale = 1.0 / std::sqrt(static_cast<double>(t.ne[0])); break;
      case TensorKind::norm: g.offset = 1.0, g.scale = 0.1; break;
      case TensorKind::bias: g.scale = 0.5; break;
      case TensorKind::rope_factors:
        g.fixed = s.rope_partial_global > 0.0f ? proportional_rope_factors(s, t.ne[0])
                                               : llama3_rope_factors(s, static_cast<uint32_t>(2 * t.ne[0]));
        break;
      case TensorKind::rope_factors_long:
      case TensorKind::rope_factors_short:
        g.fixed = longrope_factors(s, static_cast<uint32_t>(t.ne[0]), t.kind == TensorKind::rope_factors_long);
        break;
      case TensorKind::decay_rates: g.fixed = decay_rates(t.ne[0]); break;
    }
    out.push_back(std::move(g));
  }
  return out;
}

void set_hyperparameters(gguf::Writer& w, const SynthShape& s, uint32_t n_vocab, uint64_t seed) {
  w.set_string("general.architecture", s.arch);
  w.set_string("general.name", "synth-" + s.name);
  w.set_string("general.description", "random weights written by synth (seed " + std::to_string(seed) +
                                          "), shape of " + s.name + ": not a trained model");
  for (const SynthKey& k : synth_keys(synth_config(s, n_vocab), s)) {
    if (!k.array.empty() && k.is_bool) {
      const std::vector<uint8_t> flags(k.array.begin(), k.array.end());
      w.set_array_bool(k.key, flags);
    } else if (!k.array.empty()) {
      const std::vector<uint32_t> values(k.array.begin(), k.array.end());
      w.set_array_u32(k.key, values);
    } else if (!k.text.empty()) {
      w.set_string(k.key, k.text);
    } else if (k.is_float) {
      w.set_f32(k.key, static_cast<float>(k.value));
    } else {
      w.set_u32(k.key, static_cast<uint32_t>(k.value));
    }
  }
}

// <unk> <s> </s>, the 256 byte tokens, "▁" (the space), then normal filler
// tokens up to n_vocab.
void set_byte_vocab(gguf::Writer& w, uint32_t n_vocab) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};  // unknown, control, control
  static const char* hex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(std::string("<0x") + hex[b >> 4] + hex[b & 15] + ">");
    types.push_back(6);  // byte
  }
  if (n_vocab > tokens.size()) {
    tokens.push_back("\xE2\x96\x81");  // "▁", SentencePiece's space: text keeps its spaces
    types.push_back(1);
  }
  for (uint32_t id = static_cast<uint32_t>(tokens.size()); id < n_vocab; ++id) {
    tokens.push_back("<t" + std::to_string(id) + ">");
    types.push_back(1);  // normal: printable when sampled, never produced by tokenizing text
  }
  const std::vector<float> scores(tokens.size(), 0.0f);
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_array_strings("tokenizer.ggml.tokens", std::span<const std::string>(tokens));
  w.set_array_f32("tokenizer.ggml.scores", scores);
  w.set_array_i32("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_eos_token", false);
}

uint32_t token_count(const gguf::File& f) {
  const gguf::Value* tokens = f.find_array("tokenizer.ggml.tokens");
  if (tokens == nullptr || tokens->array_size() == 0 || tokens->array_size() > UINT32_MAX) {
    throw SynthError(f.path() + ": has no tokenizer.ggml.tokens to copy the vocabulary from");
  }
  return static_cast<uint32_t>(tokens->array_size());
}

// Copies the tokenizer.* keys of `path`; returns its vocabulary size.
uint32_t copy_vocab(gguf::Writer& w, const std::string& path) {
  const gguf::File f = gguf::File::open(path);
  const uint32_t n = token_count(f);
  for (const gguf::KeyValue& kv : f.metadata()) {
    if (kv.key.substr(0, 10) == "tokenizer.") w.set_raw(kv.key, kv.raw_value);
  }
  return n;
}

}  // namespace

uint64_t tensor_key(uint64_t seed, std::string_view name) {
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001B3ull;
  return mix64(mix64(seed) ^ h);
}

double synth_normal(uint64_t key, uint64_t row, uint64_t i) { return deviate(row_key(key, row), i); }

uint32_t vocab_size(const std::string& path) { return token_count(gguf::File::open(path)); }

void validate_shape(const SynthShape& s, bool own_vocab) {
  auto positive = [](const char* field, uint64_t v) {
    if (v == 0) throw SynthError(std::string(field) + " must be positive");
  };
  if (engine::arch::find_architecture(s.arch) == nullptr) {
    throw SynthError("--arch '" + s.arch + "' is not supported (" + engine::arch::architecture_names() + ")");
  }
  positive("--n-embd", s.n_embd);
  positive("--n-layer", s.n_layer);
  positive("--n-head", s.n_head);
  positive("--n-head-kv", s.n_head_kv);
  positive("--head-dim", s.head_dim);
  positive("--n-ff", s.n_ff);
  positive("--ctx", s.n_ctx);
  if (s.n_head % s.n_head_kv != 0) {
    throw SynthError("--n-head " + std::to_string(s.n_head) + " is not a multiple of --n-head-kv " +
                     std::to_string(s.n_head_kv));
  }
  if (s.head_dim % 2 != 0) throw SynthError("--head-dim must be even (rope rotates pairs)");
  for (const auto& [param, values] : s.layer_values) {
    if (values.size() != s.n_layer) {
      throw SynthError("a per-layer key has " + std::to_string(values.size()) + " values for " +
                       std::to_string(s.n_layer) + " layers (--set KEY=A,B,... gives one per layer)");
    }
  }
  if (!s.attention_layers.empty() && s.attention_layers.size() != s.n_layer) {
    throw SynthError("the layer list names " + std::to_string(s.attention_layers.size()) + " layers for " +
                     std::to_string(s.n_layer) + " (a hybrid shape takes at most its own number of layers)");
  }
  if (!s.layer_n_ff.empty() && s.layer_n_ff.size() != s.n_layer) {
    throw SynthError("the per-layer feed-forward widths are " + std::to_string(s.layer_n_ff.size()) + " for " +
                     std::to_string(s.n_layer) + " layers");
  }
  if (s.n_rot % 2 != 0 || s.n_rot > s.head_dim) {
    throw SynthError("--n-rot " + std::to_string(s.n_rot) + " must be even and at most the head size " +
                     std::to_string(s.head_dim));
  }
  if (s.longrope && s.rope_original_ctx > s.n_ctx) {
    throw SynthError("--longrope " + std::to_string(s.rope_original_ctx) + " exceeds --ctx " + std::to_string(s.n_ctx) +
                     " (the original context LongRoPE extends)");
  }
  if (!(s.rope_base > 0.0f) || !(s.rms_eps > 0.0f && s.rms_eps < 1.0f)) {
    throw SynthError("--rope-base must be positive and --rms-eps in (0, 1)");
  }
  if (!own_vocab && s.n_vocab < 259) {
    throw SynthError("--n-vocab " + std::to_string(s.n_vocab) +
                     " is too small for the byte-level vocabulary (3 special + 256 byte tokens); use --vocab FILE");
  }
}

SynthResult synth_model(const SynthOptions& o) {
  const QuantTarget* target = find_target(o.type);
  if (target == nullptr) throw SynthError(unknown_target_message(o.type));
  if (o.output.empty() && !o.dry_run) throw SynthError("no output file given (-o OUT.gguf)");
  validate_shape(o.shape, !o.vocab_file.empty());
  const SynthShape& s = o.shape;

  gguf::Writer writer;
  SynthResult result;
  // Hyperparameters first; the vocab may change n_vocab, so they are set
  // again (in place) once it is known.
  set_hyperparameters(writer, s, s.n_vocab, o.seed);
  result.n_vocab = o.vocab_file.empty() ? s.n_vocab : copy_vocab(writer, o.vocab_file);
  if (o.vocab_file.empty()) set_byte_vocab(writer, result.n_vocab);
  set_hyperparameters(writer, s, result.n_vocab, o.seed);
  set_file_type(writer, *target);

  std::vector<GenTensor> gen = tensors_of(s, result.n_vocab);
  std::vector<TensorDesc> descs;
  for (const GenTensor& g : gen) descs.push_back(g.desc);
  const std::vector<size_t> order = llama_cpp_order(descs);
  std::vector<TensorDesc> ordered;
  for (size_t i : order) ordered.push_back(descs[i]);
  std::vector<TypeChoice> choices;
  try {
    choices = choose_types(*target, o.pure, MixModel{s.arch, s.n_layer, s.n_head, s.n_head_kv, 0}, ordered);
  } catch (const MixError& e) {
    throw SynthError(e.what());
  }
  if (const std::string need = imatrix_needed(*target, ordered, choices); !need.empty()) {
    throw SynthError(need + "; synth writes without one: choose another type, or write F32 and use quantize --imatrix");
  }

  uint64_t total_bytes = 0, n_weights = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const TensorDesc& d = ordered[k];
    PlannedTensor p{d.name, d.n_dims, d.ne, gguf::GgmlType::F32, choices[k].type, 0, 0, choices[k].fallback};
    p.to_bytes = (p.n_elements() / d.ne[0]) * gguf::row_bytes(p.to, d.ne[0]).value_or(0);
    total_bytes += p.to_bytes;
    n_weights += p.n_elements();
    result.plan.push_back(std::move(p));
  }

  Progress progress(total_bytes, o.progress && !o.dry_run);
  std::unique_ptr<engine::ThreadPool> pool;
  if (!o.dry_run) pool = std::make_unique<engine::ThreadPool>(writing_threads(o.n_threads));
  for (size_t k = 0; k < order.size(); ++k) {
    const GenTensor* g = &gen[order[k]];
    const std::vector<uint64_t> ne(g->desc.ne.begin(), g->desc.ne.begin() + g->desc.n_dims);
    writer.add_tensor(g->desc.name, result.plan[k].to, ne, [&, g, k](gguf::TensorSink& sink) {
      const PlannedTensor& p = result.plan[k];
      if (o.verbose && o.out != nullptr) print_plan_line(o.out, k, result.plan.size(), p, false);
      progress.set_label(p.name);
      const uint64_t row_length = g->desc.ne[0];
      const uint64_t key = tensor_key(o.seed, g->desc.name);
      stream_rows(*pool, p.to, row_length, p.n_elements() / row_length,
                  [g, key, row_length](uint64_t first, uint64_t n, float* dst) {
                    if (!g->fixed.empty()) {
                      std::copy(g->fixed.begin(), g->fixed.end(), dst);  // one row
                      return;
                    }
                    for (uint64_t r = 0; r < n; ++r) {
                      const uint64_t rk = row_key(key, first + r);
                      float* y = dst + r * row_length;
                      for (uint64_t i = 0; i < row_length; ++i) {
                        y[i] = static_cast<float>(g->offset + g->scale * deviate(rk, i));
                      }
                    }
                  },
                  sink, &progress);
    });
  }
  result.output_file_bytes = writer.file_size();

  if (o.dry_run) {
    if (o.out != nullptr) {
      std::fprintf(o.out, "synth: %s (%s, %s, %llu weights) as %s%s, seed %llu (dry run: nothing written)\n",
                   s.name.c_str(), s.arch.c_str(), plural(s.n_layer, "layer").c_str(),
                   static_cast<unsigned long long>(n_weights), std::string(target->name).c_str(),
                   o.pure ? " --pure" : "", static_cast<unsigned long long>(o.seed));
      print_plan(o.out, result.plan, 0, result.output_file_bytes);
    }
    return result;
  }
  const auto start = std::chrono::steady_clock::now();
  writer.write(o.output);
  progress.finish();
  if (o.out != nullptr) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const engine::MemoryUsage mem = engine::memory_usage();
    std::fprintf(o.out,
                 "synth: wrote %s: %s (%s, %s, %llu weights, vocab %u) as %s%s, %s (%.2f bits/weight), "
                 "seed %llu, in %.1f s with %s",
                 o.output.c_str(), s.name.c_str(), s.arch.c_str(), plural(s.n_layer, "layer").c_str(),
                 static_cast<unsigned long long>(n_weights), result.n_vocab, std::string(target->name).c_str(),
                 o.pure ? " (pure)" : "", format_mib(result.output_file_bytes).c_str(),
                 static_cast<double>(total_bytes) * 8.0 / static_cast<double>(n_weights),
                 static_cast<unsigned long long>(o.seed), secs,
                 plural(static_cast<int64_t>(pool->size()), "thread").c_str());
    if (mem.known) std::fprintf(o.out, ", peak RSS %s", format_mib(mem.peak_rss_bytes).c_str());
    std::fputc('\n', o.out);
  }
  return result;
}

}  // namespace tools
