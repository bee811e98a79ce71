#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>

#include "engine/model/load_options.h"
#include "engine/support/error.h"

namespace engine {

const char* cache_state_name(CacheState s) {
  switch (s) {
    case CacheState::off: return "off";
    case CacheState::hit: return "hit";
    case CacheState::written: return "written";
    case CacheState::write_failed: return "write failed";
  }
  return "unknown";
}

std::string cache_dir_from_env() {
  const char* dir = std::getenv("ENGINE_CACHE_DIR");
  return dir != nullptr ? dir : "";
}

std::string describe_load(const LoadStats& s) {
  const auto ms = [](double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f ms", seconds * 1000);
    return std::string(buf);
  };
  std::string line = "load " + ms(s.load_seconds) + " (repack " + ms(s.repack_seconds);
  if (s.cache != CacheState::off) line += std::string("; repack cache ") + cache_state_name(s.cache) + " " + ms(s.cache_seconds);
  line += ")";
  if (s.read_seconds >= 0) line += "; a plain read of the file " + ms(s.read_seconds);
  return line;
}

double time_plain_read(const std::string& path) {
  const auto fail = [&](const char* what) {
    throw Error(path + ": cannot " + what + " for the plain read: " + std::strerror(errno));
  };
  const auto start = std::chrono::steady_clock::now();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("open");
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    fail("stat");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  // An anonymous mapping, not the heap: it goes back to the OS at once.
  void* buf = size > 0 ? mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : nullptr;
  if (buf == MAP_FAILED) {
    const int e = errno;
    ::close(fd);
    errno = e;
    fail("allocate a buffer");
  }
  constexpr uint64_t kChunk = uint64_t{4} << 20;
  uint64_t done = 0;
  int error = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, static_cast<uint8_t*>(buf) + done, std::min(kChunk, size - done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;  // a file that shrank while read
      break;
    }
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  if (buf != nullptr) munmap(buf, size);
  if (error != 0) {
    errno = error;
    fail("read");
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace engine
