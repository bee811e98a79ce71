// Reading the files Linux and Android expose about the device (sysfs, procfs,
// build.prop) under a root directory, so the tests replay captured trees of
// real phones the way the topology tests do. Every read may fail (a container
// without cpufreq, a phone whose SELinux policy hides thermal zones from the
// shell): failures are nullopt, never exceptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

class FsRoot {
 public:
  explicit FsRoot(std::string root = "/");

  // The running system itself: commands (getprop, settings) are only run then.
  bool is_live() const { return live_; }
  const std::string& root() const { return root_; }
  // "<root>/sys/..." for an absolute path "/sys/...".
  std::string path(std::string_view absolute) const;

  // The whole file with trailing whitespace and NULs removed (device-tree
  // strings end in NUL).
  std::optional<std::string> read(std::string_view absolute) const;
  // The first whitespace-separated number of the file.
  std::optional<uint64_t> read_u64(std::string_view absolute) const;
  std::optional<int64_t> read_i64(std::string_view absolute) const;
  // Entry names of a directory, sorted naturally (thermal_zone2 before
  // thermal_zone10); empty when it cannot be listed.
  std::vector<std::string> list(std::string_view absolute) const;
  bool exists(std::string_view absolute) const;

 private:
  std::string root_;
  bool live_;
};

// "key=value" lines of a build.prop file: the value of `key`, if present.
std::optional<std::string> prop_value(std::string_view build_prop, std::string_view key);

// Runs a program found in $PATH (no shell: Android has no /bin/sh for a
// static glibc binary) and returns its standard output with trailing
// whitespace removed; nullopt when the program is missing, fails or does not
// answer within timeout_ms.
std::optional<std::string> run_program(const std::string& name, const std::vector<std::string>& args,
                                       int timeout_ms = 3000);

// Natural order: digits compare as numbers ("zone2" < "zone10").
bool natural_less(std::string_view a, std::string_view b);

}  // namespace bench
