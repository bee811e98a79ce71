#include "tests/tools/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>
#include <stdexcept>

namespace tool_test {

std::string tool(const std::string& name) { return std::string(ENGINE_TOOL_DIR) + "/" + name; }

Child::Child(const std::string& binary, const std::vector<std::string>& args) { start(binary, args, nullptr); }

Child::Child(const std::string& binary, const std::vector<std::string>& args, const std::string& stdin_text) {
  start(binary, args, &stdin_text);
}

void Child::start(const std::string& binary, const std::vector<std::string>& args, const std::string* stdin_text) {
  int out[2], err[2], in[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
      (stdin_text != nullptr && ::pipe2(in, O_CLOEXEC) != 0)) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  if (stdin_text != nullptr && stdin_text->size() > 65536) throw std::runtime_error("stdin text above 64 KiB");
  std::vector<std::string> argv_text = {binary};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    const int input = stdin_text != nullptr ? in[0] : ::open("/dev/null", O_RDONLY);
    ::dup2(input, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  if (stdin_text != nullptr) {
    // Written while this process still holds the read end: a child that
    // already exited cannot make the write raise SIGPIPE.
    const ssize_t written = ::write(in[1], stdin_text->data(), stdin_text->size());
    ::close(in[0]);
    ::close(in[1]);
    if (written != static_cast<ssize_t>(stdin_text->size())) throw std::runtime_error("writing the child's stdin failed");
  }
  out_fd_ = out[0];
  err_fd_ = err[0];
}

Child::~Child() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
}

bool Child::pump(std::chrono::milliseconds timeout) {
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  if (out_fd_ < 0 && err_fd_ < 0) return false;
  const int n = ::poll(fds, 2, static_cast<int>(timeout.count()));
  if (n <= 0) return true;
  int* fd[2] = {&out_fd_, &err_fd_};
  std::string* text[2] = {&result_.out, &result_.err};
  for (int i = 0; i < 2; ++i) {
    if (fds[i].revents == 0) continue;
    char buf[4096];
    const ssize_t got = ::read(*fd[i], buf, sizeof buf);
    if (got > 0) {
      text[i]->append(buf, static_cast<size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      ::close(*fd[i]);
      *fd[i] = -1;
    }
  }
  return out_fd_ >= 0 || err_fd_ >= 0;
}

bool Child::wait_for_stdout(size_t bytes, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (result_.out.size() < bytes) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !pump(left)) break;
  }
  return result_.out.size() >= bytes;
}

void Child::send(int signal) { ::kill(pid_, signal); }

bool Child::wait_for_handler(int signal, std::chrono::milliseconds timeout) const {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("SigCgt:") && ((std::stoull(line.substr(7), nullptr, 16) >> (signal - 1)) & 1) != 0) {
        return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

Outcome Child::finish(std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid_, SIGKILL);
      break;
    }
    if (!pump(left)) break;
  }
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result_.signal = WTERMSIG(status);
  return result_;
}

Outcome run(const std::string& binary, const std::vector<std::string>& args) { return Child(binary, args).finish(); }

Outcome run(const std::string& binary, const std::vector<std::string>& args, const std::string& stdin_text) {
  return Child(binary, args, stdin_text).finish();
}

void synth_tiny_model(const std::string& path) {
  const Outcome o = run(tool("synth"), {"--arch", "llama", "--n-embd", "64", "--n-layer", "2", "--n-head", "4", "--n-ff",
                                        "128", "--n-vocab", "300", "--type", "F32", "--no-progress", "-o", path});
  if (o.exit_code != 0) throw std::runtime_error("synth failed: " + o.err);
}

}  // namespace tool_test
