#include "tools/common/model_writing/synth_args.h"

#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <vector>

#include "engine/arch/registry.h"

namespace tools {
namespace {

struct Overrides {
  std::optional<std::string> arch;
  std::optional<int64_t> n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_vocab, n_ctx, n_rot,
      longrope;
  std::optional<float> rope_base, rms_eps;
  std::optional<bool> tied;
  std::optional<float> rope_linear, rope_partial;
  bool k_eq_v = false;
  std::vector<std::string> sets;  // "attention.sliding_window=8"
};

// --set SUFFIX=VALUE: one of the family's further keys (a sliding window, a
// soft-cap, ...), named as in the file without the "<arch>." prefix.
void apply_set(SynthShape& s, const std::string& text) {
  const size_t eq = text.find('=');
  const engine::arch::Architecture* a = engine::arch::find_architecture(s.arch);
  if (eq == std::string::npos || a == nullptr) {
    throw ArgError("--set takes KEY=VALUE for a key of a registered architecture, not '" + text + "'");
  }
  const std::string suffix = text.substr(0, eq);
  std::string known;
  for (const engine::arch::KeySpec& k : a->keys) {
    if (k.param < engine::arch::kFirstValueParam) continue;
    if (suffix == k.suffix) {
      if (text.compare(eq + 1, std::string::npos, "none") == 0) {  // the file leaves the key out
        s.values.erase(k.param);
        s.layer_values.erase(k.param);
        s.arrays.erase(k.param);
        return;
      }
      // One number, or one per layer (A,B,...) for a key that may be a per-layer array.
      std::vector<double> values;
      for (const char* p = text.c_str() + eq + 1;; ++p) {
        char* end = nullptr;
        const double v = std::strtod(p, &end);
        if (end == p || (*end != '\0' && *end != ',') || !(v >= 0)) {
          throw ArgError("--set " + suffix + " needs a non-negative number" + (k.per_layer ? ", one per layer" : "") + " or none" +
                         ", not '" + text.substr(eq + 1) + "'");
        }
        values.push_back(v);
        p = end;
        if (*p == '\0') break;
      }
      if (k.array) {
        s.arrays[k.param] = values;
      } else if (values.size() == 1) {
        s.values[k.param] = values[0];
      } else if (k.per_layer) {
        s.layer_values[k.param] = values;
      } else {
        throw ArgError("--set " + suffix + " takes one value, not one per layer");
      }
      return;
    }
    known += (known.empty() ? "" : ", ") + std::string(k.suffix);
  }
  throw ArgError("--set: " + s.arch + " has no key '" + suffix + "' synth can set (" +
                 (known.empty() ? "none" : known) + ")");
}

uint32_t u32(const char* flag, int64_t v) {
  if (v <= 0 || v > UINT32_MAX) throw ArgError(std::string(flag) + " must be a positive 32-bit integer");
  return static_cast<uint32_t>(v);
}

SynthShape resolve_shape(const std::string& name, const Overrides& ov) {
  SynthShape s;
  if (!name.empty()) {
    const SynthShape* named = find_shape(name);
    if (named == nullptr) {
      throw ArgError("unknown shape '" + name + "'; known: " + shape_names() +
                            " (or a custom shape with --arch)");
    }
    s = *named;
  } else {
    if (!ov.arch) throw ArgError("give a shape NAME, or --arch and the sizes of a custom shape");
    for (auto [flag, v] : {std::pair{"--n-embd", ov.n_embd}, {"--n-layer", ov.n_layer}, {"--n-head", ov.n_head},
                           {"--n-ff", ov.n_ff}, {"--n-vocab", ov.n_vocab}}) {
      if (!v) throw ArgError(std::string("a custom shape needs ") + flag);
    }
    s.name = "custom";
    s.n_ctx = 4096;
    if (const SynthShape* typical = default_shape(*ov.arch)) {
      // The family's typical values, and its multipliers (granite's): a
      // custom shape of a family has what sets the family apart.
      s.rms_eps = typical->rms_eps;
      s.embedding_scale = typical->embedding_scale;
      s.residual_scale = typical->residual_scale;
      s.attention_scale = typical->attention_scale;
      s.logit_scale = typical->logit_scale;
      // A hybrid family's layer list and the keys it cannot do without
      // (lfm2's shortconv.l_cache).
      if (!typical->attention_layers.empty()) s.attention_layers = hybrid_attention_layers(*ov.n_layer);
      if (const engine::arch::Architecture* a = engine::arch::find_architecture(*ov.arch)) {
        for (const engine::arch::KeySpec& k : a->keys) {
          const auto it = typical->values.find(k.param);
          if (k.required && k.param >= engine::arch::kFirstValueParam && it != typical->values.end()) s.values.insert(*it);
          const auto arr = typical->arrays.find(k.param);
          if (k.required && arr != typical->arrays.end()) s.arrays.insert(*arr);
        }
      }
    }
    s.source = "command line";
  }
  if (ov.arch) s.arch = *ov.arch;
  if (ov.n_embd) s.n_embd = u32("--n-embd", *ov.n_embd);
  if (ov.n_layer) s.n_layer = u32("--n-layer", *ov.n_layer);
  if (ov.n_head) s.n_head = u32("--n-head", *ov.n_head);
  if (ov.n_head_kv) s.n_head_kv = u32("--n-head-kv", *ov.n_head_kv);
  if (ov.n_ff) s.n_ff = u32("--n-ff", *ov.n_ff);
  if (ov.n_vocab) s.n_vocab = u32("--n-vocab", *ov.n_vocab);
  if (ov.n_ctx) s.n_ctx = u32("--ctx", *ov.n_ctx);
  if (ov.rope_base) s.rope_base = *ov.rope_base;
  if (ov.rms_eps) s.rms_eps = *ov.rms_eps;
  if (ov.tied) s.tied = *ov.tied;
  if (ov.rope_linear) s.rope_linear_factor = *ov.rope_linear;
  if (ov.rope_partial) s.rope_partial_global = *ov.rope_partial;
  if (ov.k_eq_v) s.k_eq_v_global = true;
  // Fewer layers than a named shape has keep its first ones' per-layer values.
  for (auto& [param, values] : s.layer_values) {
    if (values.size() > s.n_layer) values.resize(s.n_layer);
  }
  if (s.layer_n_ff.size() > s.n_layer) s.layer_n_ff.resize(s.n_layer);
  if (s.attention_layers.size() > s.n_layer) s.attention_layers.resize(s.n_layer);
  if (ov.n_rot) s.n_rot = u32("--n-rot", *ov.n_rot);
  if (ov.longrope) {
    s.longrope = *ov.longrope != 0;
    s.rope_original_ctx = s.longrope ? u32("--longrope", *ov.longrope) : 0;
  }
  for (const std::string& set : ov.sets) apply_set(s, set);
  if (name.empty() && !ov.n_head_kv) s.n_head_kv = s.n_head;
  if (ov.head_dim) {
    s.head_dim = u32("--head-dim", *ov.head_dim);
  } else if (name.empty()) {
    if (s.n_embd % s.n_head != 0) throw ArgError("--n-embd is not a multiple of --n-head: give --head-dim");
    s.head_dim = s.n_embd / s.n_head;
  }
  return s;
}

}  // namespace

SynthCommand parse_synth_command(int argc, char** argv) {
  SynthCommand cmd;
  SynthOptions& o = cmd.options;
  o.progress = isatty(STDERR_FILENO) != 0;
  std::string name;
  Overrides ov;
  Args a(argc, argv);
  while (!a.done()) {
    int64_t n;
    float f;
    std::string text;
    if (a.option({"-o", "--output"}, o.output) || a.option({"--type"}, o.type) ||
        a.option({"--vocab"}, o.vocab_file)) {
    } else if (a.option({"--layers", "--n-layer"}, n)) {
      ov.n_layer = n;
    } else if (a.option({"--seed"}, n)) {
      o.seed = static_cast<uint64_t>(n);
    } else if (a.option({"-t", "--threads"}, n)) {
      if (n < 0 || n > 1024) throw ArgError("-t must be between 0 and 1024");
      o.n_threads = static_cast<size_t>(n);
    } else if (a.option({"--arch"}, text)) {
      ov.arch = text;
    } else if (a.option({"--n-embd"}, n)) {
      ov.n_embd = n;
    } else if (a.option({"--n-head"}, n)) {
      ov.n_head = n;
    } else if (a.option({"--n-head-kv"}, n)) {
      ov.n_head_kv = n;
    } else if (a.option({"--head-dim"}, n)) {
      ov.head_dim = n;
    } else if (a.option({"--n-ff"}, n)) {
      ov.n_ff = n;
    } else if (a.option({"--n-vocab"}, n)) {
      ov.n_vocab = n;
    } else if (a.option({"--ctx"}, n)) {
      ov.n_ctx = n;
    } else if (a.option({"--n-rot"}, n)) {
      ov.n_rot = n;
    } else if (a.option({"--longrope"}, n)) {
      ov.longrope = n;
    } else if (a.option({"--rope-base"}, f)) {
      ov.rope_base = f;
    } else if (a.option({"--rms-eps"}, f)) {
      ov.rms_eps = f;
    } else if (a.option({"--rope-linear"}, f)) {
      if (!(f > 0.0f)) throw ArgError("--rope-linear must be positive");
      ov.rope_linear = f;
    } else if (a.option({"--rope-partial"}, f)) {
      if (!(f > 0.0f && f <= 1.0f)) throw ArgError("--rope-partial must be in (0, 1]");
      ov.rope_partial = f;
    } else if (a.flag({"--k-eq-v"})) {
      ov.k_eq_v = true;
    } else if (a.option({"--set"}, text)) {
      ov.sets.push_back(text);
    } else if (a.flag({"--tied"})) {
      ov.tied = true;
    } else if (a.flag({"--untied"})) {
      ov.tied = false;
    } else if (a.flag({"--pure"})) {
      o.pure = true;
    } else if (a.flag({"--dry-run"})) {
      o.dry_run = true;
    } else if (a.flag({"--no-progress"})) {
      o.progress = false;
    } else if (a.flag({"-v", "--verbose"})) {
      o.verbose = true;
    } else if (a.flag({"--list"})) {
      cmd.action = SynthCommand::list;
      return cmd;
    } else if (a.flag({"-h", "--help"})) {
      cmd.action = SynthCommand::help;
      return cmd;
    } else if (std::string given; a.positional(given)) {
      if (!name.empty()) throw ArgError("more than one shape name given ('" + name + "', '" + given + "')");
      name = given;
    } else {
      a.unknown();
    }
  }
  if (o.type.empty()) throw ArgError("no --type given");
  if (find_target(o.type) == nullptr) throw ArgError(unknown_target_message(o.type));
  if (o.output.empty() && !o.dry_run) throw ArgError("no output file given (-o OUT.gguf)");
  // The vocabulary file gives the vocab size: read it (and refuse a file
  // that is not GGUF, naming it) before the shape needs --n-vocab.
  if (!o.vocab_file.empty()) {
    const uint32_t n = vocab_size(o.vocab_file);
    if (ov.n_vocab && *ov.n_vocab != static_cast<int64_t>(n)) {
      throw ArgError("--n-vocab " + std::to_string(*ov.n_vocab) + " differs from the " + std::to_string(n) +
                            " tokens of " + o.vocab_file + " (--vocab sets the vocab size; leave --n-vocab out)");
    }
    ov.n_vocab = n;
  }
  o.shape = resolve_shape(name, ov);
  return cmd;
}


}  // namespace tools
