// Writing an output file without destroying what the user did not ask to make:
// the one path every tool's output goes through (GGUF models, bench reports and
// charts, dumped logits, caches).
//
// An output path that exists must be a regular file, or a symbolic link whose
// final target is one: a directory, a device node, a FIFO or a socket is
// refused with an error naming the path and what it is. (Renaming a temporary
// file over /dev/full, run as root, turned the device into a 223 MiB file.)
// A symbolic link is written through: its final target is replaced and the
// link stays. A dangling link is refused, as cp refuses it: its target may be
// on a path the user did not mean.
//
// The bytes go to a temporary file beside the (resolved) target, renamed over
// it only once everything is on disk, so a failed or interrupted write never
// leaves a half file under the final name; the temporary file is removed on
// every error path, exceptions included.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace gguf {

// Where a write to `path` lands: `path` itself, or the final target of the
// symbolic link `path` is. Throws gguf::Error naming `path` when it exists and
// is not a regular file (nor a link to one), or its folder does not exist.
std::string resolve_output_path(const std::string& path);

class OutputFile {
 public:
  // Checks `path` (resolve_output_path) and creates the temporary file beside
  // its target. Errors name `path`, as given. A file that replaces another
  // keeps that file's permissions; a new one gets `new_file_mode` (0600 for
  // what holds a user's text, such as a saved session).
  explicit OutputFile(const std::string& path, mode_t new_file_mode = 0644);
  ~OutputFile();  // closes and removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Every byte, or throws gguf::Error naming the path.
  void write(const void* data, size_t size);
  // Flushes to disk and renames the temporary file over the target, after
  // checking again that the target is still not something else.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& target() const { return target_; }
  const std::string& temp_path() const { return temp_; }

 private:
  std::string path_;    // as given
  std::string target_;  // where it lands: `path_`, or its link's final target
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

// The whole file at once: OutputFile, write, commit.
void write_output_file(const std::string& path, std::string_view contents);

}  // namespace gguf
