#include "tools/bench/sha256.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "gguf/writer_output.h"

namespace bench {

std::string sha256_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  Sha256 h;
  std::vector<uint8_t> buf(1 << 20);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(path + ": read failed: " + std::strerror(err));
    }
    if (n == 0) break;
    h.update(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return Sha256::hex(h.finish());
}

namespace {

bool make_dirs(const std::string& dir) {
  std::string partial;
  size_t start = 0;
  while (start <= dir.size()) {
    size_t end = dir.find('/', start);
    if (end == std::string::npos) end = dir.size();
    partial = dir.substr(0, end);
    start = end + 1;
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return ::access(dir.c_str(), W_OK) == 0;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// One line per file: "<sha256> <size> <mtime seconds>.<nanoseconds> <absolute path>".
constexpr const char* kCacheName = "/sha256-cache.txt";

}  // namespace

std::string default_cache_dir() {
  std::vector<std::string> candidates;
  if (!env("XDG_CACHE_HOME").empty()) candidates.push_back(env("XDG_CACHE_HOME") + "/engine");
  if (!env("HOME").empty() && env("HOME") != "/") candidates.push_back(env("HOME") + "/.cache/engine");
  if (!env("TMPDIR").empty()) candidates.push_back(env("TMPDIR") + "/engine-cache");
  candidates.push_back("/data/local/tmp/engine-cache");
  for (const std::string& dir : candidates) {
    if (dir.rfind("/data/local/tmp", 0) == 0 && ::access("/data/local/tmp", W_OK) != 0) continue;
    if (make_dirs(dir)) return dir;
  }
  return "";
}

FileDigest cached_sha256(const std::string& path, const std::string& cache_dir) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw std::runtime_error(path + ": cannot stat: " + std::strerror(errno));
  char resolved[PATH_MAX];
  const std::string abs = ::realpath(path.c_str(), resolved) != nullptr ? resolved : path;
  char key[96];
  std::snprintf(key, sizeof key, "%llu %lld.%09ld", static_cast<unsigned long long>(st.st_size),
                static_cast<long long>(st.st_mtim.tv_sec), static_cast<long>(st.st_mtim.tv_nsec));
  const std::string suffix = std::string(key) + " " + abs;

  FileDigest d;
  const std::string dir = cache_dir.empty() ? default_cache_dir() : (make_dirs(cache_dir) ? cache_dir : "");
  if (!dir.empty()) d.cache_file = dir + kCacheName;
  std::vector<std::string> kept;
  if (!d.cache_file.empty()) {
    std::ifstream in(d.cache_file);
    std::string line;
    while (std::getline(in, line)) {
      if (line.size() > 65 && line[64] == ' ' && line.compare(65, std::string::npos, suffix) == 0) {
        d.sha256 = line.substr(0, 64);
        d.source = "cache";
        return d;
      }
      // Entries for other files stay; stale entries for this path are dropped.
      const size_t path_at = line.find(' ', line.find(' ', 65) + 1);
      if (path_at != std::string::npos && line.compare(path_at + 1, std::string::npos, abs) == 0) continue;
      if (!line.empty()) kept.push_back(line);
    }
  }
  d.sha256 = sha256_file(path);
  d.source = "computed";
  if (!d.cache_file.empty()) {
    std::string text;
    for (const std::string& line : kept) text += line + '\n';
    text += d.sha256 + ' ' + suffix + '\n';
    try {
      gguf::write_output_file(d.cache_file, text);
    } catch (const std::exception&) {
      d.cache_file.clear();  // a cache that cannot be written only costs the next run a hash
    }
  }
  return d;
}

}  // namespace bench
