// gguf::Value: typed views of metadata values, and their display form.
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "gguf/file.h"

namespace gguf {
namespace {

constexpr const char* kValueTypeNames[kValueTypeCount] = {
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
    "bool",  "string", "array", "uint64", "int64", "float64",
};

bool is_signed_integer(ValueType t) {
  return t == ValueType::INT8 || t == ValueType::INT16 || t == ValueType::INT32 || t == ValueType::INT64;
}

void append_escaped(std::ostringstream& out, std::string_view s, size_t max_chars) {
  out << '"';
  size_t n = 0;
  for (unsigned char c : s) {
    if (n++ == max_chars) {
      out << "...";
      break;
    }
    if (c == '"' || c == '\\') {
      out << '\\' << c;
    } else if (c == '\n') {
      out << "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out << "\\x" << hex[c >> 4] << hex[c & 15];
    } else {
      out << c;
    }
  }
  out << '"';
}

}  // namespace

std::string_view value_type_name(ValueType t) {
  const auto i = static_cast<uint32_t>(t);
  return i < kValueTypeCount ? kValueTypeNames[i] : "unknown";
}

bool Value::is_integer() const {
  switch (type_) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::UINT16:
    case ValueType::INT16:
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::UINT64:
    case ValueType::INT64:
      return true;
    default:
      return false;
  }
}

std::optional<uint64_t> Value::to_uint() const {
  if (!is_integer()) return std::nullopt;
  if (is_signed_integer(type_)) {
    if (scalar_.i < 0) return std::nullopt;
    return static_cast<uint64_t>(scalar_.i);
  }
  return scalar_.u;
}

std::optional<int64_t> Value::to_int() const {
  if (!is_integer()) return std::nullopt;
  if (is_signed_integer(type_)) return scalar_.i;
  if (scalar_.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(scalar_.u);
}

std::optional<double> Value::to_double() const {
  if (!is_float()) return std::nullopt;
  return scalar_.f;
}

std::optional<bool> Value::to_bool() const {
  if (type_ != ValueType::BOOL) return std::nullopt;
  return scalar_.u != 0;
}

std::optional<std::string_view> Value::to_string() const {
  if (type_ != ValueType::STRING) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(data_), count_);
}

Value Value::at(uint64_t i) const {
  if (type_ != ValueType::ARRAY) throw std::out_of_range("gguf value is not an array");
  if (i >= count_) {
    throw std::out_of_range("gguf array index " + std::to_string(i) + " >= size " + std::to_string(count_));
  }
  if (items_ != nullptr) return items_[i];  // strings and nested arrays
  // Fixed-size elements: decode from the mapping (unaligned, little-endian).
  Value v;
  v.type_ = elem_type_;
  switch (elem_type_) {
    case ValueType::UINT8:
    case ValueType::BOOL:
      v.scalar_.u = data_[i];
      break;
    case ValueType::INT8:
      v.scalar_.i = static_cast<int8_t>(data_[i]);
      break;
    case ValueType::UINT16: {
      uint16_t x;
      std::memcpy(&x, data_ + 2 * i, 2);
      v.scalar_.u = x;
      break;
    }
    case ValueType::INT16: {
      int16_t x;
      std::memcpy(&x, data_ + 2 * i, 2);
      v.scalar_.i = x;
      break;
    }
    case ValueType::UINT32: {
      uint32_t x;
      std::memcpy(&x, data_ + 4 * i, 4);
      v.scalar_.u = x;
      break;
    }
    case ValueType::INT32: {
      int32_t x;
      std::memcpy(&x, data_ + 4 * i, 4);
      v.scalar_.i = x;
      break;
    }
    case ValueType::FLOAT32: {
      float x;
      std::memcpy(&x, data_ + 4 * i, 4);
      v.scalar_.f = x;
      break;
    }
    case ValueType::UINT64:
      std::memcpy(&v.scalar_.u, data_ + 8 * i, 8);
      break;
    case ValueType::INT64:
      std::memcpy(&v.scalar_.i, data_ + 8 * i, 8);
      break;
    case ValueType::FLOAT64:
      std::memcpy(&v.scalar_.f, data_ + 8 * i, 8);
      break;
    case ValueType::STRING:
    case ValueType::ARRAY:
      break;  // held in items_, handled above
  }
  return v;
}

std::string Value::to_display(size_t max_items) const {
  std::ostringstream out;
  switch (type_) {
    case ValueType::STRING:
      append_escaped(out, *to_string(), 200);
      break;
    case ValueType::BOOL:
      out << (scalar_.u ? "true" : "false");
      break;
    case ValueType::FLOAT32:
    case ValueType::FLOAT64:
      out.precision(type_ == ValueType::FLOAT32 ? 9 : 17);
      out << scalar_.f;
      break;
    case ValueType::ARRAY: {
      out << '[';
      const uint64_t shown = count_ <= max_items ? count_ : max_items;
      for (uint64_t i = 0; i < shown; ++i) {
        if (i) out << ", ";
        out << at(i).to_display(max_items);
      }
      if (shown < count_) out << ", ... (" << count_ << " " << value_type_name(elem_type_) << " in all)";
      out << ']';
      break;
    }
    default:
      if (is_signed_integer(type_)) {
        out << scalar_.i;
      } else {
        out << scalar_.u;
      }
  }
  return out.str();
}

std::string TensorInfo::shape_string() const {
  std::string s = "[";
  for (uint32_t d = 0; d < n_dims; ++d) {
    if (d) s += ", ";
    s += std::to_string(ne[d]);
  }
  return s + "]";
}

}  // namespace gguf
