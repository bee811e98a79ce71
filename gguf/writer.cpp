#include "gguf/writer.h"

#include <cstring>

#include "gguf/writer_output.h"

namespace gguf {
namespace {

constexpr uint32_t kVersion = 3;

class Encoder {
 public:
  template <class T>
  void put(T v) {
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));
  }
  void put_string(std::string_view s) {
    put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void put_type(ValueType t) { put<uint32_t>(static_cast<uint32_t>(t)); }
  std::vector<uint8_t> bytes;
};

template <class T>
std::vector<uint8_t> encode_scalar(ValueType type, T v) {
  Encoder e;
  e.put_type(type);
  e.put<T>(v);
  return std::move(e.bytes);
}

template <class T>
std::vector<uint8_t> encode_array(ValueType elem, std::span<const T> v) {
  Encoder e;
  e.put_type(ValueType::ARRAY);
  e.put_type(elem);
  e.put<uint64_t>(v.size());
  for (const T& x : v) e.put<T>(x);
  return std::move(e.bytes);
}

template <class S>
std::vector<uint8_t> encode_strings(std::span<const S> v) {
  Encoder e;
  e.put_type(ValueType::ARRAY);
  e.put_type(ValueType::STRING);
  e.put<uint64_t>(v.size());
  for (const auto& s : v) e.put_string(s);
  return std::move(e.bytes);
}

uint64_t padding(uint64_t offset, uint64_t alignment) { return (alignment - offset % alignment) % alignment; }

// Buffered writes to the output file.
class BufferedSink final : public TensorSink {
 public:
  explicit BufferedSink(OutputFile& out) : out_(out) { buffer_.reserve(kBufferSize); }

  void write(const void* data, size_t size) override {
    written_ += size;
    const auto* p = static_cast<const uint8_t*>(data);
    if (buffer_.size() + size > kBufferSize) flush();
    if (size >= kBufferSize) {
      out_.write(p, size);
    } else {
      buffer_.insert(buffer_.end(), p, p + size);
    }
  }
  void zeros(uint64_t n) {
    static const uint8_t kZeros[64] = {};
    while (n > 0) {
      const size_t chunk = n < sizeof kZeros ? static_cast<size_t>(n) : sizeof kZeros;
      write(kZeros, chunk);
      n -= chunk;
    }
  }
  void flush() {
    out_.write(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  uint64_t written() const { return written_; }

 private:
  static constexpr size_t kBufferSize = 1 << 20;

  OutputFile& out_;
  std::vector<uint8_t> buffer_;
  uint64_t written_ = 0;
};

}  // namespace

void Writer::set_encoded(std::string_view key, std::vector<uint8_t> value) {
  for (Entry& e : entries_) {
    if (e.key == key) {
      e.value = std::move(value);
      return;
    }
  }
  entries_.push_back({std::string(key), std::move(value)});
}

void Writer::set_u8(std::string_view k, uint8_t v) { set_encoded(k, encode_scalar(ValueType::UINT8, v)); }
void Writer::set_i8(std::string_view k, int8_t v) { set_encoded(k, encode_scalar(ValueType::INT8, v)); }
void Writer::set_u16(std::string_view k, uint16_t v) { set_encoded(k, encode_scalar(ValueType::UINT16, v)); }
void Writer::set_i16(std::string_view k, int16_t v) { set_encoded(k, encode_scalar(ValueType::INT16, v)); }
void Writer::set_u32(std::string_view k, uint32_t v) { set_encoded(k, encode_scalar(ValueType::UINT32, v)); }
void Writer::set_i32(std::string_view k, int32_t v) { set_encoded(k, encode_scalar(ValueType::INT32, v)); }
void Writer::set_u64(std::string_view k, uint64_t v) { set_encoded(k, encode_scalar(ValueType::UINT64, v)); }
void Writer::set_i64(std::string_view k, int64_t v) { set_encoded(k, encode_scalar(ValueType::INT64, v)); }
void Writer::set_f32(std::string_view k, float v) { set_encoded(k, encode_scalar(ValueType::FLOAT32, v)); }
void Writer::set_f64(std::string_view k, double v) { set_encoded(k, encode_scalar(ValueType::FLOAT64, v)); }
void Writer::set_bool(std::string_view k, bool v) {
  set_encoded(k, encode_scalar(ValueType::BOOL, static_cast<uint8_t>(v)));
}
void Writer::set_string(std::string_view k, std::string_view v) {
  Encoder e;
  e.put_type(ValueType::STRING);
  e.put_string(v);
  set_encoded(k, std::move(e.bytes));
}

void Writer::set_array_u8(std::string_view k, std::span<const uint8_t> v) {
  set_encoded(k, encode_array(ValueType::UINT8, v));
}
void Writer::set_array_bool(std::string_view k, std::span<const uint8_t> v) {
  set_encoded(k, encode_array(ValueType::BOOL, v));
}
void Writer::set_array_i32(std::string_view k, std::span<const int32_t> v) {
  set_encoded(k, encode_array(ValueType::INT32, v));
}
void Writer::set_array_u32(std::string_view k, std::span<const uint32_t> v) {
  set_encoded(k, encode_array(ValueType::UINT32, v));
}
void Writer::set_array_f32(std::string_view k, std::span<const float> v) {
  set_encoded(k, encode_array(ValueType::FLOAT32, v));
}
void Writer::set_array_strings(std::string_view k, std::span<const std::string> v) {
  set_encoded(k, encode_strings(v));
}
void Writer::set_array_strings(std::string_view k, std::span<const std::string_view> v) {
  set_encoded(k, encode_strings(v));
}

void Writer::set_raw(std::string_view key, std::span<const uint8_t> type_and_value) {
  // Validate by parsing a one-key file around it: a bad encoding fails here,
  // not in whoever reads the output.
  Encoder e;
  e.put<uint32_t>(0x46554747);
  e.put<uint32_t>(kVersion);
  e.put<uint64_t>(0);
  e.put<uint64_t>(1);
  e.put_string(key);
  e.bytes.insert(e.bytes.end(), type_and_value.begin(), type_and_value.end());
  const File probe = File::parse(e.bytes, "metadata '" + std::string(key) + "'");
  if (probe.metadata()[0].raw_value.size() != type_and_value.size()) {
    throw Error("metadata '" + std::string(key) + "': encoded value has trailing bytes");
  }
  set_encoded(key, {type_and_value.begin(), type_and_value.end()});
}

void Writer::copy_metadata(const File& file) {
  for (const KeyValue& kv : file.metadata()) {
    set_encoded(kv.key, {kv.raw_value.begin(), kv.raw_value.end()});
  }
}

bool Writer::remove(std::string_view key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key == key) {
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

bool Writer::has(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return true;
  }
  return false;
}

uint32_t Writer::alignment() const {
  for (const Entry& e : entries_) {
    if (e.key != "general.alignment") continue;
    uint32_t type = 0, value = 0;
    if (e.value.size() == 8) {
      std::memcpy(&type, e.value.data(), 4);
      std::memcpy(&value, e.value.data() + 4, 4);
    }
    if (type != static_cast<uint32_t>(ValueType::UINT32) || value == 0 || (value & (value - 1)) != 0) {
      throw Error("metadata 'general.alignment' must be a uint32 power of two");
    }
    return value;
  }
  return kDefaultAlignment;
}

Writer::Tensor& Writer::new_tensor(std::string_view name, GgmlType type, std::span<const uint64_t> ne) {
  const std::string where = "tensor '" + std::string(name) + "'";
  for (const Tensor& t : tensors_) {
    if (t.name == name) throw Error(where + ": added twice");
  }
  if (ne.empty() || ne.size() > kMaxDims) {
    throw Error(where + ": " + std::to_string(ne.size()) + " dimensions, expected 1.." + std::to_string(kMaxDims));
  }
  const auto row = row_bytes(type, ne[0]);
  if (!row) {
    throw Error(where + ": row length " + std::to_string(ne[0]) + " does not fit type " +
                std::string(type_name(type)) + " (block size " + std::to_string(traits(type).block_size) + ")");
  }
  uint64_t rows = 1;
  for (size_t d = 1; d < ne.size(); ++d) {
    if (ne[d] != 0 && rows > UINT64_MAX / ne[d]) throw Error(where + ": dimensions overflow");
    rows *= ne[d];
  }
  if (rows != 0 && *row > UINT64_MAX / rows) throw Error(where + ": size overflows");
  tensors_.push_back({std::string(name), type, {ne.begin(), ne.end()}, rows * *row, {}, {}});
  return tensors_.back();
}

void Writer::add_tensor(std::string_view name, GgmlType type, std::span<const uint64_t> ne,
                        std::span<const uint8_t> data) {
  Tensor& t = new_tensor(name, type, ne);
  if (data.size() != t.n_bytes) {
    const std::string msg = "tensor '" + t.name + "': " + std::to_string(data.size()) + " bytes given, " +
                            std::to_string(t.n_bytes) + " expected";
    tensors_.pop_back();
    throw Error(msg);
  }
  t.data = data;
}

void Writer::add_tensor(std::string_view name, GgmlType type, std::span<const uint64_t> ne, Producer producer) {
  new_tensor(name, type, ne).producer = std::move(producer);
}

std::vector<uint8_t> Writer::encode_header() const {
  const uint64_t align = alignment();
  Encoder e;
  e.put<uint32_t>(0x46554747);
  e.put<uint32_t>(kVersion);
  e.put<uint64_t>(tensors_.size());
  e.put<uint64_t>(entries_.size());
  for (const Entry& entry : entries_) {
    e.put_string(entry.key);
    e.bytes.insert(e.bytes.end(), entry.value.begin(), entry.value.end());
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    e.put_string(t.name);
    e.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
    for (uint64_t d : t.ne) e.put<uint64_t>(d);
    e.put<uint32_t>(static_cast<uint32_t>(t.type));
    e.put<uint64_t>(offset);
    offset += t.n_bytes + padding(t.n_bytes, align);
  }
  e.bytes.resize(e.bytes.size() + padding(e.bytes.size(), align), 0);
  return std::move(e.bytes);
}

uint64_t Writer::file_size() const {
  const uint64_t align = alignment();
  uint64_t size = encode_header().size();
  for (const Tensor& t : tensors_) size += t.n_bytes + padding(t.n_bytes, align);
  return size;
}

void Writer::write(const std::string& path) const {
  const uint64_t align = alignment();
  const std::vector<uint8_t> header = encode_header();
  OutputFile out(path);
  BufferedSink sink(out);
  sink.write(header.data(), header.size());
  for (const Tensor& t : tensors_) {
    const uint64_t start = sink.written();
    if (t.producer) {
      t.producer(sink);
    } else {
      sink.write(t.data.data(), t.data.size());
    }
    const uint64_t produced = sink.written() - start;
    if (produced != t.n_bytes) {
      throw Error(path + ": tensor '" + t.name + "': the producer wrote " + std::to_string(produced) + " bytes, " +
                  std::to_string(t.n_bytes) + " expected");
    }
    sink.zeros(padding(t.n_bytes, align));
  }
  sink.flush();
  out.commit();
}

}  // namespace gguf
