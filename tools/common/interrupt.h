// Ctrl-C that stops a tool's work, not the process: while a StopOnInterrupt
// lives, SIGINT only sets a flag the work loop checks, so the tool can report
// what it did and exit 130 (128 + SIGINT, what a shell reports for an
// interrupted command). A second Ctrl-C ends the process at once
// (SA_RESETHAND restores the default action after the first).
#pragma once

#include <signal.h>

#include <csignal>

namespace tools {

class StopOnInterrupt {
 public:
  static constexpr int kExitCode = 130;

  StopOnInterrupt() {
    flag_ = 0;
    struct sigaction sa {};
    sa.sa_handler = [](int) { flag_ = 1; };
    sa.sa_flags = SA_RESETHAND | SA_RESTART;  // SA_RESTART: no EINTR in the output being written
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &previous_);
  }
  ~StopOnInterrupt() { ::sigaction(SIGINT, &previous_, nullptr); }
  StopOnInterrupt(const StopOnInterrupt&) = delete;
  StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;

  bool requested() const { return flag_ != 0; }

 private:
  static inline volatile std::sig_atomic_t flag_ = 0;
  struct sigaction previous_ {};
};

}  // namespace tools
