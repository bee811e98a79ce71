#include "engine/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/error.h"
#include "engine/finite_check.h"
#include "engine/ops.h"
#include "engine/session_memory.h"
#include "engine/threads/parallel_matmul.h"
#include "engine/threads/thread_pool.h"

namespace engine {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

Session::Session(const Model& model, const SessionParams& params)
    : model_(model),
      c_(model.config()),
      n_ctx_(params.n_ctx != 0 ? params.n_ctx : std::min<uint32_t>(c_.n_ctx_train, 4096)),
      n_batch_(std::max<uint32_t>(1, std::min(params.n_batch, n_ctx_))),
      pool_(params.pool),
      n_threads_(params.pool != nullptr ? params.pool->size() : 1),
      memory_(reserve_session_memory(c_, n_ctx_, n_batch_, params.kv_type, n_threads_, params.memory_limit)),
      memory_limit_(params.memory_limit),
      kv_(params.kv_type, c_.n_layer, n_ctx_, c_.n_head_kv, c_.head_dim_k, c_.head_dim_v) {
  const size_t b = n_batch_;
  x_.resize(b * c_.n_embd);
  xn_.resize(b * c_.n_embd);
  q_.resize(b * c_.q_dim());
  k_.resize(b * c_.kv_dim_k());
  v_.resize(b * c_.kv_dim_v());
  att_.resize(b * c_.n_head * c_.head_dim_v);
  gate_.resize(b * c_.n_ff);
  up_.resize(b * c_.n_ff);
  scores_.resize(n_threads_ * (c_.n_head / c_.n_head_kv) * n_ctx_);
  if (params.kv_type == KvType::f16) kv_rows_.resize(n_threads_ * n_ctx_ * (c_.head_dim_k + c_.head_dim_v));
  rope_.resize(b * c_.n_rot);
}

void Session::eval(std::span<const int32_t> tokens, bool all_logits) {
  logits_.clear();  // the previous logits go on any outcome: a failed eval leaves none
  if (tokens.empty()) throw Error("eval: no tokens given");
  if (tokens.size() > n_ctx_ - n_past_) {
    throw Error("context full: " + std::to_string(n_past_) + " tokens in a context of " + std::to_string(n_ctx_) +
                ", " + std::to_string(tokens.size()) + " more do not fit");
  }
  for (int32_t t : tokens) {
    if (t < 0 || static_cast<uint32_t>(t) >= c_.n_vocab) {
      throw Error("token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                  std::to_string(c_.n_vocab - 1) + ")");
    }
  }
  if (all_logits) {
    // One row of n_vocab floats per token: gigabytes for a long prompt and a
    // large vocabulary, so it is checked like the session itself.
    check_allocation(saturating_mul(saturating_mul(tokens.size(), c_.n_vocab), sizeof(float)), memory_limit_,
                     "eval: the logits of all " + std::to_string(tokens.size()) + " tokens");
  }
  const uint32_t start = n_past_;
  try {
    for (size_t done = 0; done < tokens.size(); done += n_batch_) {
      const auto n = static_cast<uint32_t>(std::min<size_t>(n_batch_, tokens.size() - done));
      const bool last_batch = done + n == tokens.size();
      eval_batch(tokens.data() + done, n, all_logits ? Logits::all : last_batch ? Logits::last : Logits::none);
    }
  } catch (...) {
    // All or nothing: the positions of earlier batches are overwritten by the
    // next eval, and no half-computed logits remain.
    n_past_ = start;
    logits_.clear();
    throw;
  }
}

// The forward pass of n tokens at positions n_past_ .. n_past_ + n - 1.
void Session::eval_batch(const int32_t* tokens, uint32_t n, Logits wanted) {
  // Profiled: the matmuls, their activation packing and attention time
  // themselves; what is left of the batch's wall time is elementwise work.
  const auto start = profile_ != nullptr ? Clock::now() : Clock::time_point{};
  const double attributed_before = profile_ != nullptr ? profile_->total() : 0.0;
  eval_layers(tokens, n, wanted);
  if (profile_ != nullptr) {
    profile_->elementwise += seconds_since(start) - (profile_->total() - attributed_before);
    profile_->tokens += n;
  }
}

void Session::eval_layers(const int32_t* tokens, uint32_t n, Logits wanted) {
  const uint32_t d = c_.n_embd;
  for (uint32_t i = 0; i < n; ++i) model_.embed(tokens[i], &x_[size_t{i} * d]);  // x: (n, d)
  rope_tables(n);

  for (uint32_t l = 0; l < c_.n_layer; ++l) {
    const LayerWeights& w = model_.layers()[l];

    // Attention block: xn = rmsnorm(x); q, k, v = xn Wq^T, xn Wk^T, xn Wv^T (+ biases).
    rmsnorm_rows(n, w.attn_norm.data());
    linear_same_input(xn_.data(), n, {{&w.wq, q_.data()}, {&w.wk, k_.data()}, {&w.wv, v_.data()}});
    parallel_range(n, 1, [&](size_t first, size_t last) {
      for (size_t i = first; i < last; ++i) finish_qkv(l, w, static_cast<uint32_t>(i));
    });
    profiled(nullptr, [&] { attention(l, n); });      // att: (n, n_head * head_dim_v)
    linear(w.wo, att_.data(), n, xn_.data());          // xn: (n, d) the block's output
    add_rows(n);

    // Feed-forward block: x += W_down (silu(xn W_gate^T) * (xn W_up^T)).
    rmsnorm_rows(n, w.ffn_norm.data());
    linear_same_input(xn_.data(), n, {{&w.w_gate, gate_.data()}, {&w.w_up, up_.data()}});
    // In pieces of 1024 values (whole vectors), so decode splits it too.
    parallel_range(size_t{n} * c_.n_ff, 1024, [&](size_t first, size_t last) {
      ops::silu_mul(gate_.data() + first, up_.data() + first, last - first);
    });
    linear(w.w_down, gate_.data(), n, xn_.data());
    add_rows(n);

    // NaN or Inf would flow through every later layer into garbage logits; it
    // is reported here, naming the layer that produced it. One pass over
    // (n, n_embd) floats, against the layer's matmuls of n_embd x (4 n_embd +
    // 3 n_ff) multiply-adds per token: nothing measurable (see README).
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
    linear(model_.output(), xn_.data(), rows, logits_.data() + before);
    check_finite(model_, logits_.data() + before, rows, c_.n_vocab, n_past_ + first, -1);
  }
  n_past_ += n;
}

// Token i's Q, K and V after the matmuls: biases (qwen2), Q/K RMSNorm
// (qwen3), RoPE, then K and V into the cache at the token's position.
void Session::finish_qkv(uint32_t layer, const LayerWeights& w, uint32_t i) {
  float* q = &q_[size_t{i} * c_.q_dim()];
  float* k = &k_[size_t{i} * c_.kv_dim_k()];
  float* v = &v_[size_t{i} * c_.kv_dim_v()];
  const AttentionSpec& a = c_.layers[layer].attention;
  if (a.qkv_bias) {
    ops::add(q, w.q_bias.data(), c_.q_dim());
    ops::add(k, w.k_bias.data(), c_.kv_dim_k());
    ops::add(v, w.v_bias.data(), c_.kv_dim_v());
  }
  const float* cs = rope_.data() + size_t{i} * c_.n_rot;  // rope_ is empty when n_rot is 0
  for (uint32_t h = 0; h < c_.n_head; ++h) {
    float* qh = q + size_t{h} * c_.head_dim_k;
    if (a.qk_norm) ops::rmsnorm(qh, qh, w.q_norm.data(), c_.head_dim_k, c_.rms_eps);
    ops::rope(qh, c_.n_rot, cs, a.rope.style);
  }
  for (uint32_t h = 0; h < c_.n_head_kv; ++h) {
    float* kh = k + size_t{h} * c_.head_dim_k;
    if (a.qk_norm) ops::rmsnorm(kh, kh, w.k_norm.data(), c_.head_dim_k, c_.rms_eps);
    ops::rope(kh, c_.n_rot, cs, a.rope.style);
  }
  kv_.store(layer, n_past_ + i, k, v);
}

// xn = rmsnorm(x) * weight, row by row.
void Session::rmsnorm_rows(uint32_t n, const float* weight) {
  const uint32_t d = c_.n_embd;
  parallel_range(n, 1, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) ops::rmsnorm(&xn_[i * d], &x_[i * d], weight, d, c_.rms_eps);
  });
}

// x += xn (the residual connection), row by row.
void Session::add_rows(uint32_t n) {
  const uint32_t d = c_.n_embd;
  parallel_range(n, 1, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) ops::add(&x_[i * d], &xn_[i * d], d);
  });
}

void Session::set_profile(Profile* profile) {
  profile_ = profile;
  if (pool_ != nullptr) pool_->set_task_timing(profile != nullptr);
}

// A parallel step's wall time W, split by the share of the threads' time spent
// in tasks (B of W x threads): W x share to the step's class (the kernel's
// weight type, or attention when kernel is null), the rest to pool_wait.
template <class Step>
void Session::profiled(const kernels::MatmulKernel* kernel, Step&& step) {
  if (profile_ == nullptr) {
    step();
    return;
  }
  const double busy_before = pool_ != nullptr ? pool_->task_seconds() : 0.0;
  const auto t0 = Clock::now();
  step();
  const double wall = seconds_since(t0);
  double share = 1.0;
  if (pool_ != nullptr && pool_->size() > 1 && wall > 0) {
    share = std::clamp((pool_->task_seconds() - busy_before) / (wall * static_cast<double>(pool_->size())), 0.0, 1.0);
  }
  double& slot = kernel != nullptr ? profile_->matmul[static_cast<uint32_t>(kernel->rhs_type)] : profile_->attention;
  slot += wall * share;
  profile_->pool_wait += wall * (1.0 - share);
}

template <class Fn>
void Session::parallel(size_t n_tasks, Fn&& fn) {
  if (pool_ != nullptr && n_tasks > 1) {
    pool_->run(n_tasks, fn);
  } else {
    for (size_t t = 0; t < n_tasks; ++t) fn(t, 0);
  }
}

// Pieces of at least `grain` items, about 2 per thread: the elementwise work of
// a prefill batch (norms, RoPE, SwiGLU over n tokens) ran on the calling
// thread alone while the others waited, 11% of a Q4_0 prefill token on this
// 2-core machine (bench --profile; 6% more in activation quantization). Each item is computed by the same code
// whatever the split, so results do not depend on the thread count.
template <class Fn>
void Session::parallel_range(size_t n, size_t grain, Fn&& fn) {
  const size_t threads = pool_ != nullptr ? pool_->size() : 1;
  const size_t units = (n + grain - 1) / grain;
  const size_t pieces = std::min(units, 2 * threads);
  if (pieces <= 1) {
    fn(size_t{0}, n);
    return;
  }
  const size_t per_piece = (units + pieces - 1) / pieces * grain;
  parallel((n + per_piece - 1) / per_piece, [&](size_t task, size_t) {
    fn(task * per_piece, std::min(n, (task + 1) * per_piece));
  });
}

// Causal attention of the n new tokens over every cached position up to their
// own, fp32 softmax, grouped-query heads sharing a KV head. Called before
// n_past_ advances: token i sits at position n_past_ + i. One task per (KV
// head, chunk of tokens): the head's keys and values are read (converted from
// F16) once per task and serve every query head of its group and every token
// of the chunk. Each thread has its own rows of scores and converted keys.
void Session::attention(uint32_t layer, uint32_t n) {
  const uint32_t hd = c_.head_dim_k;
  const uint32_t hv = c_.head_dim_v;
  const uint32_t group = c_.n_head / c_.n_head_kv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  // Chunks of 16 tokens: with the 4 KV heads of TinyLlama a 128-token prompt is
  // 32 tasks, enough to keep 8 threads busy, and each F16 history is converted
  // for 16 x group queries instead of one.
  constexpr uint32_t kChunk = 16;
  const uint32_t n_chunks = (n + kChunk - 1) / kChunk;
  parallel(size_t{n_chunks} * c_.n_head_kv, [&](size_t task, size_t thread) {
    const auto kvh = static_cast<uint32_t>(task % c_.n_head_kv);
    const auto first = static_cast<uint32_t>(task / c_.n_head_kv) * kChunk;
    const uint32_t last = std::min(n, first + kChunk);  // tokens first .. last - 1
    const uint32_t n_pos = n_past_ + last;              // positions they see
    float* scores = &scores_[thread * group * n_ctx_];  // one row per query head of the group
    const auto attend = [&](const auto* keys, const auto* values) {
      for (uint32_t i = first; i < last; ++i) {
        const uint32_t n_seen = n_past_ + i + 1;  // positions token i attends to
        const float* q = &q_[size_t{i} * c_.q_dim() + size_t{kvh} * group * hd];
        ops::dot_rows(q, hd, group, keys, hd, n_seen, hd, scale, scores, n_ctx_);
        for (uint32_t h = 0; h < group; ++h) ops::softmax(scores + size_t{h} * n_ctx_, n_seen);
        float* out = &att_[size_t{i} * c_.n_head * hv + size_t{kvh} * group * hv];
        ops::weighted_rows(scores, n_ctx_, group, values, hv, n_seen, hv, out, hv);
      }
    };
    if (kv_.type() == KvType::f16 && last - first == 1 && ops::f16_rows_in_place()) {
      // One token (decode) reads the F16 history in place: a converted copy
      // costs writing and reading twice its bytes for `group` queries only.
      attend(kv_.keys_f16(layer, kvh), kv_.values_f16(layer, kvh));
      return;
    }
    float* converted = kv_rows_.empty() ? nullptr : &kv_rows_[thread * n_ctx_ * (hd + hv)];
    float* converted_values = converted == nullptr ? nullptr : converted + size_t{n_ctx_} * hd;
    attend(kv_.keys(layer, kvh, n_pos, converted), kv_.values(layer, kvh, n_pos, converted_values));
  });
}

// cos/sin of every rotated pair for each new token's position, in double:
// theta = pos * freq_scale * base^(-2j / n_rot) / freq_factor[j].
void Session::rope_tables(uint32_t n) {
  const auto& factors = model_.rope_freq_factors();
  for (uint32_t i = 0; i < n; ++i) {
    const double pos = n_past_ + i;
    // Not &rope_[...]: with rope.dimension_count 0 the table is empty, and
    // indexing an empty vector is undefined (found by the model_loader fuzzer).
    float* cs = rope_.data() + size_t{i} * c_.n_rot;
    for (uint32_t j = 0; j < c_.n_rot / 2; ++j) {
      double theta = pos * c_.rope_freq_scale * std::pow(static_cast<double>(c_.rope_freq_base), -2.0 * j / c_.n_rot);
      if (!factors.empty()) theta /= factors[j];
      cs[2 * j] = static_cast<float>(std::cos(theta));
      cs[2 * j + 1] = static_cast<float>(std::sin(theta));
    }
  }
}

void Session::linear(const Linear& l, const float* x, uint32_t m, float* y) {
  linear_same_input(x, m, {{&l, y}});
}

void Session::linear_same_input(const float* x, uint32_t m,
                                std::initializer_list<std::pair<const Linear*, float*>> outs) {
  const kernels::MatmulKernel* packed_for = nullptr;
  // Consecutive matrices with the same kernel run in one round of the pool.
  for (auto first = outs.begin(); first != outs.end();) {
    const kernels::MatmulKernel& kernel = *first->first->kernel;
    const uint32_t k = first->first->in;
    auto last = first;
    MatmulOutput batch[kMaxMatmulOutputs];
    size_t n_batch = 0;
    for (; last != outs.end() && last->first->kernel == &kernel && n_batch < kMaxMatmulOutputs; ++last) {
      batch[n_batch++] = MatmulOutput{last->first->out, last->first->rhs, last->second};
    }
    if (packed_for == nullptr || packed_for->pack_lhs != kernel.pack_lhs || packed_for->lhs_type != kernel.lhs_type) {
      const auto t0 = profile_ != nullptr ? Clock::now() : Clock::time_point{};
      packed_.resize(kernel.lhs_packed_size(m, k));
      // A batch's rows are quantized across the pool, in slices of m_step rows
      // (kernels/matmul.h; each slice writes the bytes one call would).
      parallel_range(m, std::max<size_t>(kernel.m_step, 1), [&](size_t row0, size_t row1) {
        kernel.pack_lhs(row1 - row0, k, x + row0 * k, k, packed_.data() + kernel.lhs_packed_offset(row0, k));
      });
      packed_for = &kernel;
      if (profile_ != nullptr) profile_->activation_quant += seconds_since(t0);
    }
    profiled(&kernel, [&] {
      if (pool_ != nullptr) {
        parallel_matmuls(*pool_, kernel, m, k, packed_.data(), batch, n_batch);
      } else {
        for (size_t i = 0; i < n_batch; ++i) kernel.run(m, batch[i].n, k, packed_.data(), batch[i].rhs_packed, batch[i].dst, batch[i].n);
      }
    });
    first = last;
  }
}

}  // namespace engine
