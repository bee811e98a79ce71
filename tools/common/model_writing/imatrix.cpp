#include "tools/common/model_writing/imatrix.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

#include "gguf/file.h"

namespace tools {
namespace {

constexpr std::string_view kSums = ".in_sum2";
constexpr std::string_view kCounts = ".counts";

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw ImatrixError(path + ": " + what);
}

void check_finite(const Imatrix& m) {
  for (const auto& [name, weights] : m.entries) {
    for (size_t i = 0; i < weights.size(); ++i) {
      if (!std::isfinite(weights[i])) {
        fail(m.path, "entry '" + name + "': value " + std::to_string(i) + " is not finite (" +
                         std::to_string(weights[i]) + "); llama-quantize refuses such a matrix too");
      }
    }
  }
}

std::vector<float> f32_values(const gguf::File& f, const gguf::TensorInfo& t) {
  if (t.type != gguf::GgmlType::F32) {
    f.fail("tensor '" + std::string(t.name) + "' is " + std::string(gguf::type_name(t.type)) +
           "; an importance matrix holds F32 tensors");
  }
  std::vector<float> v(t.n_elements);
  std::memcpy(v.data(), f.tensor_data(t), t.n_elements * sizeof(float));
  return v;
}

Imatrix load_gguf(const std::string& path) {
  const gguf::File f = gguf::File::open(path);
  Imatrix m;
  m.path = path;
  const gguf::Value* datasets = f.find_array("imatrix.datasets");
  const std::optional<uint64_t> chunk_count = f.find_uint("imatrix.chunk_count");
  if (datasets == nullptr || !chunk_count || !f.find_uint("imatrix.chunk_size")) {
    f.fail("missing importance matrix metadata (imatrix.datasets, imatrix.chunk_count and imatrix.chunk_size, "
           "which llama-imatrix writes and llama-quantize requires): is this an imatrix file?");
  }
  if (datasets->array_type() == gguf::ValueType::STRING) {
    for (uint64_t i = 0; i < datasets->array_size(); ++i) {
      m.datasets.emplace_back(datasets->at(i).to_string().value_or(""));
    }
  }
  m.chunk_count = static_cast<uint32_t>(*chunk_count);

  // Pair W.in_sum2 with W.counts; other tensors are ignored, as in llama.cpp.
  std::map<std::string, std::pair<const gguf::TensorInfo*, const gguf::TensorInfo*>, std::less<>> pairs;
  for (const gguf::TensorInfo& t : f.tensors()) {
    if (ends_with(t.name, kSums)) {
      pairs[std::string(t.name.substr(0, t.name.size() - kSums.size()))].first = &t;
    } else if (ends_with(t.name, kCounts)) {
      pairs[std::string(t.name.substr(0, t.name.size() - kCounts.size()))].second = &t;
    }
  }
  if (pairs.empty()) f.fail("no importance data: no '<weight>.in_sum2' / '<weight>.counts' tensors");
  for (const auto& [name, pair] : pairs) {
    const auto [sums_info, counts_info] = pair;
    if (sums_info == nullptr || counts_info == nullptr) {
      f.fail("tensor '" + name + (sums_info == nullptr ? std::string(kCounts) : std::string(kSums)) + "' has no '" +
             name + (sums_info == nullptr ? std::string(kSums) : std::string(kCounts)) + "' beside it");
    }
    const std::vector<float> sums = f32_values(f, *sums_info);
    const std::vector<float> counts = f32_values(f, *counts_info);
    if (counts.empty() || sums.size() % counts.size() != 0) {
      f.fail("tensor '" + name + std::string(kSums) + "' " + sums_info->shape_string() + " does not hold one row per " +
             "count of '" + name + std::string(kCounts) + "' " + counts_info->shape_string());
    }
    const size_t columns = sums.size() / counts.size();
    std::vector<float>& w = m.entries[name];
    w.resize(sums.size());
    for (size_t j = 0; j < counts.size(); ++j) {
      const float count = static_cast<float>(std::lround(counts[j]));
      for (size_t i = 0; i < columns; ++i) w[j * columns + i] = count > 0.0f ? sums[j * columns + i] / count : 1.0f;
    }
  }
  return m;
}

// The legacy .dat format, read strictly: anything that does not fit it (a
// file of another kind) is named as such, not half-read.
class DatReader {
 public:
  DatReader(std::string path, std::vector<char> bytes) : path_(std::move(path)), bytes_(std::move(bytes)) {}
  bool done() const { return at_ == bytes_.size(); }
  int32_t i32(const std::string& what) {
    int32_t v;
    take(&v, sizeof v, what);
    return v;
  }
  void take(void* dst, size_t n, const std::string& what) {
    check_remaining(n, what);
    std::memcpy(dst, bytes_.data() + at_, n);
    at_ += n;
  }
  void check_remaining(size_t n, const std::string& what) const {
    if (n > bytes_.size() - at_) {
      fail(path_, "not an importance matrix: not GGUF, and read as llama.cpp's legacy .dat format, reading " +
                      what + " goes past the end of the file (" + std::to_string(bytes_.size()) + " bytes)");
    }
  }
  [[noreturn]] void bad(const std::string& what) const {
    fail(path_, "not an importance matrix: not GGUF, and read as llama.cpp's legacy .dat format, " + what);
  }

 private:
  std::string path_;
  std::vector<char> bytes_;
  size_t at_ = 0;
};

Imatrix load_dat(const std::string& path, std::vector<char> bytes) {
  Imatrix m;
  m.path = path;
  m.legacy = true;
  DatReader r(path, std::move(bytes));
  const int32_t n_entries = r.i32("the entry count");
  if (n_entries < 1) r.bad("it has " + std::to_string(n_entries) + " entries");
  for (int32_t e = 0; e < n_entries; ++e) {
    const std::string which = "entry " + std::to_string(e + 1);
    const int32_t len = r.i32("the name length of " + which);
    if (len < 1 || len > 4096) r.bad(which + " has a name length of " + std::to_string(len));
    std::string name(static_cast<size_t>(len), '\0');
    r.take(name.data(), name.size(), "the name of " + which);
    const int32_t ncall = r.i32("the call count of entry '" + name + "'");
    const int32_t nval = r.i32("the value count of entry '" + name + "'");
    if (nval < 1) r.bad("entry '" + name + "' has " + std::to_string(nval) + " values");
    // Checked before allocating: a damaged count must not ask for gigabytes.
    const std::string values_name = "the " + std::to_string(nval) + " values of entry '" + name + "'";
    r.check_remaining(static_cast<size_t>(nval) * sizeof(float), values_name);
    std::vector<float> values(static_cast<size_t>(nval));
    r.take(values.data(), values.size() * sizeof(float), values_name);
    if (ncall > 0) {
      for (float& v : values) v = v / static_cast<float>(ncall);
    }
    m.entries[name] = std::move(values);
  }
  // The chunk count and dataset name that follow are optional, as in llama.cpp.
  if (!r.done()) {
    m.chunk_count = static_cast<uint32_t>(std::max(0, r.i32("the chunk count")));
    if (!r.done()) {
      const int32_t len = r.i32("the dataset name's length");
      if (len > 0 && len <= 4096) {
        std::string dataset(static_cast<size_t>(len), '\0');
        r.take(dataset.data(), dataset.size(), "the dataset name");
        m.datasets.push_back(dataset.c_str());  // up to a NUL, as llama.cpp reads it
      }
    }
  }
  return m;
}

}  // namespace

const std::vector<float>* imatrix_entry_for(const Imatrix& m, std::string_view name, const std::array<uint64_t, 4>& ne) {
  const auto it = m.entries.find(name);
  if (it == m.entries.end()) return nullptr;
  const uint64_t want = ne[0] * ne[2];
  if (it->second.size() == want) return &it->second;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return nullptr;
  fail(m.path, "entry '" + std::string(name) + "' has " + std::to_string(it->second.size()) + " weights, but tensor '" +
                   std::string(name) + "' needs " + std::to_string(want) + " (one per input column: " +
                   std::to_string(ne[0]) + (ne[2] > 1 ? " for each of " + std::to_string(ne[2]) + " experts" : "") +
                   "): the matrix was made for another model");
}

void record_imatrix(gguf::Writer& writer, const Imatrix& m) {
  auto set_string = [&](std::string_view key, const std::string& value) {
    writer.remove(key);
    writer.set_string(key, std::string_view(value).substr(0, 127));
  };
  auto set_u32 = [&](std::string_view key, uint32_t value) {
    writer.remove(key);
    writer.set_u32(key, value);
  };
  set_string("quantize.imatrix.file", m.path);
  if (!m.datasets.empty()) set_string("quantize.imatrix.dataset", m.datasets[0]);
  set_u32("quantize.imatrix.entries_count", static_cast<uint32_t>(m.entries.size()));
  if (m.chunk_count > 0) set_u32("quantize.imatrix.chunks_count", m.chunk_count);
}

Imatrix load_imatrix(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Imatrix m = bytes.size() >= 4 && std::memcmp(bytes.data(), "GGUF", 4) == 0 ? load_gguf(path)
                                                                            : load_dat(path, std::move(bytes));
  check_finite(m);
  return m;
}

}  // namespace tools
