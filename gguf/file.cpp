// GGUF parsing and validation. Every read goes through Parser::take(), which
// checks the remaining size first, so a count or length from the file can never
// move the cursor past the end; sizes are multiplied only after a division test
// shows the product fits.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "gguf/file.h"

static_assert(std::endian::native == std::endian::little, "the GGUF reader assumes a little-endian host");

namespace gguf {

struct File::Mapping {
  void* addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr != nullptr) munmap(addr, size);
  }
};

File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr int kMaxArrayDepth = 8;        // nested arrays deeper than this are refused

size_t fixed_value_size(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::BOOL:
      return 1;
    case ValueType::UINT16:
    case ValueType::INT16:
      return 2;
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::FLOAT32:
      return 4;
    case ValueType::UINT64:
    case ValueType::INT64:
    case ValueType::FLOAT64:
      return 8;
    case ValueType::STRING:
    case ValueType::ARRAY:
      return 0;
  }
  return 0;
}

// Smallest encoding of one element, used to refuse counts the rest of the file
// cannot hold before looping over them.
uint64_t min_encoded_size(ValueType t) {
  if (t == ValueType::STRING) return 8;       // u64 length
  if (t == ValueType::ARRAY) return 4 + 8;    // u32 type + u64 count
  return fixed_value_size(t);
}

std::string quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s.substr(0, 96)) out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  if (s.size() > 96) out += "...";
  return out + "'";
}

}  // namespace

class Parser {
 public:
  Parser(File& file, std::span<const uint8_t> bytes) : f_(file), bytes_(bytes) {}

  void run() {
    read_header();
    read_metadata();
    read_tensor_infos();
    locate_data_section();
    check_tensor_extents();
  }

 private:
  [[noreturn]] void fail_at(uint64_t offset, const std::string& field, const std::string& problem) const {
    f_.fail("offset " + std::to_string(offset) + ": " + field + ": " + problem);
  }

  uint64_t remaining() const { return bytes_.size() - pos_; }

  const uint8_t* take(uint64_t n, const std::string& field) {
    if (n > remaining()) {
      fail_at(pos_, field,
              "needs " + std::to_string(n) + " bytes but the file ends after " + std::to_string(remaining()) +
                  " (file size " + std::to_string(bytes_.size()) + ")");
    }
    const uint8_t* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }

  template <class T>
  T read(const std::string& field) {
    T v;
    std::memcpy(&v, take(sizeof(T), field), sizeof(T));
    return v;
  }

  std::string_view read_string(const std::string& field) {
    const uint64_t at = pos_;
    const auto len = read<uint64_t>(field + " length");
    if (len > remaining()) {
      fail_at(at, field,
              "string length " + std::to_string(len) + " runs past the end of the file (" +
                  std::to_string(remaining()) + " bytes left)");
    }
    return {reinterpret_cast<const char*>(take(len, field)), static_cast<size_t>(len)};
  }

  void check_count(uint64_t at, uint64_t count, uint64_t min_each, const std::string& field) {
    if (min_each != 0 && count > remaining() / min_each) {
      fail_at(at, field,
              "count " + std::to_string(count) + " cannot fit in the " + std::to_string(remaining()) +
                  " bytes left in the file");
    }
  }

  ValueType read_value_type(const std::string& field) {
    const uint64_t at = pos_;
    const auto raw = read<uint32_t>(field + " type");
    if (raw >= kValueTypeCount) fail_at(at, field, "unknown value type " + std::to_string(raw));
    return static_cast<ValueType>(raw);
  }

  Value read_value(ValueType type, int depth, const std::string& field) {
    Value v;
    v.type_ = type;
    switch (type) {
      case ValueType::UINT8:
      case ValueType::BOOL:
        v.scalar_.u = read<uint8_t>(field);
        break;
      case ValueType::INT8:
        v.scalar_.i = read<int8_t>(field);
        break;
      case ValueType::UINT16:
        v.scalar_.u = read<uint16_t>(field);
        break;
      case ValueType::INT16:
        v.scalar_.i = read<int16_t>(field);
        break;
      case ValueType::UINT32:
        v.scalar_.u = read<uint32_t>(field);
        break;
      case ValueType::INT32:
        v.scalar_.i = read<int32_t>(field);
        break;
      case ValueType::UINT64:
        v.scalar_.u = read<uint64_t>(field);
        break;
      case ValueType::INT64:
        v.scalar_.i = read<int64_t>(field);
        break;
      case ValueType::FLOAT32:
        v.scalar_.f = read<float>(field);
        break;
      case ValueType::FLOAT64:
        v.scalar_.f = read<double>(field);
        break;
      case ValueType::STRING: {
        const std::string_view s = read_string(field);
        v.data_ = reinterpret_cast<const uint8_t*>(s.data());
        v.count_ = s.size();
        break;
      }
      case ValueType::ARRAY:
        read_array(v, depth, field);
        break;
    }
    return v;
  }

  void read_array(Value& v, int depth, const std::string& field) {
    const uint64_t at = pos_;
    if (depth >= kMaxArrayDepth) {
      fail_at(at, field, "arrays nested deeper than " + std::to_string(kMaxArrayDepth) + " levels");
    }
    v.elem_type_ = read_value_type(field + " element");
    const auto count = read<uint64_t>(field + " count");
    v.count_ = count;
    check_count(at, count, min_encoded_size(v.elem_type_), field + " (array of " +
                                                              std::string(value_type_name(v.elem_type_)) + ")");
    if (const size_t size = fixed_value_size(v.elem_type_); size != 0) {
      v.data_ = take(count * size, field);  // count * size <= remaining(), checked above
      return;
    }
    // Strings and nested arrays: decode each element once, into storage owned by
    // the File, so Value::at() is O(1) later. The storage grows only as elements
    // are actually read, so a hostile count cannot reserve memory the file does
    // not back. Field names for messages are built only on failure: a vocabulary
    // holds 150k strings.
    std::vector<Value> items;
    for (uint64_t i = 0; i < count; ++i) {
      if (v.elem_type_ == ValueType::STRING) {
        const uint64_t len_at = pos_;
        uint64_t len = 0;
        if (remaining() >= 8) std::memcpy(&len, bytes_.data() + pos_, 8);
        if (remaining() < 8 || len > remaining() - 8) {
          read_string(field + "[" + std::to_string(i) + "]");  // fails with the precise message
        }
        pos_ = len_at + 8 + len;
        Value& s = items.emplace_back();
        s.type_ = ValueType::STRING;
        s.data_ = bytes_.data() + len_at + 8;
        s.count_ = len;
      } else {
        items.push_back(read_value(v.elem_type_, depth + 1, field + "[" + std::to_string(i) + "]"));
      }
    }
    v.items_ = items.data();  // stays valid: moving a vector keeps its buffer
    f_.array_items_.push_back(std::move(items));
  }

  void read_header() {
    const auto magic = read<uint32_t>("header magic");
    if (magic != kMagic) {
      std::string shown;
      for (int i = 0; i < 4; ++i) {
        const char c = static_cast<char>((magic >> (8 * i)) & 0xff);
        shown += (c >= 0x20 && c < 0x7f) ? c : '?';
      }
      fail_at(0, "header magic", "not a GGUF file (magic '" + shown + "', expected 'GGUF')");
    }
    const auto version = read<uint32_t>("header version");
    if (version == 1) {
      fail_at(4, "header version",
              "unsupported GGUF version 1 (files from before August 2023; convert them again with a current "
              "converter; versions 2 and 3 are supported)");
    }
    if (version != 2 && version != 3) {
      if ((version & 0xffff) == 0 && (version >> 16) != 0) {
        fail_at(4, "header version",
                "big-endian GGUF file (version field " + std::to_string(version) +
                    "); only little-endian files are supported");
      }
      fail_at(4, "header version",
              "unsupported GGUF version " + std::to_string(version) + " (versions 2 and 3 are supported)");
    }
    f_.version_ = version;
    tensor_count_at_ = pos_;
    tensor_count_ = read<uint64_t>("header tensor count");
    kv_count_at_ = pos_;
    kv_count_ = read<uint64_t>("header metadata count");
  }

  void read_metadata() {
    // A key-value pair takes at least 8 (key length) + 4 (type) + 1 bytes.
    check_count(kv_count_at_, kv_count_, 13, "header metadata count");
    f_.kvs_.reserve(kv_count_);
    std::unordered_map<std::string_view, uint64_t> seen;
    for (uint64_t i = 0; i < kv_count_; ++i) {
      KeyValue kv;
      kv.offset = pos_;
      kv.key = read_string("metadata #" + std::to_string(i) + " key");
      const std::string field = "metadata " + quoted(kv.key);
      if (auto [it, inserted] = seen.emplace(kv.key, kv.offset); !inserted) {
        fail_at(kv.offset, field, "duplicate key (first at offset " + std::to_string(it->second) + ")");
      }
      const uint64_t value_at = pos_;
      const ValueType type = read_value_type(field);
      kv.value = read_value(type, 0, field + " value");
      kv.raw_value = bytes_.subspan(value_at, pos_ - value_at);
      f_.kvs_.push_back(kv);
    }
    read_alignment();
  }

  void read_alignment() {
    const KeyValue* kv = f_.find("general.alignment");
    if (kv == nullptr) return;
    const std::string field = "metadata 'general.alignment'";
    if (kv->value.type() != ValueType::UINT32) {
      fail_at(kv->offset, field,
              "has type " + std::string(value_type_name(kv->value.type())) + ", expected uint32");
    }
    const uint64_t a = *kv->value.to_uint();
    if (a == 0 || (a & (a - 1)) != 0) {
      fail_at(kv->offset, field, "alignment " + std::to_string(a) + " is not a power of two");
    }
    f_.alignment_ = static_cast<uint32_t>(a);
  }

  void read_tensor_infos() {
    // A tensor info takes at least 8 (name length) + 4 (n_dims) + 4 (type) + 8 (offset).
    check_count(tensor_count_at_, tensor_count_, 24, "header tensor count");
    f_.tensors_.reserve(tensor_count_);
    std::unordered_map<std::string_view, uint64_t> seen;
    for (uint64_t i = 0; i < tensor_count_; ++i) {
      TensorInfo t;
      t.info_offset = pos_;
      t.name = read_string("tensor #" + std::to_string(i) + " name");
      const std::string field = "tensor #" + std::to_string(i) + " " + quoted(t.name);
      if (auto [it, inserted] = seen.emplace(t.name, t.info_offset); !inserted) {
        fail_at(t.info_offset, field, "duplicate tensor name (first at offset " + std::to_string(it->second) + ")");
      }
      read_shape(t, field);
      read_type_and_size(t, field);
      const uint64_t offset_at = pos_;
      t.offset = read<uint64_t>(field + " offset");
      if (t.offset % f_.alignment_ != 0) {
        fail_at(offset_at, field + " offset",
                "data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                    std::to_string(f_.alignment_));
      }
      f_.tensors_.push_back(t);
    }
  }

  void read_shape(TensorInfo& t, const std::string& field) {
    const uint64_t at = pos_;
    t.n_dims = read<uint32_t>(field + " n_dims");
    if (t.n_dims == 0 || t.n_dims > kMaxDims) {
      fail_at(at, field, "n_dims " + std::to_string(t.n_dims) + " is outside 1.." + std::to_string(kMaxDims));
    }
    uint64_t elements = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      const uint64_t dim_at = pos_;
      t.ne[d] = read<uint64_t>(field + " ne[" + std::to_string(d) + "]");
      // ggml stores dimensions as int64: anything above INT64_MAX is corrupt.
      if (t.ne[d] > static_cast<uint64_t>(INT64_MAX)) {
        fail_at(dim_at, field, "dimension ne[" + std::to_string(d) + "] = " + std::to_string(t.ne[d]) + " is negative");
      }
      if (t.ne[d] != 0 && elements > static_cast<uint64_t>(INT64_MAX) / t.ne[d]) {
        fail_at(dim_at, field, "the product of the dimensions " + t.shape_string() + "... overflows 63 bits");
      }
      elements *= t.ne[d];
    }
    t.n_elements = elements;
  }

  void read_type_and_size(TensorInfo& t, const std::string& field) {
    const uint64_t at = pos_;
    const auto raw = read<uint32_t>(field + " type");
    const GgmlTypeTraits* traits = ggml_type_traits(raw);
    if (traits == nullptr) fail_at(at, field, "unknown ggml type id " + std::to_string(raw));
    if (traits->block_size == 0) {
      fail_at(at, field,
              std::string("type ") + traits->name + " (" + std::to_string(raw) +
                  ") was removed from ggml and has no defined layout");
    }
    t.type = traits->type;
    if (t.ne[0] % traits->block_size != 0) {
      fail_at(at, field,
              "row length " + std::to_string(t.ne[0]) + " is not a multiple of " + traits->name +
                  "'s block size " + std::to_string(traits->block_size));
    }
    const std::optional<uint64_t> row = row_bytes(t.type, t.ne[0]);
    const uint64_t rows = t.ne[0] == 0 ? 0 : t.n_elements / t.ne[0];
    if (!row || (rows != 0 && *row > UINT64_MAX / rows)) {
      fail_at(at, field, "size in bytes of " + t.shape_string() + " " + traits->name + " overflows 64 bits");
    }
    t.n_bytes = rows * *row;
  }

  void locate_data_section() {
    const uint64_t end_of_infos = pos_;
    const uint64_t a = f_.alignment_;
    const uint64_t padded = end_of_infos + (a - end_of_infos % a) % a;
    if (padded > bytes_.size() || padded < end_of_infos) {
      // Vocabulary-only files may end right after the header, without padding.
      if (f_.tensors_.empty()) {
        f_.data_offset_ = bytes_.size();
        return;
      }
      fail_at(end_of_infos, "data section",
              "starts at offset " + std::to_string(padded) + ", past the end of the file (size " +
                  std::to_string(bytes_.size()) + ")");
    }
    f_.data_offset_ = padded;
  }

  void check_tensor_extents() {
    const uint64_t data_size = bytes_.size() - f_.data_offset_;
    for (const TensorInfo& t : f_.tensors_) {
      if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
        fail_at(t.info_offset, "tensor " + quoted(t.name),
                "data [" + std::to_string(t.offset) + ", +" + std::to_string(t.n_bytes) +
                    ") runs past the end of the data section (" + std::to_string(data_size) +
                    " bytes, starting at file offset " + std::to_string(f_.data_offset_) + ")");
      }
    }
    std::vector<const TensorInfo*> by_offset;
    for (const TensorInfo& t : f_.tensors_) {
      if (t.n_bytes != 0) by_offset.push_back(&t);
    }
    std::sort(by_offset.begin(), by_offset.end(),
              [](const TensorInfo* x, const TensorInfo* y) { return x->offset < y->offset; });
    for (size_t i = 1; i < by_offset.size(); ++i) {
      const TensorInfo& prev = *by_offset[i - 1];
      const TensorInfo& cur = *by_offset[i];
      if (prev.offset + prev.n_bytes > cur.offset) {
        fail_at(cur.info_offset, "tensor " + quoted(cur.name),
                "data at " + std::to_string(cur.offset) + " overlaps tensor " + quoted(prev.name) + " at [" +
                    std::to_string(prev.offset) + ", " + std::to_string(prev.offset + prev.n_bytes) + ")");
      }
    }
  }

  File& f_;
  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
  uint64_t tensor_count_ = 0, kv_count_ = 0;
  uint64_t tensor_count_at_ = 0, kv_count_at_ = 0;
};

File File::parse(std::span<const uint8_t> bytes, std::string name) {
  File f;
  f.name_ = std::move(name);
  f.bytes_ = bytes;
  Parser(f, bytes).run();
  return f;
}

File File::open(const std::string& path) {
  File f;
  f.name_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) f.fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    f.fail(std::string("cannot stat: ") + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    f.fail("not a regular file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    f.fail("the file is empty (0 bytes), not a GGUF file");
  }
  // The size is fixed here, before mapping: every check below is against it,
  // so a file that is already short is an error, never a fault. What a file
  // does after this point (docs/memory.md):
  // - replaced by a rename (gguf::Writer, most downloaders): the mapping keeps
  //   the old file's pages; nothing changes for this File.
  // - rewritten in place at the same size: later reads see the new bytes. The
  //   header was validated once and is not read again, so this can only change
  //   weight values: the forward pass's NaN/Inf check reports garbage weights.
  // - truncated: a read of a page past the new end raises SIGBUS. No library
  //   can turn that into an error without a process-wide signal handler (which
  //   belongs to the app), so it is documented instead: apps that cannot rule
  //   it out should copy the model into private storage before loading it.
  const auto size = static_cast<size_t>(st.st_size);
  void* addr = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_err = errno;
  ::close(fd);  // the mapping keeps the file referenced
  if (addr == MAP_FAILED) f.fail(std::string("cannot map: ") + std::strerror(map_err));
  f.mapping_ = std::make_unique<Mapping>();
  f.mapping_->addr = addr;
  f.mapping_->size = size;
  f.bytes_ = {static_cast<const uint8_t*>(addr), size};
  Parser(f, f.bytes_).run();
  return f;
}

void File::fail(const std::string& what) const { throw Error(name_ + ": " + what); }

void File::release_pages(const TensorInfo& t) const {
  if (mapping_ == nullptr || t.n_bytes == 0) return;
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t begin = data_offset_ + t.offset;
  const uint64_t first = (begin + page - 1) / page * page;
  const uint64_t last = (begin + t.n_bytes) / page * page;
  if (last <= first) return;
  // A private read-only file mapping: MADV_DONTNEED drops the pages; a later
  // read faults them back in from the file.
  madvise(static_cast<uint8_t*>(mapping_->addr) + first, last - first, MADV_DONTNEED);
}

const KeyValue* File::find(std::string_view key) const {
  for (const KeyValue& kv : kvs_) {
    if (kv.key == key) return &kv;
  }
  return nullptr;
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  for (const TensorInfo& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const TensorInfo& File::tensor(std::string_view name) const {
  if (const TensorInfo* t = find_tensor(name)) return *t;
  fail("tensor '" + std::string(name) + "' is missing");
}

namespace {

template <class T>
std::optional<T> typed(const File& f, std::string_view key, const char* expected,
                       std::optional<T> (Value::*convert)() const) {
  const KeyValue* kv = f.find(key);
  if (kv == nullptr) return std::nullopt;
  std::optional<T> v = (kv->value.*convert)();
  if (!v) {
    f.fail("offset " + std::to_string(kv->offset) + ": metadata '" + std::string(key) + "' is " +
           std::string(value_type_name(kv->value.type())) + " " + kv->value.to_display(4) + ", expected " +
           expected);
  }
  return v;
}

template <class T>
T required(const File& f, std::string_view key, std::optional<T> v) {
  if (!v) f.fail("metadata key '" + std::string(key) + "' is missing");
  return *v;
}

}  // namespace

std::optional<std::string_view> File::find_string(std::string_view key) const {
  return typed<std::string_view>(*this, key, "a string", &Value::to_string);
}
std::optional<uint64_t> File::find_uint(std::string_view key) const {
  return typed<uint64_t>(*this, key, "a non-negative integer", &Value::to_uint);
}
std::optional<int64_t> File::find_int(std::string_view key) const {
  return typed<int64_t>(*this, key, "an integer", &Value::to_int);
}
std::optional<double> File::find_float(std::string_view key) const {
  return typed<double>(*this, key, "a float32 or float64", &Value::to_double);
}
std::optional<bool> File::find_bool(std::string_view key) const {
  return typed<bool>(*this, key, "a bool", &Value::to_bool);
}
const Value* File::find_array(std::string_view key) const {
  const KeyValue* kv = find(key);
  if (kv == nullptr) return nullptr;
  if (kv->value.type() != ValueType::ARRAY) {
    fail("offset " + std::to_string(kv->offset) + ": metadata '" + std::string(key) + "' is " +
         std::string(value_type_name(kv->value.type())) + " " + kv->value.to_display(4) + ", expected an array");
  }
  return &kv->value;
}

std::string_view File::get_string(std::string_view key) const { return required(*this, key, find_string(key)); }
uint64_t File::get_uint(std::string_view key) const { return required(*this, key, find_uint(key)); }
int64_t File::get_int(std::string_view key) const { return required(*this, key, find_int(key)); }
double File::get_float(std::string_view key) const { return required(*this, key, find_float(key)); }
bool File::get_bool(std::string_view key) const { return required(*this, key, find_bool(key)); }
const Value& File::get_array(std::string_view key) const {
  if (const Value* v = find_array(key)) return *v;
  fail("metadata key '" + std::string(key) + "' is missing");
}

}  // namespace gguf
