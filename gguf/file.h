// GGUF reader: versions 2 and 3, read-only mmap, no copy of tensor data.
//
// Everything in the header is validated when the file is opened: every count,
// length, size and offset is checked against the file size with overflow-safe
// arithmetic, tensor data must lie inside the data section, be aligned and not
// overlap. An error is a gguf::Error whose message names the file, the byte
// offset and the field. After open() succeeds, accessors cannot read outside the
// mapping.
//
// Layout (little-endian):
//   magic "GGUF" | u32 version | u64 n_tensors | u64 n_kv
//   n_kv x { string key | u32 value_type | value }
//   n_tensors x { string name | u32 n_dims | u64 ne[n_dims] | u32 ggml_type | u64 offset }
//   padding to general.alignment (default 32) | data section
// string = u64 length + bytes (no terminator); array = u32 elem_type + u64 count + elems.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/ggml_types.h"

namespace gguf {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};
inline constexpr uint32_t kValueTypeCount = 13;
std::string_view value_type_name(ValueType t);  // "uint32", "string", "array", ...

inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr uint32_t kMaxDims = 4;

// A metadata value, viewing the mapped file (valid while its File lives).
class Value {
 public:
  ValueType type() const { return type_; }
  bool is_integer() const;
  bool is_float() const { return type_ == ValueType::FLOAT32 || type_ == ValueType::FLOAT64; }

  // Scalars. Each returns nullopt when the type does not convert without loss:
  // to_uint accepts any integer type holding a value >= 0, to_int any integer
  // type that fits in int64, to_double FLOAT32 and FLOAT64.
  std::optional<uint64_t> to_uint() const;
  std::optional<int64_t> to_int() const;
  std::optional<double> to_double() const;
  std::optional<bool> to_bool() const;
  std::optional<std::string_view> to_string() const;

  // Arrays (type() == ARRAY).
  ValueType array_type() const { return elem_type_; }
  uint64_t array_size() const { return count_; }
  Value at(uint64_t i) const;  // i < array_size(), else std::out_of_range

  // Human-readable rendering; arrays longer than max_items are summarized.
  std::string to_display(size_t max_items = 8) const;

 private:
  friend class Parser;
  ValueType type_ = ValueType::UINT8;
  ValueType elem_type_ = ValueType::UINT8;
  union {
    uint64_t u;
    int64_t i;
    double f;
  } scalar_{};
  const uint8_t* data_ = nullptr;  // string bytes; fixed-size array elements
  uint64_t count_ = 0;             // string length; array element count
  const Value* items_ = nullptr;   // elements of arrays of strings or arrays
};

struct KeyValue {
  std::string_view key;
  Value value;
  uint64_t offset = 0;                  // file offset of the key
  std::span<const uint8_t> raw_value;   // u32 type + encoded value, as in the file
};

struct TensorInfo {
  std::string_view name;
  uint32_t n_dims = 0;
  std::array<uint64_t, kMaxDims> ne{1, 1, 1, 1};  // ne[0] is the row length
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;      // from the start of the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
  uint64_t info_offset = 0;  // file offset of the tensor info (for messages)

  uint64_t rows() const { return n_elements / ne[0]; }
  std::string shape_string() const;  // "[288, 512]"
};

class File {
 public:
  // Maps `path` read-only and parses it. Throws gguf::Error.
  static File open(const std::string& path);
  // Parses bytes the caller keeps alive (fuzzing, tests). `name` appears in errors.
  static File parse(std::span<const uint8_t> bytes, std::string name);

  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  ~File();

  const std::string& path() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t file_size() const { return bytes_.size(); }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t data_size() const { return bytes_.size() - data_offset_; }
  // Every byte before the data section: the header, metadata and tensor index.
  std::span<const uint8_t> header_bytes() const { return bytes_.first(data_offset_); }

  std::span<const KeyValue> metadata() const { return kvs_; }
  const KeyValue* find(std::string_view key) const;

  // Typed accessors: throw gguf::Error naming the file and key when the key is
  // missing or its value has another type.
  std::string_view get_string(std::string_view key) const;
  uint64_t get_uint(std::string_view key) const;  // any non-negative integer
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;   // FLOAT32 or FLOAT64
  bool get_bool(std::string_view key) const;
  const Value& get_array(std::string_view key) const;
  // The same, but nullopt / nullptr when the key is absent (still an error when
  // the key exists with the wrong type).
  std::optional<std::string_view> find_string(std::string_view key) const;
  std::optional<uint64_t> find_uint(std::string_view key) const;
  std::optional<int64_t> find_int(std::string_view key) const;
  std::optional<double> find_float(std::string_view key) const;
  std::optional<bool> find_bool(std::string_view key) const;
  const Value* find_array(std::string_view key) const;

  std::span<const TensorInfo> tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  const TensorInfo& tensor(std::string_view name) const;  // throws when missing
  // Pointer into the mapping: no copy.
  const uint8_t* tensor_data(const TensorInfo& t) const { return bytes_.data() + data_offset_ + t.offset; }

  // Tells the OS the pages wholly inside a tensor's data will not be read
  // again soon, so they leave the resident set (they are re-read from the file
  // if they are). Used after repacking a tensor into another buffer. No-op for
  // files parsed from memory.
  void release_pages(const TensorInfo& t) const;

  // Names the file in error messages: "<file>: <what>".
  [[noreturn]] void fail(const std::string& what) const;

 private:
  friend class Parser;
  File() = default;
  struct Mapping;

  std::string name_;
  std::unique_ptr<Mapping> mapping_;
  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> kvs_;
  std::vector<TensorInfo> tensors_;
  std::vector<std::vector<Value>> array_items_;  // elements of string/nested arrays
};

}  // namespace gguf
