#include "engine/runtime/session_file.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/runtime/session.h"
#include "engine/support/error.h"
#include "engine/support/saturating.h"
#include "gguf/file.h"
#include "gguf/writer_output.h"

namespace engine {
namespace {

constexpr char kMagic[8] = {'E', 'N', 'G', 'I', 'N', 'E', 'K', 'V'};
// Version 2 added the recurrent states after the KV (version 1 files, which
// have none, still load: a recurrent model's tokens are evaluated again).
constexpr uint32_t kVersion = 2;
constexpr uint32_t kOldestVersion = 1;
constexpr uint32_t kByteOrder = 0x01020304;  // read back swapped on a machine of the other order

// The fixed part after the magic: version, byte order, model identity, model
// file size, KV type, caches, tokens, positions in the cache.
struct Header {
  uint32_t version = kVersion;
  uint32_t byte_order = kByteOrder;
  uint64_t model_id = 0;
  uint64_t model_bytes = 0;
  uint32_t kv_type = 0;  // kv_code: 0 f16, 1 f32, 2 q8_0, 3 q4_0
  uint32_t n_caches = 0;
  uint32_t n_tokens = 0;
  uint32_t n_past = 0;
};
struct CacheHeader {
  uint32_t window, n_head_kv, head_dim_k, head_dim_v, first, count;
};

// A 64-bit hash of a byte stream, 8 bytes at a time (several GB/s): the
// file's checksum and the model's identity. Not cryptographic.
class Hash64 {
 public:
  void update(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    length_ += n;
    while (n > 0) {
      if (fill_ == 0 && n >= 8) {
        for (; n >= 8; p += 8, n -= 8) {
          uint64_t w;
          std::memcpy(&w, p, 8);
          mix(w);
        }
        continue;
      }
      buffer_[fill_++] = *p++;
      --n;
      if (fill_ == 8) {
        uint64_t w;
        std::memcpy(&w, buffer_.data(), 8);
        mix(w);
        fill_ = 0;
      }
    }
  }
  template <class T>
  void value(const T& v) {
    update(&v, sizeof v);
  }
  uint64_t finish() const {
    Hash64 h = *this;
    uint64_t w = 0;
    std::memcpy(&w, h.buffer_.data(), h.fill_);
    h.mix(w);
    h.mix(length_);
    return h.h_ ^ (h.h_ >> 31);
  }

 private:
  void mix(uint64_t w) {
    h_ ^= w * 0x9E3779B97F4A7C15ull;
    h_ = ((h_ << 31) | (h_ >> 33)) * 0xBF58476D1CE4E5B9ull;
  }
  uint64_t h_ = 0x243F6A8885A308D3ull;
  uint64_t length_ = 0;
  std::array<uint8_t, 8> buffer_{};
  size_t fill_ = 0;
};

// The KV type as the file stores it: the codes never change meaning.
constexpr KvType kKvCodes[] = {KvType::f16, KvType::f32, KvType::q8_0, KvType::q4_0};
uint32_t kv_code(KvType t) {
  return static_cast<uint32_t>(std::find(std::begin(kKvCodes), std::end(kKvCodes), t) - std::begin(kKvCodes));
}

CacheHeader describe(const AttentionCache& a, uint32_t n_past) {
  const uint32_t first = a.first_attended(n_past);
  return {a.window(), a.n_head_kv(), a.head_dim_k(), a.head_dim_v(), first, n_past - first};
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw SessionFileError("saved session " + path + ": " + what);
}

// Writes to the output file and hashes what it wrote.
class Writer {
 public:
  explicit Writer(gguf::OutputFile& out) : out_(out) {}
  void bytes(const void* p, size_t n) {
    out_.write(p, n);
    hash_.update(p, n);
  }
  template <class T>
  void value(const T& v) {
    bytes(&v, sizeof v);
  }
  uint64_t checksum() const { return hash_.finish(); }

 private:
  gguf::OutputFile& out_;
  Hash64 hash_;
};

// Reads fields out of the file's bytes; running past the end is a truncated file.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, const std::string& path) : bytes_(bytes), path_(path) {}
  void bytes(void* out, size_t n) {
    const uint8_t* p = skip(n);
    if (n != 0) std::memcpy(out, p, n);  // out may be null for nothing (an empty token list)
  }
  template <class T>
  T value() {
    T v;
    bytes(&v, sizeof v);
    return v;
  }
  const uint8_t* skip(size_t n) {
    const uint8_t* p = bytes_.data() + at_;
    if (n > bytes_.size() - at_) {
      fail(path_, "truncated: " + std::to_string(bytes_.size()) + " bytes, the header describes more");
    }
    at_ += n;
    return p;
  }
  size_t at() const { return at_; }

 private:
  std::span<const uint8_t> bytes_;
  const std::string& path_;
  size_t at_ = 0;
};

std::vector<uint8_t> read_all(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::vector<uint8_t> bytes;
  std::array<uint8_t, 1 << 16> chunk;
  for (size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), f.get())) > 0;) {
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(n));
  }
  if (std::ferror(f.get())) fail(path, std::string("cannot read: ") + std::strerror(errno));
  return bytes;
}

// The offset of the first value in `bytes` whose exponent is all ones, or
// -1: every F16 or F32 value, or in a quantized cache every block's fp16
// scale (its first 2 bytes; the blocks follow one another, rows of whole
// blocks). Codes are integers, always finite.
int64_t first_non_finite(std::span<const uint8_t> bytes, KvType type) {
  const bool f32 = type == KvType::f32;
  const uint64_t step = kv_row_bytes(type, kv_quantized(type) ? 32 : 1);
  for (size_t i = 0; i + step <= bytes.size(); i += step) {
    if (!f32) {
      uint16_t h;
      std::memcpy(&h, bytes.data() + i, sizeof h);
      if ((h & 0x7c00u) == 0x7c00u) return static_cast<int64_t>(i);
    } else {
      uint32_t f;
      std::memcpy(&f, bytes.data() + i, sizeof f);
      if ((f & 0x7f800000u) == 0x7f800000u) return static_cast<int64_t>(i);
    }
  }
  return -1;
}

std::string hex(uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}

}  // namespace

uint64_t model_identity(const gguf::File& file) {
  Hash64 h;
  h.value(file.file_size());
  h.value(file.data_offset());
  for (const gguf::KeyValue& kv : file.metadata()) {
    h.update(kv.key.data(), kv.key.size());
    h.update(kv.raw_value.data(), kv.raw_value.size());
  }
  constexpr uint64_t kSample = 2048;
  for (const gguf::TensorInfo& t : file.tensors()) {
    h.update(t.name.data(), t.name.size());
    h.value(static_cast<uint32_t>(t.type));
    h.value(t.ne);
    h.value(t.offset);
    const uint8_t* data = file.tensor_data(t);
    const uint64_t head = std::min(t.n_bytes, kSample);
    h.update(data, head);
    const uint64_t tail = std::min(t.n_bytes - head, kSample);
    h.update(data + t.n_bytes - tail, tail);
  }
  return h.finish();
}

void save_session(const Session& session, const std::string& path) {
  const KvCache& kv = session.kv_cache();
  const uint32_t n_past = session.n_past();
  if (!kv.holds_history(n_past)) throw Error("save_session: the cache does not hold its positions (a bug)");
  Header h;
  h.model_id = model_identity(session.model().file());
  h.model_bytes = session.model().file().file_size();
  h.kv_type = kv_code(kv.type());
  h.n_caches = static_cast<uint32_t>(kv.caches().size());
  h.n_tokens = static_cast<uint32_t>(session.tokens().size());
  h.n_past = n_past;

  // The one output path every file goes through: a folder, a device node or a
  // FIFO is refused before anything is written, a link is written through, and
  // the bytes land under a temporary name renamed over the target once synced,
  // so a crash leaves the old file or the new one. 0600: it holds the user's text.
  try {
    gguf::OutputFile out(path, 0600);
    Writer w(out);
    w.bytes(kMagic, sizeof kMagic);
    w.value(h);
    for (const AttentionCache& a : kv.caches()) w.value(describe(a, n_past));
    w.bytes(session.tokens().data(), session.tokens().size_bytes());
    std::vector<uint8_t> raw;
    for (const AttentionCache& a : kv.caches()) {
      const CacheHeader c = describe(a, n_past);
      raw.resize(a.raw_bytes(c.count));
      a.read_raw(c.first, c.count, raw.data());
      w.bytes(raw.data(), raw.size());
    }
    const std::vector<float> recurrent = kv.recurrent_state();
    w.value(static_cast<uint64_t>(recurrent.size()));
    if (!recurrent.empty()) w.bytes(recurrent.data(), recurrent.size() * sizeof(float));
    const uint64_t sum = w.checksum();
    w.value(sum);
    out.commit();
  } catch (const gguf::Error& e) {
    throw SessionFileError(e.what());  // names the path already
  }
}

bool starts_as_saved_session(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  char magic[sizeof kMagic];
  return f && std::fread(magic, 1, sizeof magic, f.get()) == sizeof magic &&
         std::memcmp(magic, kMagic, sizeof kMagic) == 0;
}

void load_session(Session& session, const std::string& path) {
  load_session_bytes(session, read_all(path), path);
}

void reseal_session_bytes(std::span<uint8_t> bytes) {
  if (bytes.size() < sizeof(uint64_t)) return;
  Hash64 sum;
  sum.update(bytes.data(), bytes.size() - sizeof(uint64_t));
  const uint64_t value = sum.finish();
  std::memcpy(bytes.data() + bytes.size() - sizeof value, &value, sizeof value);
}

void load_session_bytes(Session& session, std::span<const uint8_t> bytes, const std::string& path) {
  Reader r(bytes, path);
  char magic[sizeof kMagic];
  if (bytes.size() < sizeof kMagic) fail(path, "truncated: " + std::to_string(bytes.size()) + " bytes");
  r.bytes(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0) fail(path, "not a saved session (no ENGINEKV magic)");
  const auto h = r.value<Header>();
  if (h.byte_order != kByteOrder) fail(path, "saved on a machine of the other byte order");
  if (h.version < kOldestVersion || h.version > kVersion) {
    fail(path, "version " + std::to_string(h.version) + "; this engine reads versions " +
                   std::to_string(kOldestVersion) + " to " + std::to_string(kVersion));
  }
  if (h.kv_type >= std::size(kKvCodes)) fail(path, "corrupt: KV type " + std::to_string(h.kv_type));
  const KvType kv_type = kKvCodes[h.kv_type];
  std::vector<CacheHeader> caches(h.n_caches > bytes.size() ? 0 : h.n_caches);
  if (caches.size() != h.n_caches) fail(path, "corrupt: " + std::to_string(h.n_caches) + " caches");
  for (CacheHeader& c : caches) c = r.value<CacheHeader>();
  // The size the header describes, before trusting any of it.
  uint64_t expected = saturating_add(r.at(), saturating_mul(h.n_tokens, sizeof(int32_t)));
  for (const CacheHeader& c : caches) {
    if (kv_quantized(kv_type) && (c.head_dim_k % 32 != 0 || c.head_dim_v % 32 != 0)) {
      fail(path, std::string("corrupt: a ") + kv_type_name(kv_type) + " cache with a head dimension not a multiple of 32");
    }
    const uint64_t row = kv_row_bytes(kv_type, c.head_dim_k) + kv_row_bytes(kv_type, c.head_dim_v);
    expected = saturating_add(expected, saturating_mul(c.count, saturating_mul(c.n_head_kv, row)));
  }
  const uint64_t kv_end = expected;
  // Version 2: the recurrent states' float count, then the floats.
  uint64_t n_recurrent = 0;
  if (h.version >= 2) {
    if (saturating_add(kv_end, sizeof n_recurrent) > bytes.size()) {
      fail(path, "truncated: " + std::to_string(bytes.size()) + " bytes where its header describes more than " +
                     std::to_string(kv_end));
    }
    std::memcpy(&n_recurrent, bytes.data() + kv_end, sizeof n_recurrent);
    expected = saturating_add(expected, saturating_add(sizeof n_recurrent, saturating_mul(n_recurrent, sizeof(float))));
  }
  expected = saturating_add(expected, sizeof(uint64_t));
  if (bytes.size() < expected) {
    fail(path, "truncated: " + std::to_string(bytes.size()) + " bytes where its header describes " +
                   std::to_string(expected));
  }
  if (bytes.size() > expected) {
    fail(path, "corrupt: " + std::to_string(bytes.size() - expected) + " bytes after the end its header describes");
  }
  Hash64 sum;
  sum.update(bytes.data(), bytes.size() - sizeof(uint64_t));
  uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - sizeof stored, sizeof stored);
  if (sum.finish() != stored) fail(path, "corrupt: its checksum does not match its contents");

  const gguf::File& model = session.model().file();
  const uint64_t id = model_identity(model);
  if (h.model_id != id || h.model_bytes != model.file_size()) {
    fail(path, "saved with another model (identity " + hex(h.model_id) + ", " + std::to_string(h.model_bytes) +
                   " bytes; this session's model " + model.path() + " is " + hex(id) + ", " +
                   std::to_string(model.file_size()) + " bytes)");
  }
  KvCache& kv = session.kv_cache_for_restore();
  if (h.kv_type != kv_code(kv.type())) {
    fail(path, std::string("saved with a ") + kv_type_name(kv_type) + " KV cache; this session's is " +
                   kv_type_name(kv.type()) + " (load it into a session created with the same KV type)");
  }
  if (h.n_tokens > session.n_ctx()) {
    fail(path, "holds " + std::to_string(h.n_tokens) + " tokens; this session's context is " +
                   std::to_string(session.n_ctx()));
  }
  if (h.n_past > h.n_tokens) fail(path, "corrupt: more positions in the cache than tokens");
  if (caches.size() != kv.caches().size()) {
    fail(path, "has " + std::to_string(caches.size()) + " caches; this session has " +
                   std::to_string(kv.caches().size()));
  }
  for (size_t i = 0; i < caches.size(); ++i) {
    const CacheHeader& c = caches[i];
    const CacheHeader want = describe(kv.caches()[i], h.n_past);
    if (std::memcmp(&c, &want, sizeof c) != 0) {
      fail(path, "cache " + std::to_string(i) + " is saved as window " + std::to_string(c.window) + ", " +
                     std::to_string(c.n_head_kv) + " KV heads of " + std::to_string(c.head_dim_k) + "+" +
                     std::to_string(c.head_dim_v) + ", positions " + std::to_string(c.first) + "+" +
                     std::to_string(c.count) + "; this session's is window " + std::to_string(want.window) + ", " +
                     std::to_string(want.n_head_kv) + " KV heads of " + std::to_string(want.head_dim_k) + "+" +
                     std::to_string(want.head_dim_v) + ", positions " + std::to_string(want.first) + "+" +
                     std::to_string(want.count));
    }
    if (c.count > kv.caches()[i].n_pos()) fail(path, "cache " + std::to_string(i) + " holds more than the ring");
  }
  std::vector<int32_t> tokens(h.n_tokens);
  r.bytes(tokens.data(), tokens.size() * sizeof(int32_t));
  const uint32_t n_vocab = session.model().config().n_vocab;
  for (int32_t t : tokens) {
    if (t < 0 || static_cast<uint32_t>(t) >= n_vocab) {
      fail(path, "token id " + std::to_string(t) + " is outside the vocabulary (0.." + std::to_string(n_vocab - 1) +
                     ")");
    }
  }
  // Keys and values a session can hold are finite (an evaluation that made a
  // NaN or Inf failed instead): one that is not is a corrupt or edited file,
  // said here rather than as a NaN in the next token's layer.
  const std::span<const uint8_t> kv_bytes = bytes.subspan(r.at(), kv_end - r.at());
  if (const int64_t at = first_non_finite(kv_bytes, kv_type); at >= 0) {
    fail(path, "corrupt: a key or value that is not finite (NaN or Inf) at byte " + std::to_string(r.at() + at));
  }
  // The recurrent states (version 2): as many as this session's layers hold,
  // finite like the keys and values.
  std::vector<float> recurrent;
  if (h.version >= 2) {
    const uint64_t want = kv.recurrent_state().size();
    if (n_recurrent != want) {
      fail(path, "holds " + std::to_string(n_recurrent) + " recurrent state values; this session's model has " +
                     std::to_string(want));
    }
    recurrent.resize(n_recurrent);
    if (n_recurrent != 0) {
      std::memcpy(recurrent.data(), bytes.data() + kv_end + sizeof n_recurrent, n_recurrent * sizeof(float));
    }
    const std::span<const uint8_t> state_bytes(reinterpret_cast<const uint8_t*>(recurrent.data()),
                                               recurrent.size() * sizeof(float));
    if (const int64_t at = first_non_finite(state_bytes, KvType::f32); at >= 0) {
      fail(path, "corrupt: a recurrent state value that is not finite (NaN or Inf) at byte " +
                     std::to_string(kv_end + sizeof n_recurrent + static_cast<uint64_t>(at)));
    }
  }
  // Checked: from here nothing fails, and the session changes.
  for (size_t i = 0; i < caches.size(); ++i) {
    AttentionCache& a = kv.caches()[i];
    a.write_raw(caches[i].first, caches[i].count, r.skip(a.raw_bytes(caches[i].count)));
    a.held_from(caches[i].first);
  }
  session.restored(std::move(tokens), h.n_past, h.version >= 2 ? &recurrent : nullptr);
}

}  // namespace engine
