// Helpers of the quantize and synth tests: a temporary folder, file stamps
// (to prove a refused run touched nothing), dequantized tensors, the
// environment (qemu and sanitizers run a reduced set).
#pragma once

#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/support/log.h"
#include "gguf/file.h"
#include "kernels/ref/type_ops.h"
#include "tests/support/sanitized.h"
#include "tests/support/shared_data.h"

namespace quantize_test {

// The engine's info lines (kernel choices, thread placement) would drown the
// tests' own lines.
inline const bool kQuietEngine = (engine::set_log_level(engine::LogLevel::warning), true);

inline bool under_qemu() {
  const char* v = std::getenv("ENGINE_QEMU_CPU");
  return v != nullptr && *v != '\0';
}

inline bool sanitized() { return engine_test::kSanitized; }

// qemu and the sanitizers run 10-30x slower: the tests check a subset there
// (the llama model for all three architectures, sampled rows), and say so.
inline bool reduced() { return under_qemu() || sanitized(); }

// The reference K quantizers (Q4_K, Q5_K, Q6_K) are slow under qemu, and 30x
// slower again on -cpu a64fx than on neoverse-n1 (Q4_K of 0.5 M weights: 22 s
// vs 0.7 s): under qemu the tests leave K types to ref_bitexact_test (which
// samples rows) and check the writing path with the other types.
inline bool k_types_too_slow() { return under_qemu(); }

// A temporary folder, removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) : path_(engine_test::temp_dir(prefix)) {}
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }
  // Names in the folder (to find leftover temporary files).
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
    return out;
  }

 private:
  std::filesystem::path path_;
};

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  std::vector<uint8_t> bytes(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

// Size, modification time, inode and contents: equal stamps = untouched file.
struct FileStamp {
  bool exists = false;
  uint64_t size = 0, inode = 0;
  int64_t mtime_ns = 0;
  std::vector<uint8_t> bytes;

  static FileStamp of(const std::string& path) {
    FileStamp s;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return s;
    s.exists = true;
    s.size = static_cast<uint64_t>(st.st_size);
    s.inode = st.st_ino;
    s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    s.bytes = read_bytes(path);
    return s;
  }
  bool operator==(const FileStamp&) const = default;
};

inline void copy_file(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::permissions(to, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
}

inline std::vector<float> dequantize(const gguf::File& f, const gguf::TensorInfo& t) {
  std::vector<float> out(t.n_elements);
  const auto* ops = kernels::ref::type_ops(t.type);
  const uint64_t row_bytes = *gguf::row_bytes(t.type, t.ne[0]);
  for (uint64_t r = 0; r < t.rows(); ++r) {
    ops->dequantize_row(f.tensor_data(t) + r * row_bytes, out.data() + r * t.ne[0], t.ne[0]);
  }
  return out;
}

// sqrt(mean((a - b)^2)) / sqrt(mean(b^2)).
inline double rel_rmse(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    den += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

}  // namespace quantize_test
