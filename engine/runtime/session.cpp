#include "engine/runtime/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "engine/support/error.h"
#include "engine/runtime/finite_check.h"
#include "engine/support/log.h"
#include "engine/support/memory.h"
#include "engine/ops/ops.h"
#include "engine/runtime/session_memory.h"
#include "engine/threads/thread_pool.h"

namespace engine {

Session::Session(const Model& model, const SessionParams& params)
    : model_(model),
      c_(model.config()),
      n_ctx_(params.n_ctx != 0 ? params.n_ctx : std::min<uint32_t>(c_.n_ctx_train, 4096)),
      n_batch_(std::max<uint32_t>(1, std::min(params.n_batch, n_ctx_))),
      compute_(params.pool),
      memory_(reserve_session_memory(c_, n_ctx_, n_batch_, params.kv_type, compute_.n_threads(), params.memory_limit)),
      memory_limit_(params.memory_limit),
      kv_(c_, n_ctx_, n_batch_, params.kv_type),
      attention_(c_, n_batch_, n_ctx_, params.kv_type, compute_.n_threads()),
      shortconv_(c_, n_batch_),
      delta_net_(c_, n_batch_, compute_.n_threads()) {
  if (c_.n_ctx_train != 0 && n_ctx_ > c_.n_ctx_train) {
    log_warning("context of " + std::to_string(n_ctx_) + " tokens, above the " + std::to_string(c_.n_ctx_train) +
                " this model was trained for: text past " + std::to_string(c_.n_ctx_train) +
                " tokens degrades, while the KV cache grows with the context (" + format_bytes(memory_.kv_bytes) +
                " here). Recommended: a context of at most " + std::to_string(c_.n_ctx_train));
  }
  const size_t b = n_batch_;
  x_.resize(b * c_.n_embd);
  xn_.resize(b * c_.n_embd);
  gate_.resize(b * c_.n_ff);
  up_.resize(b * ffn_up_width(c_));
  const size_t n_pl = c_.per_layer_input.n_embd;
  per_layer_.resize(b * n_pl * c_.n_layer);
  per_layer_proj_.resize(b * n_pl * c_.n_layer);
  per_layer_gate_.resize(b * n_pl);
  for (const LayerSpec& l : c_.layers) {
    const RopeSpec& spec = l.attention.rope;
    if (std::none_of(rope_.begin(), rope_.end(), [&](const RopeTable& t) { return t.spec == spec; })) {
      rope_.push_back({spec, UINT64_MAX, std::vector<float>(b * spec.n_rot)});
    }
  }
  log_debug("session: context " + std::to_string(n_ctx_) + " tokens, batch " + std::to_string(n_batch_) +
            ", KV cache " + kv_.size().describe() + ", scratch " +
            format_bytes(memory_.scratch_bytes) + ", " + std::to_string(compute_.n_threads()) +
            (compute_.n_threads() == 1 ? " thread" : " threads") + model.rope_factors_note(n_ctx_));
  if (params.pool != nullptr) {
    if (const std::string line = model.kernel_plan().describe_in_order(*params.pool); !line.empty()) log_info(line);
  }
}

void Session::eval(std::span<const int32_t> tokens, bool all_logits) {
  logits_.clear();  // the previous logits go on any outcome: a failed eval leaves none
  if (tokens.empty()) throw Error("eval: no tokens given");
  const size_t pending = tokens_.size() - n_past_;  // kept tokens whose cache is to be rebuilt
  if (tokens.size() + pending > n_ctx_ - n_past_) {
    throw Error("context full: " + std::to_string(tokens_.size()) + " tokens in a context of " +
                std::to_string(n_ctx_) + ", " + std::to_string(tokens.size()) + " more do not fit");
  }
  check_vocabulary(tokens);
  if (all_logits) {
    if (pending != 0) throw Error("eval: the logits of all tokens, with kept tokens to evaluate again first");
    // One row of n_vocab floats per token: gigabytes for a long prompt and a
    // large vocabulary, so it is checked like the session itself.
    check_allocation(saturating_mul(saturating_mul(tokens.size(), c_.n_vocab), sizeof(float)), memory_limit_,
                     "eval: the logits of all " + std::to_string(tokens.size()) + " tokens");
  }
  const uint32_t start = n_past_;
  const size_t kept = tokens_.size();
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  try {
    eval_batches(std::span<const int32_t>(tokens_).subspan(start), all_logits);
  } catch (const Aborted&) {
    // The whole batches stay (n_past_ counts them), and so do the kept tokens.
    logits_.clear();
    tokens_.resize(std::max<size_t>(n_past_, kept));
    keep(static_cast<uint32_t>(tokens_.size()));
    throw;
  } catch (...) {
    // All or nothing: the positions of earlier batches are overwritten by the
    // next eval, and no half-computed logits remain.
    logits_.clear();
    n_past_ = start;
    keep(static_cast<uint32_t>(kept));
    throw;
  }
}

void Session::check_vocabulary(std::span<const int32_t> tokens) const {
  for (int32_t t : tokens) {
    if (t < 0 || static_cast<uint32_t>(t) >= c_.n_vocab) {
      throw Error("token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                  std::to_string(c_.n_vocab - 1) + ")");
    }
  }
}

void Session::eval_batches(std::span<const int32_t> tokens, bool all_logits) {
  for (size_t done = 0; done < tokens.size(); done += n_batch_) {
    const auto n = static_cast<uint32_t>(std::min<size_t>(n_batch_, tokens.size() - done));
    const bool last_batch = done + n == tokens.size();
    eval_batch(tokens.data() + done, n, all_logits ? Logits::all : last_batch ? Logits::last : Logits::none);
  }
}

void Session::keep(uint32_t n) {
  tokens_.resize(n);
  n_past_ = std::min(n_past_, n);
  checkpoints_.drop_after(n);
  // A batch that failed or stopped half-way stored some of its positions in
  // the rings, overwriting older ones (will_store counted them): usually
  // only those no later token attends to, but after a truncate or a
  // multi-batch rollback the window before n_past_ may be gone. A recurrent
  // state is that of its last position only: the newest checkpoint at or
  // before n_past_ takes its place, and the tokens after it are evaluated again.
  if (kv_.holds_history(n_past_)) return;
  if (const std::optional<uint32_t> at = checkpoints_.restore(n_past_, kv_)) {
    log_debug("session: recurrent state restored at position " + std::to_string(*at) + " of " +
              std::to_string(n) + " kept tokens; " + std::to_string(n - *at) + " to evaluate again");
    n_past_ = *at;
    return;
  }
  n_past_ = 0;
  kv_.forget();
}

void Session::truncate(uint32_t n) {
  if (n > tokens_.size()) {
    throw Error("truncate: " + std::to_string(n) + " tokens to keep, but the session holds " +
                std::to_string(tokens_.size()));
  }
  logits_.clear();
  keep(n);
}

uint32_t Session::eval_prompt(std::span<const int32_t> prompt) {
  if (prompt.empty()) throw Error("eval: no tokens given");
  // Refused before anything is dropped: the session stays as it was.
  if (prompt.size() > n_ctx_) {
    throw Error("context full: a prompt of " + std::to_string(prompt.size()) + " tokens in a context of " +
                std::to_string(n_ctx_));
  }
  check_vocabulary(prompt);
  const auto common = static_cast<uint32_t>(
      std::mismatch(prompt.begin(), prompt.end(), tokens_.begin(), tokens_.end()).first - prompt.begin());
  if (common == prompt.size() && tokens_.size() == prompt.size() && n_past_ == common && !logits_.empty()) {
    return common;  // this prompt was the last evaluation: its logits are there
  }
  // The last token is evaluated again when the prompt adds none: its logits.
  truncate(std::min<uint32_t>(common, static_cast<uint32_t>(prompt.size()) - 1));
  const uint32_t reused = n_past_;
  eval(prompt.subspan(tokens_.size()));
  return reused;
}

void Session::reset() {
  checkpoints_.clear();
  n_past_ = 0;
  tokens_.clear();
  logits_.clear();
  kv_.forget();
}

void Session::restored(std::vector<int32_t> tokens, uint32_t n_past, const std::vector<float>* recurrent) {
  tokens_ = std::move(tokens);
  n_past_ = n_past;
  logits_.clear();
  checkpoints_.clear();
  // Without the recurrent states (a file older than them) the tokens are
  // evaluated again; with them, they are the first checkpoint.
  if (recurrent != nullptr && kv_.has_recurrent_state()) {
    kv_.set_recurrent_state(*recurrent, n_past_);
    checkpoints_.take(n_past_, kv_);
  }
  keep(static_cast<uint32_t>(tokens_.size()));
}

// The forward pass of n tokens at positions n_past_ .. n_past_ + n - 1.
void Session::eval_batch(const int32_t* tokens, uint32_t n, Logits wanted) {
  // Profiled: the matmuls, their activation packing and attention time
  // themselves; what is left of the batch's wall time is elementwise work.
  Profile* profile = compute_.profile();
  const auto start = profile != nullptr ? Compute::Clock::now() : Compute::Clock::time_point{};
  const double attributed_before = profile != nullptr ? profile->total() : 0.0;
  kv_.will_store(n_past_ + n);  // before any layer stores: a stop half-way leaves them stored
  eval_layers(tokens, n, wanted);
  n_evaluated_ += n;
  if (kv_.has_recurrent_state()) checkpoints_.after_batch(n_past_, n, kv_);
  if (profile != nullptr) {
    profile->elementwise += Compute::seconds_since(start) - (profile->total() - attributed_before);
    profile->tokens += n;
  }
}

// The forward pass, as the layer specs say (engine/arch/layer_spec.h).
void Session::eval_layers(const int32_t* tokens, uint32_t n, Logits wanted) {
  const uint32_t d = c_.n_embd;
  ++batch_;  // the RoPE tables of earlier batches are stale, whatever became of them
  for (uint32_t i = 0; i < n; ++i) model_.embed(tokens[i], &x_[size_t{i} * d]);  // x: (n, d)
  if (c_.embed_scale != 1.0f) ops::scale(x_.data(), c_.embed_scale, size_t{n} * d);
  if (c_.per_layer_input.n_embd != 0) per_layer_inputs(tokens, n);  // p: (n, n_layer, n_pl)

  for (uint32_t l = 0; l < c_.n_layer; ++l) {
    // Asked once per layer: a stop comes within one layer's time.
    if (abort_ != nullptr && abort_(abort_user_)) {
      throw Aborted("aborted before layer " + std::to_string(l) + " of the batch of positions " +
                    std::to_string(n_past_) + ".." + std::to_string(n_past_ + n - 1) +
                    "; the batches before it are kept");
    }
    const LayerSpec& spec = c_.layers[l];
    const LayerWeights& w = model_.layers()[l];

    // x += post_norm(mixer(norm(x)))
    rmsnorm_rows(n, x_.data(), w.attn_norm.data(), xn_.data());
    mix(l, spec, w, n);  // xn: (n, d) the block's output
    if (spec.post_mixer_norm) rmsnorm_rows(n, xn_.data(), w.post_attn_norm.data(), xn_.data());
    add_rows(n, spec.residual_scale);

    // x += post_norm(ffn(norm(x)))
    rmsnorm_rows(n, x_.data(), w.ffn_norm.data(), xn_.data());
    feed_forward(spec, w, n);
    if (spec.post_ffn_norm) rmsnorm_rows(n, xn_.data(), w.post_ffn_norm.data(), xn_.data());
    add_rows(n, spec.residual_scale);

    // x += post_norm(proj(gelu(gate(x)) * p_l)), x *= output_scale
    if (spec.per_layer_input) add_per_layer_input(l, w, n);
    if (spec.output_scale) ops::scale(x_.data(), w.output_scale[0], size_t{n} * d);

    // NaN or Inf would flow through every later layer into garbage logits; it
    // is reported here, naming the layer that produced it. One pass over
    // (n, n_embd) floats, against the layer's matmuls of n_embd x (4 n_embd +
    // 3 n_ff) multiply-adds per token: nothing measurable (docs/reliability.md,
    // "The NaN/Inf check's cost").
    check_finite(model_, x_.data(), n, d, n_past_, static_cast<int>(l));
  }

  if (wanted != Logits::none) {
    // Logits of the last token, or of all of them.
    const uint32_t first = wanted == Logits::all ? 0 : n - 1;
    const uint32_t rows = n - first;
    for (uint32_t i = first; i < n; ++i) {
      ops::rmsnorm(&xn_[size_t{i - first} * d], &x_[size_t{i} * d], model_.output_norm().data(), d, c_.rms_eps);
    }
    const size_t before = logits_.size();
    logits_.resize(before + size_t{rows} * c_.n_vocab);
    float* logits = logits_.data() + before;
    compute_.linear(model_.output(), xn_.data(), rows, logits);
    // Divided as llama.cpp does it (granite): times the float reciprocal.
    if (c_.logit_scale != 1.0f) ops::scale(logits, 1.0f / c_.logit_scale, size_t{rows} * c_.n_vocab);
    if (c_.final_softcap > 0.0f) ops::softcap(logits, c_.final_softcap, size_t{rows} * c_.n_vocab);
    check_finite(model_, logits, rows, c_.n_vocab, n_past_ + first, -1);
  }
  n_past_ += n;
}

void Session::mix(uint32_t l, const LayerSpec& spec, const LayerWeights& w, uint32_t n) {
  switch (spec.mixer) {
    case MixerKind::attention:
      attention_.forward(compute_, spec.attention, w, kv_.attention(l), rope_table(spec.attention.rope, n), c_.rms_eps,
                         n_past_, n, xn_.data());
      return;
    case MixerKind::shortconv: {
      RecurrentCache& state = kv_.recurrent(l);
      shortconv_.forward(compute_, spec.conv_kernel, w, state.window(), n, xn_.data());
      state.advanced_to(n_past_ + n);
      return;
    }
    case MixerKind::delta_net: {
      RecurrentCache& state = kv_.recurrent(l);
      delta_net_.forward(compute_, spec, w, state.window(), state.matrices(), c_.rms_eps, n, xn_.data());
      state.advanced_to(n_past_ + n);
      return;
    }
  }
}

void Session::feed_forward(const LayerSpec& spec, const LayerWeights& w, uint32_t n) {
  const size_t n_ff = spec.n_ff;
  // The activation's inputs: row i's gate at gate_in + i * stride, its up at up_in + i * stride.
  const float* gate_in = gate_.data();
  const float* up_in = up_.data();
  size_t stride = n_ff;
  if (spec.fused_gate_up) {
    compute_.linear(w.w_up, xn_.data(), n, up_.data());  // up: (n, 2 n_ff) each row's gate, then its up
    gate_in = up_.data();
    up_in = up_.data() + n_ff;
    stride = 2 * n_ff;
  } else {
    compute_.linear_same_input(xn_.data(), n, {{&w.w_gate, gate_.data()}, {&w.w_up, up_.data()}});
  }
  // gate: (n, n_ff) = act(gate) * up. In pieces of 1024 values (whole
  // vectors), so decode splits it too; a piece is cut where a row ends.
  compute_.parallel_range(size_t{n} * n_ff, 1024, [&](size_t first, size_t last) {
    for (size_t at = first; at < last;) {
      const size_t row = at / n_ff, col = at % n_ff;
      const size_t count = std::min(last - at, n_ff - col);
      const size_t in = row * stride + col;
      switch (spec.activation) {
        case Activation::silu: ops::silu_mul(gate_.data() + at, gate_in + in, up_in + in, count); break;
        case Activation::gelu: ops::gelu_mul(gate_.data() + at, gate_in + in, up_in + in, count); break;
      }
      at += count;
    }
  });
  compute_.linear(w.w_down, gate_.data(), n, xn_.data());
}

// The batch's per-layer inputs (ModelConfig::PerLayerInput), from the
// embeddings in x: p = (norm(x Wp^T * proj_scale) + table[token] *
// table_scale) * sum_scale, the norm over each layer's n_pl values.
void Session::per_layer_inputs(const int32_t* tokens, uint32_t n) {
  const ModelConfig::PerLayerInput& in = c_.per_layer_input;
  const GlobalWeights& g = model_.globals();
  const size_t all = size_t{in.n_embd} * c_.n_layer;
  compute_.linear(g.per_layer_model_proj, x_.data(), n, per_layer_proj_.data());  // (n, n_layer * n_pl)
  compute_.parallel_range(n, 1, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      float* p = &per_layer_[i * all];
      float* proj = &per_layer_proj_[i * all];
      model_.embed_per_layer(tokens[i], p);
      ops::scale(p, in.table_scale, all);
      ops::scale(proj, in.proj_scale, all);
      for (size_t l = 0; l < c_.n_layer; ++l) {
        float* slice = proj + l * in.n_embd;
        ops::rmsnorm(slice, slice, g.per_layer_proj_norm.data(), in.n_embd, c_.rms_eps);
      }
      ops::add(p, proj, all);
      ops::scale(p, in.sum_scale, all);
    }
  });
}

// x += post_norm(proj(gelu(gate(x)) * p_l)): layer l's slice of the
// per-layer inputs, gated by the layer's output so far.
void Session::add_per_layer_input(uint32_t l, const LayerWeights& w, uint32_t n) {
  const uint32_t n_pl = c_.per_layer_input.n_embd;
  const size_t all = size_t{n_pl} * c_.n_layer;
  compute_.linear(w.per_layer_gate, x_.data(), n, per_layer_gate_.data());  // (n, n_pl)
  for (size_t i = 0; i < n; ++i) {
    float* gate = &per_layer_gate_[i * n_pl];
    ops::gelu_mul(gate, gate, &per_layer_[i * all + size_t{l} * n_pl], n_pl);
  }
  compute_.linear(w.per_layer_proj, per_layer_gate_.data(), n, xn_.data());  // (n, n_embd)
  rmsnorm_rows(n, xn_.data(), w.per_layer_post_norm.data(), xn_.data());
  add_rows(n, 1.0f);
}

void Session::rmsnorm_rows(uint32_t n, const float* in, const float* weight, float* out) {
  const uint32_t d = c_.n_embd;
  compute_.parallel_range(n, 1, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) ops::rmsnorm(&out[i * d], &in[i * d], weight, d, c_.rms_eps);
  });
}

// x += scale * xn (the residual connection), row by row.
void Session::add_rows(uint32_t n, float scale) {
  const uint32_t d = c_.n_embd;
  compute_.parallel_range(n, 1, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      if (scale != 1.0f) ops::scale(&xn_[i * d], scale, d);
      ops::add(&x_[i * d], &xn_[i * d], d);
    }
  });
}

void Session::set_profile(Profile* profile) { compute_.set_profile(profile); }

// cos/sin of every rotated pair for each new token's position, in double:
// theta = pos * freq_scale * base^(-2j / n_rot) / freq_factor[j], both times
// the attention factor.
const float* Session::rope_table(const RopeSpec& spec, uint32_t n) {
  RopeTable& t = *std::find_if(rope_.begin(), rope_.end(), [&](const RopeTable& r) { return r.spec == spec; });
  if (t.batch == batch_) return t.cos_sin.data();
  t.batch = batch_;
  const std::vector<float>& factors = model_.rope_freq_factors(n_ctx_);
  const bool divide = spec.freq_factors && !factors.empty();
  for (uint32_t i = 0; i < n; ++i) {
    const double pos = n_past_ + i;
    // Not &cos_sin[...]: with rope.dimension_count 0 the table is empty, and
    // indexing an empty vector is undefined (found by the model_loader fuzzer).
    float* cs = t.cos_sin.data() + size_t{i} * spec.n_rot;
    for (uint32_t j = 0; j < spec.n_rot / 2; ++j) {
      double theta = pos * spec.freq_scale * std::pow(static_cast<double>(spec.freq_base), -2.0 * j / spec.n_rot);
      if (divide) theta /= factors[j];
      cs[2 * j] = static_cast<float>(std::cos(theta)) * spec.attn_factor;
      cs[2 * j + 1] = static_cast<float>(std::sin(theta)) * spec.attn_factor;
    }
  }
  return t.cos_sin.data();
}

}  // namespace engine
