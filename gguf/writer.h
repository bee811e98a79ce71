// GGUF writer (version 3): metadata in insertion order, tensor infos, then the
// data section with every tensor aligned to general.alignment (default 32).
//
// write() goes through gguf::OutputFile (writer_output.h): a temporary file
// beside the destination, renamed over it only once everything is on disk, and
// never over something that is not a regular file (a device, a FIFO, a
// directory); a symbolic link is written through to its target.
//
// Tensor data comes either from memory the caller keeps alive until write(), or
// from a producer callback called during write() — so a tool can quantize or
// synthesize a tensor at a time without holding the whole model in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/file.h"

namespace gguf {

// Where a producer writes a tensor's bytes; it must write exactly the tensor's
// size in bytes, in one or more calls.
class TensorSink {
 public:
  virtual void write(const void* data, size_t size) = 0;

 protected:
  ~TensorSink() = default;
};

class Writer {
 public:
  using Producer = std::function<void(TensorSink&)>;

  // Scalars. Setting a key that exists replaces its value, keeping its position.
  void set_u8(std::string_view key, uint8_t v);
  void set_i8(std::string_view key, int8_t v);
  void set_u16(std::string_view key, uint16_t v);
  void set_i16(std::string_view key, int16_t v);
  void set_u32(std::string_view key, uint32_t v);
  void set_i32(std::string_view key, int32_t v);
  void set_u64(std::string_view key, uint64_t v);
  void set_i64(std::string_view key, int64_t v);
  void set_f32(std::string_view key, float v);
  void set_f64(std::string_view key, double v);
  void set_bool(std::string_view key, bool v);
  void set_string(std::string_view key, std::string_view v);

  // Arrays of scalars and of strings.
  void set_array_u8(std::string_view key, std::span<const uint8_t> v);
  void set_array_bool(std::string_view key, std::span<const uint8_t> v);  // 0 or 1 each
  void set_array_i32(std::string_view key, std::span<const int32_t> v);
  void set_array_u32(std::string_view key, std::span<const uint32_t> v);
  void set_array_f32(std::string_view key, std::span<const float> v);
  void set_array_strings(std::string_view key, std::span<const std::string> v);
  void set_array_strings(std::string_view key, std::span<const std::string_view> v);

  // A value already encoded as GGUF bytes: u32 type followed by the value
  // (KeyValue::raw_value of the reader). Any type, nested arrays included.
  void set_raw(std::string_view key, std::span<const uint8_t> type_and_value);
  // Copies every key of `file` (its alignment too), replacing existing keys.
  void copy_metadata(const File& file);
  bool remove(std::string_view key);
  bool has(std::string_view key) const;

  // Tensors, written in the order they are added. `ne` has 1..4 dimensions,
  // ne[0] a multiple of the type's block size.
  void add_tensor(std::string_view name, GgmlType type, std::span<const uint64_t> ne,
                  std::span<const uint8_t> data);
  void add_tensor(std::string_view name, GgmlType type, std::span<const uint64_t> ne, Producer producer);
  size_t tensor_count() const { return tensors_.size(); }

  uint32_t alignment() const;  // general.alignment if set, else 32
  // Total bytes write() will produce.
  uint64_t file_size() const;

  // Writes the file via a temporary beside it and an atomic rename
  // (OutputFile). Throws gguf::Error naming the path (and the tensor, when a
  // producer fails); a producer's own exception passes through. Either way the
  // temporary file is removed and an existing file keeps its contents.
  void write(const std::string& path) const;

 private:
  struct Entry {
    std::string key;
    std::vector<uint8_t> value;  // u32 type + encoded value
  };
  struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<uint64_t> ne;
    uint64_t n_bytes;
    std::span<const uint8_t> data;
    Producer producer;
  };

  void set_encoded(std::string_view key, std::vector<uint8_t> value);
  Tensor& new_tensor(std::string_view name, GgmlType type, std::span<const uint64_t> ne);
  std::vector<uint8_t> encode_header() const;

  std::vector<Entry> entries_;
  std::vector<Tensor> tensors_;
};

}  // namespace gguf
