// What a session keeps of the past, layer by layer, each layer sized by its
// own spec: an attention layer the keys and values of every position it can
// attend to (all of the context, or a sliding window's last positions), in
// F16 (default: half the memory, what phones need), F32 (exact attention,
// for comparing against references), or ggml's Q8_0 / Q4_0 blocks (32 values
// and an fp16 scale: 8.5 and 4.5 bits a value, for long contexts on phones
// with little memory; attention reads the blocks in place). A layer kind that keeps something else
// (a recurrent state) gets its own cache type beside AttentionCache, chosen
// by the layer's mixer: a short convolution or a gated DeltaNet its
// RecurrentCache, in F32 whatever the KV type (a few rows a layer, and the
// DeltaNet's state matrices).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/arch/layer_spec.h"

namespace engine {

struct ModelConfig;

enum class KvType { f16, f32, q8_0, q4_0 };
const char* kv_type_name(KvType t);
// "f16", "f32", "q8_0", "q4_0"; nullopt for anything else.
std::optional<KvType> parse_kv_type(std::string_view name);
inline bool kv_quantized(KvType t) { return t == KvType::q8_0 || t == KvType::q4_0; }
// Bytes of one cached row of head_dim values (a multiple of 32 when quantized).
uint64_t kv_row_bytes(KvType t, uint64_t head_dim);
// Bytes per value as the reports print it: "2", "4", "1.0625", "0.5625".
std::string kv_value_bytes(KvType t);
// Empty when every attention layer of c can keep its keys and values as
// `t`, else why not (a quantized cache needs head dimensions that are a
// multiple of the 32-value block).
std::string kv_type_unsupported(const ModelConfig& c, KvType t);

// The keys and values of one attention layer: (kv head, n_pos, head_dim)
// elements each, so a head's history is contiguous and converts in one pass.
// A layer with a window keeps only the positions it can still attend to, in
// a ring: position p in row p % n_pos.
//
// A ring forgets: storing position q overwrites q - n_pos. The cache counts
// the first position it still holds (every one from there to the last
// stored), so a session cut back to an earlier length knows whether the
// window its next token attends to is still there or must be recomputed.
class AttentionCache {
 public:
  // window: the positions a token attends to, itself included; 0: all.
  AttentionCache(KvType type, uint32_t n_pos, uint32_t window, uint32_t n_head_kv, uint32_t head_dim_k,
                 uint32_t head_dim_v);

  // The rows a layer of spec `a` needs in a context of n_ctx positions
  // evaluated n_batch at a time: all n_ctx, or with a window of w the w - 1
  // positions before a batch's first token and the n_batch of the batch
  // (whose keys are all stored before any of its tokens attends).
  static uint32_t rows_needed(const AttentionSpec& a, uint32_t n_ctx, uint32_t n_batch);
  // Bytes it holds for `n_pos` rows of this spec, without allocating.
  static uint64_t bytes_for(const AttentionSpec& a, uint32_t n_pos, KvType type);

  KvType type() const { return type_; }
  uint32_t n_pos() const { return n_pos_; }
  uint32_t window() const { return window_; }
  uint32_t n_head_kv() const { return n_head_kv_; }
  uint32_t head_dim_k() const { return head_dim_k_; }
  uint32_t head_dim_v() const { return head_dim_v_; }
  uint64_t bytes() const { return keys_.size() + values_.size(); }

  // The first position a token at `pos` attends to: 0, or pos + 1 - window.
  uint32_t first_attended(uint32_t pos) const { return window_ != 0 && pos + 1 > window_ ? pos + 1 - window_ : 0; }
  // Positions up to `end` (exclusive) are about to be stored: those the
  // ring's rows will no longer hold are forgotten.
  void will_store(uint32_t end) { held_from_ = std::max(held_from_, end > n_pos_ ? end - n_pos_ : 0u); }
  // Whether the positions a token at `n` attends to before itself are held
  // (always without a window): a session of n tokens can go on from here.
  bool holds_history(uint32_t n) const { return held_from_ <= first_attended(n); }
  // Nothing stored is relied on any more (a reset, or positions rewritten from 0).
  void forget() { held_from_ = 0; }
  // Stored positions are held from `first` on (a cache restored from a file).
  void held_from(uint32_t first) { held_from_ = first; }

  // The stored bytes of positions first .. first + count - 1, as they are in
  // the cache (F16, F32 or blocks): per KV head its keys, then per KV head its
  // values, each (count, head_dim) in position order. read_raw and
  // write_raw copy them out and in (a saved session); raw_bytes is their size.
  uint64_t raw_bytes(uint32_t count) const;
  void read_raw(uint32_t first, uint32_t count, uint8_t* out) const;
  void write_raw(uint32_t first, uint32_t count, const uint8_t* in);

  // Stores the key and value rows (n_head_kv x head_dim floats) of one position.
  void store(uint32_t pos, const float* key, const float* value);

  // The keys (values) of positions 0 .. n_pos - 1 of one KV head as (n_pos,
  // head_dim) floats: the cache itself when it is F32, else converted into
  // `scratch`, which holds n_pos x head_dim floats. Only while no position
  // has wrapped round the ring (always, without a window).
  const float* keys(uint32_t kv_head, uint32_t n_pos, float* scratch) const;
  const float* values(uint32_t kv_head, uint32_t n_pos, float* scratch) const;
  // Positions first .. first + count - 1 of one KV head, in position order,
  // as (count, head_dim) floats in keys and values, wherever the ring holds
  // them: what a windowed layer attends to.
  void gather(uint32_t kv_head, uint32_t first, uint32_t count, float* keys, float* values) const;
  // The same rows as stored, (n_pos, head_dim) halves, in an F16 cache: for
  // attention that widens them in registers (ops::dot_rows over F16 rows).
  const uint16_t* keys_f16(uint32_t kv_head) const;
  const uint16_t* values_f16(uint32_t kv_head) const;
  // Row `row` of the ring (position p is in row p % n_pos) of one KV head, as
  // stored: Q8_0 or Q4_0 blocks in a quantized cache, read in place by
  // ops::dot_rows_quant and weighted_rows_quant. key_row_bytes and
  // value_row_bytes step from one row to the next.
  const uint8_t* key_row(uint32_t kv_head, uint32_t row) const;
  const uint8_t* value_row(uint32_t kv_head, uint32_t row) const;
  uint64_t key_row_bytes() const { return kv_row_bytes(type_, head_dim_k_); }
  uint64_t value_row_bytes() const { return kv_row_bytes(type_, head_dim_v_); }
  // fn(row, done, run): positions first + done .. + run - 1 are rows row ..
  // row + run - 1 (at most two runs, the second from the ring's start).
  template <class Fn>
  void for_runs(uint32_t first, uint32_t count, Fn&& fn) const {
    for (uint32_t done = 0; done < count;) {
      const uint32_t row = (first + done) % n_pos_;
      const uint32_t run = std::min(count - done, n_pos_ - row);
      fn(row, done, run);
      done += run;
    }
  }

 private:
  size_t row_bytes(uint32_t head_dim) const { return kv_row_bytes(type_, head_dim); }
  void store_row(const float* x, uint8_t* row, uint32_t head_dim) const;
  size_t head_offset(uint32_t kv_head, uint32_t head_dim) const;
  const float* rows(const std::vector<uint8_t>& cache, uint32_t kv_head, uint32_t head_dim, uint32_t n_pos,
                    float* scratch) const;
  void gather_rows(const std::vector<uint8_t>& cache, uint32_t kv_head, uint32_t head_dim, uint32_t first,
                   uint32_t count, float* out) const;
  KvType type_;
  uint32_t n_pos_, window_, n_head_kv_, head_dim_k_, head_dim_v_;
  uint32_t held_from_ = 0;  // every position from here to the last stored is in the cache
  std::vector<uint8_t> keys_;    // (kv head, n_pos, head_dim_k) values (or their blocks)
  std::vector<uint8_t> values_;  // (kv head, n_pos, head_dim_v) values (or their blocks)
};

// The state of one recurrent layer, in F32 whatever the KV type: a
// convolution's window (the inputs of its last taps - 1 positions, oldest
// first) and, for a gated DeltaNet, one key x value matrix per value head.
//   short convolution (engine/mixers/shortconv.h): (taps - 1, n_embd) B * x
//   gated delta net (engine/mixers/delta_net.h):   (taps - 1, conv_dim) Q, K and V
//                                                  before the convolution, then
//                                                  (n_v_heads, head_k_dim, head_v_dim)
// It holds no history to cut back into: it is valid for one length of the
// session only (at()), and a session cut to another length goes on from a
// checkpoint or from 0 (Session::keep).
class RecurrentCache {
 public:
  RecurrentCache(uint64_t window_floats, uint64_t matrix_floats)
      : window_floats_(window_floats), rows_(window_floats + matrix_floats, 0.0f) {}
  // The floats a layer of this spec keeps (0 for an attention layer).
  static uint64_t window_floats(const LayerSpec& l, uint32_t n_embd);
  static uint64_t matrix_floats(const LayerSpec& l);

  float* window() { return rows_.data(); }
  float* matrices() { return rows_.data() + window_floats_; }
  const std::vector<float>& rows() const { return rows_; }
  uint64_t bytes() const { return rows_.size() * sizeof(float); }
  // The positions folded into the state: it goes on from position at().
  uint32_t at() const { return at_; }
  void advanced_to(uint32_t end) { at_ = end; }
  // The state after n positions, from a copy of rows().
  void set(const float* rows, uint32_t n) {
    std::copy(rows, rows + rows_.size(), rows_.begin());
    at_ = n;
  }
  // Back to position 0: the positions before the first are zeros.
  void forget() {
    std::fill(rows_.begin(), rows_.end(), 0.0f);
    at_ = 0;
  }

 private:
  uint64_t window_floats_;
  uint32_t at_ = 0;
  std::vector<float> rows_;  // the window, then the matrices
};

// Bytes of cache of one kind of layer (the layers whose caches have the same
// kind and size), for the memory reports.
struct CacheUse {
  std::string kind;   // "attention", "windowed attention"
  std::string shape;  // what one layer holds: "2048 positions x 512 values x 2 bytes"
  uint32_t n_layers = 0;
  uint32_t window = 0;              // positions a layer attends to at most; 0: all
  uint64_t bytes_per_position = 0;  // of one layer
  uint64_t bytes_per_layer = 0;     // saturates at UINT64_MAX
  uint64_t bytes() const;
  std::string describe() const;  // "22 attention layers x 4.0 MiB"
};

// The caches a session needs for n_ctx positions evaluated n_batch at a
// time, grouped by kind, in the order the kinds first appear; computed from
// the specs alone.
std::vector<CacheUse> cache_uses(const ModelConfig& c, uint32_t n_ctx, uint32_t n_batch, KvType type);
// "22 attention layers x 4.0 MiB", the kinds joined by " + ".
std::string describe_uses(const std::vector<CacheUse>& uses);

// The cache's bytes beside those of a full cache (every attention layer
// keeping all n_ctx positions): what the reports of run, bench and the C API
// give, so the saving of sliding windows is visible.
struct KvSize {
  KvType type = KvType::f16;
  uint64_t bytes = 0;             // the layers' caches, as allocated; saturates at UINT64_MAX
  uint64_t full_bytes = 0;        // the same without windows
  uint32_t n_layers = 0;          // layers with a cache
  uint32_t n_windowed = 0;        // of them, those with a sliding window
  std::vector<uint32_t> windows;  // their distinct windows, ascending
  // "150.0 MiB (f16; 22 of 26 layers windowed to 512 positions; a full cache
  // would be 832.0 MiB)", or "44.0 MiB (f16)" without windowed layers.
  std::string describe() const;
};
KvSize kv_size(const ModelConfig& c, uint32_t n_ctx, uint32_t n_batch, KvType type);

class KvCache {
 public:
  KvCache(const ModelConfig& c, uint32_t n_ctx, uint32_t n_batch, KvType type);

  KvType type() const { return type_; }
  uint32_t n_ctx() const { return n_ctx_; }
  uint64_t bytes() const;
  const std::vector<CacheUse>& uses() const { return uses_; }
  const KvSize& size() const { return size_; }
  // "f16: 22 attention layers x 4.0 MiB", the kinds joined by " + ".
  std::string describe() const;

  // The cache layer `layer` attends to: its own, or the one it shares.
  AttentionCache& attention(uint32_t layer) { return attention_[index_[layer]]; }
  const AttentionCache& attention(uint32_t layer) const { return attention_[index_[layer]]; }
  // Each cache once (a shared cache is not repeated), for saving and restoring.
  std::vector<AttentionCache>& caches() { return attention_; }
  const std::vector<AttentionCache>& caches() const { return attention_; }

  // The state of recurrent layer `layer` (a short convolution or a gated DeltaNet).
  RecurrentCache& recurrent(uint32_t layer) { return recurrent_[index_[layer]]; }
  bool has_recurrent_state() const { return !recurrent_.empty(); }
  // Every recurrent layer's state, one after the other (a checkpoint's
  // copy), and back, as the state after n positions.
  std::vector<float> recurrent_state() const;
  // The same into `out`, reusing its memory (a checkpoint's recycled copy).
  void copy_recurrent_state(std::vector<float>& out) const;
  void set_recurrent_state(const std::vector<float>& state, uint32_t n);

  // AttentionCache's bookkeeping of what the rings hold, for every cache.
  void will_store(uint32_t end) {
    for (AttentionCache& a : attention_) a.will_store(end);
  }
  // Whether a session of n tokens can go on from the caches: the rings hold
  // what its next token attends to, and every recurrent state is that of
  // exactly n positions.
  bool holds_history(uint32_t n) const {
    return attention_holds_history(n) &&
           std::all_of(recurrent_.begin(), recurrent_.end(), [&](const RecurrentCache& s) { return s.at() == n; });
  }
  // The same for the attention caches alone.
  bool attention_holds_history(uint32_t n) const {
    return std::all_of(attention_.begin(), attention_.end(), [&](const AttentionCache& a) { return a.holds_history(n); });
  }
  void forget() {
    for (AttentionCache& a : attention_) a.forget();
    for (RecurrentCache& s : recurrent_) s.forget();
  }

 private:
  KvType type_;
  uint32_t n_ctx_;
  std::vector<AttentionCache> attention_;  // one per attention layer with a cache of its own
  std::vector<RecurrentCache> recurrent_;  // one per recurrent layer
  std::vector<uint32_t> index_;            // (n_layer) the layer's cache in its kind's list
  std::vector<CacheUse> uses_;
  KvSize size_;
};

}  // namespace engine
