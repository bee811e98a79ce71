#include "engine/model/repack_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "engine/support/error.h"
#include "engine/support/sha256.h"

namespace engine {
namespace {

constexpr char kMagic[8] = {'E', 'N', 'G', 'R', 'P', 'K', 'C', '\n'};
constexpr uint64_t kFixedBytes = 40;        // magic, version, key length, entries, data offset, data bytes
constexpr uint64_t kMaxHeader = 64u << 20;  // far above any model's tensor index
constexpr uint64_t kPage = 4096;

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

template <class T>
void put(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

// A bounds-checked reader over the header: a short field is a false, never a read past it.
struct Cursor {
  std::span<const uint8_t> bytes;
  uint64_t at = 0;
  template <class T>
  bool get(T* v) {
    if (bytes.size() - at < sizeof(T)) return false;
    std::memcpy(v, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return true;
  }
  bool get(std::string* s, uint64_t n) {
    if (bytes.size() - at < n) return false;
    s->assign(reinterpret_cast<const char*>(bytes.data()) + at, n);
    at += n;
    return true;
  }
};

// Reads exactly n bytes at offset off; false on a short read or an error.
bool read_at(int fd, uint8_t* out, uint64_t n, uint64_t off) {
  while (n > 0) {
    const ssize_t r = pread(fd, out, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    out += r, off += static_cast<uint64_t>(r), n -= static_cast<uint64_t>(r);
  }
  return true;
}

bool write_all(int fd, const uint8_t* p, uint64_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w, n -= static_cast<uint64_t>(w);
  }
  return true;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string repack_cache_path(const std::string& dir, const std::string& model_path) {
  return (std::filesystem::path(dir) / (std::filesystem::path(model_path).filename().string() + ".enginecache"))
      .string();
}

std::string repack_cache_key(const gguf::File& file, const KernelPlan& plan) {
  struct stat st {};
  if (stat(file.path().c_str(), &st) != 0) {
    throw Error(file.path() + ": cannot stat the model for its repack cache: " + std::strerror(errno));
  }
  Sha256 h;
  h.update(file.header_bytes().data(), file.header_bytes().size());
  std::string key = "engine repack cache " + std::to_string(kRepackCacheVersion) + "\nmodel size " +
                    std::to_string(st.st_size) + " mtime " + std::to_string(st.st_mtim.tv_sec) + "." +
                    std::to_string(st.st_mtim.tv_nsec) + " device " + std::to_string(st.st_dev) + " inode " +
                    std::to_string(st.st_ino) + "\nheader sha256 " + Sha256::hex(h.finish()) + "\ncpu " +
                    plan.cpu.describe() + "\n";
  for (const kernels::MatmulSelection& s : plan.selections) {
    key += "kernel " + std::string(gguf::type_name(s.weight_type)) + " " +
           (s.kernel != nullptr ? std::string(s.kernel->name) + " " + std::string(kernels::tier_name(s.kernel->tier)) : "none") +
           "\n";
  }
  return key;
}

std::unique_ptr<RepackCache> RepackCache::open(const std::string& path, const std::string& key, std::string* why) {
  why->clear();
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) {
    if (errno != ENOENT) *why = std::string("cannot open it: ") + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (fstat(f.fd, &st) != 0) {
    *why = std::string("cannot stat it: ") + std::strerror(errno);
    return nullptr;
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  uint8_t fixed[kFixedBytes];
  if (size < kFixedBytes || !read_at(f.fd, fixed, kFixedBytes, 0)) {
    *why = "truncated (" + std::to_string(size) + " bytes, shorter than its header)";
    return nullptr;
  }
  Cursor c{{fixed, kFixedBytes}};
  std::string magic;
  uint32_t version = 0, key_len = 0;
  uint64_t n_entries = 0, data_offset = 0, data_bytes = 0;
  c.get(&magic, sizeof kMagic), c.get(&version), c.get(&key_len), c.get(&n_entries), c.get(&data_offset),
      c.get(&data_bytes);
  if (magic != std::string_view(kMagic, sizeof kMagic)) {
    *why = "not a repack cache (bad magic)";
    return nullptr;
  }
  if (version != kRepackCacheVersion) {
    *why = "format version " + std::to_string(version) + ", this engine writes " +
           std::to_string(kRepackCacheVersion);
    return nullptr;
  }
  if (data_offset < kFixedBytes || data_offset > kMaxHeader || data_offset % kPage != 0 || data_offset > size ||
      data_bytes != size - data_offset) {
    *why = "truncated or corrupt (" + std::to_string(size) + " bytes; its header says data at " +
           std::to_string(data_offset) + ", " + std::to_string(data_bytes) + " bytes)";
    return nullptr;
  }
  std::vector<uint8_t> header(data_offset);
  if (!read_at(f.fd, header.data(), data_offset, 0)) {
    *why = "cannot read its header";
    return nullptr;
  }
  c = Cursor{header, kFixedBytes};
  std::string stored_key;
  if (!c.get(&stored_key, key_len)) {
    *why = "corrupt (its key runs past the header)";
    return nullptr;
  }
  std::unique_ptr<RepackCache> cache(new RepackCache);
  for (uint64_t i = 0; i < n_entries; ++i) {
    uint32_t name_len = 0;
    std::string name;
    Entry e;
    if (!c.get(&name_len) || !c.get(&name, name_len) || !c.get(&e.offset) || !c.get(&e.bytes) ||
        e.offset > data_bytes || e.bytes > data_bytes - e.offset || e.offset % 64 != 0) {
      *why = "corrupt (entry " + std::to_string(i) + " of " + std::to_string(n_entries) + " does not fit)";
      return nullptr;
    }
    cache->entries_.emplace(std::move(name), e);
  }
  Sha256 h;
  h.update(header.data(), c.at);
  const std::array<uint8_t, 32> digest = h.finish();
  if (header.size() - c.at < digest.size() || std::memcmp(header.data() + c.at, digest.data(), digest.size()) != 0) {
    *why = "corrupt (its header's checksum does not match)";
    return nullptr;
  }
  if (stored_key != key) {
    *why = "stale (made for another model file or other kernels)";
    return nullptr;
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, f.fd, 0);
  if (map == MAP_FAILED) {
    *why = std::string("cannot map it: ") + std::strerror(errno);
    return nullptr;
  }
  // Read ahead in the background: the first decode reads every page.
  madvise(map, size, MADV_WILLNEED);
  cache->map_ = static_cast<uint8_t*>(map);
  cache->size_ = size;
  cache->data_offset_ = data_offset;
  return cache;
}

RepackCache::~RepackCache() {
  if (map_ != nullptr) munmap(map_, size_);
}

const uint8_t* RepackCache::find(std::string_view name, uint64_t bytes) const {
  const auto it = entries_.find(std::string(name));
  if (it == entries_.end() || it->second.bytes != bytes) return nullptr;
  return map_ + data_offset_ + it->second.offset;
}

void write_repack_cache(const std::string& path, const std::string& key, std::span<const RepackEntry> entries,
                        const std::function<bool(uint64_t)>& progress) {
  std::vector<uint8_t> header(kMagic, kMagic + sizeof kMagic);
  std::vector<uint64_t> offsets;
  uint64_t data_bytes = 0;
  for (const RepackEntry& e : entries) {
    offsets.push_back(data_bytes);
    data_bytes = round_up(data_bytes + e.bytes, 64);
  }
  std::vector<uint8_t> body;
  body.insert(body.end(), key.begin(), key.end());
  for (size_t i = 0; i < entries.size(); ++i) {
    put(body, static_cast<uint32_t>(entries[i].name.size()));
    body.insert(body.end(), entries[i].name.begin(), entries[i].name.end());
    put(body, offsets[i]);
    put(body, entries[i].bytes);
  }
  const uint64_t data_offset = round_up(kFixedBytes + body.size() + 32, kPage);
  put(header, kRepackCacheVersion);
  put(header, static_cast<uint32_t>(key.size()));
  put(header, static_cast<uint64_t>(entries.size()));
  put(header, data_offset);
  put(header, data_bytes);
  header.insert(header.end(), body.begin(), body.end());
  Sha256 h;
  h.update(header.data(), header.size());
  const std::array<uint8_t, 32> digest = h.finish();
  header.insert(header.end(), digest.begin(), digest.end());
  header.resize(data_offset, 0);

  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (f.fd < 0) throw Error(tmp + ": cannot create the repack cache: " + std::strerror(errno));
  const auto give_up = [&](const std::string& what) {
    const int e = errno;
    ::close(f.fd);
    f.fd = -1;
    ::unlink(tmp.c_str());
    if (what.empty()) throw Cancelled("the model load was cancelled while writing the repack cache " + path);
    throw Error(tmp + ": cannot " + what + " the repack cache: " + std::strerror(e));
  };
  if (!write_all(f.fd, header.data(), header.size())) give_up("write");
  static constexpr uint8_t kZeros[64] = {};
  uint64_t written = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const uint64_t pad = (i + 1 < entries.size() ? offsets[i + 1] : data_bytes) - offsets[i] - entries[i].bytes;
    if (!write_all(f.fd, entries[i].data, entries[i].bytes) || !write_all(f.fd, kZeros, pad)) give_up("write");
    written += entries[i].bytes + pad;
    if (progress && !progress(written)) give_up("");
  }
  if (::close(f.fd) != 0) {
    f.fd = -1;
    give_up("close");
  }
  f.fd = -1;
  if (::rename(tmp.c_str(), path.c_str()) != 0) give_up("rename");
}

}  // namespace engine
