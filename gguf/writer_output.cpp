#include "gguf/writer_output.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gguf/file.h"

namespace gguf {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw Error(path + ": " + what); }

std::string errno_text() { return std::strerror(errno); }

// What a file that is not a regular file is, for the error message.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  fail(path, what + ", not a regular file: refusing to replace it (give the path of a file to write)");
}

std::string folder_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string link_text(const std::string& link) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n < 0 ? "?" : std::string(buf, static_cast<size_t>(n));
}

// The final target of the symbolic link `path`, which must be a regular file.
std::string resolve_link(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) {
    if (errno == ENOENT) {
      fail(path, "is a symbolic link to '" + link_text(path) +
                     "', which does not exist: not writing through a dangling link (remove the link, or create "
                     "its target)");
    }
    if (errno == ELOOP) fail(path, "is a symbolic link that loops (too many levels of symbolic links)");
    fail(path, "is a symbolic link that cannot be resolved: " + errno_text());
  }
  std::string target(resolved);
  std::free(resolved);
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) {
    fail(path, "cannot inspect the link's target '" + target + "': " + errno_text());
  }
  if (!S_ISREG(st.st_mode)) refuse(path, "is a symbolic link to '" + target + "', which is " + kind_of(st.st_mode));
  return target;
}

}  // namespace

std::string resolve_output_path(const std::string& path) {
  if (path.empty()) throw Error("no output path given");
  if (path.back() == '/') fail(path, "names a folder, not a file");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) fail(path, "cannot inspect the output path: " + errno_text());
    const std::string folder = folder_of(path);
    struct stat dir {};
    if (::stat(folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)) {
      fail(path, "cannot write there: the folder '" + folder + "' does not exist");
    }
    return path;
  }
  if (S_ISLNK(st.st_mode)) return resolve_link(path);
  if (!S_ISREG(st.st_mode)) refuse(path, std::string("is ") + kind_of(st.st_mode));
  return path;
}

OutputFile::OutputFile(const std::string& path, mode_t new_file_mode) : path_(path), target_(resolve_output_path(path)) {
  temp_ = target_ + ".tmp-XXXXXX";
  fd_ = ::mkstemp(temp_.data());
  if (fd_ < 0) {
    temp_.clear();
    fail(path_, "cannot create a temporary file beside it: " + errno_text());
  }
  // mkstemp makes the file 0600; an output replacing a file keeps that file's
  // permissions, a new one gets the mode asked for.
  struct stat st {};
  const mode_t mode = ::stat(target_.c_str(), &st) == 0 ? (st.st_mode & 07777) : new_file_mode;
  ::fchmod(fd_, mode);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void OutputFile::write(const void* data, size_t size) {
  if (fd_ < 0) fail(path_, "write after the file was closed");
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t w = ::write(fd_, p, size);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(path_, "write failed: " + errno_text());
    }
    p += w;
    size -= static_cast<size_t>(w);
  }
}

void OutputFile::commit() {
  if (fd_ < 0) fail(path_, "committed twice");
  if (::fsync(fd_) != 0) fail(path_, "fsync failed: " + errno_text());
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) fail(path_, "close failed: " + errno_text());
  // The target may have changed while the file was written (a long quantize):
  // look again right before the rename, which would replace whatever is there.
  struct stat st {};
  if (::lstat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    refuse(path_, (target_ == path_ ? std::string("is now ") : "is a link whose target '" + target_ + "' is now ") +
                      kind_of(st.st_mode));
  }
  if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
    fail(path_, "cannot rename the temporary file into place: " + errno_text());
  }
  committed_ = true;
}

void write_output_file(const std::string& path, std::string_view contents) {
  OutputFile out(path);
  out.write(contents.data(), contents.size());
  out.commit();
}

}  // namespace gguf
