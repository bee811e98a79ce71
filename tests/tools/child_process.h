// The tools as separate processes, for what check_tool.cmake cannot do: files
// a test makes first (FIFOs, device nodes, links), signals sent mid-run.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace tool_test {

// The folder of the built tools (ENGINE_TOOL_DIR) joined with `name`.
std::string tool(const std::string& name);

struct Outcome {
  int exit_code = -1;  // -1 when a signal ended it
  int signal = 0;
  std::string out, err;
};

// A running tool with its stdout and stderr captured. stdin is /dev/null, or
// a pipe that gives `stdin_text` and then ends (at most 64 KiB, a pipe's
// buffer, so writing it never waits for the child).
class Child {
 public:
  Child(const std::string& binary, const std::vector<std::string>& args);
  Child(const std::string& binary, const std::vector<std::string>& args, const std::string& stdin_text);
  ~Child();  // kills and reaps a child still running
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Collects output until stdout holds at least `bytes` bytes, the child
  // closes its pipes, or `timeout` passes; true in the first case.
  bool wait_for_stdout(size_t bytes, std::chrono::milliseconds timeout);
  void send(int signal);
  // Waits until the child handles `signal` (a handler installed: its
  // SigCgt in /proc), so a signal sent then is not the default action.
  bool wait_for_handler(int signal, std::chrono::milliseconds timeout) const;
  // Collects the rest and reaps the child; a child still running after
  // `timeout` is killed (and reported as killed by SIGKILL).
  Outcome finish(std::chrono::milliseconds timeout = std::chrono::seconds(120));

 private:
  void start(const std::string& binary, const std::vector<std::string>& args, const std::string* stdin_text);
  bool pump(std::chrono::milliseconds timeout);  // false once both pipes are closed
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  Outcome result_;
};

// Runs a tool to the end.
Outcome run(const std::string& binary, const std::vector<std::string>& args);
Outcome run(const std::string& binary, const std::vector<std::string>& args, const std::string& stdin_text);

// Writes a tiny random F32 llama model (2 layers, n_embd 64, the byte-level
// vocabulary of 300 tokens) to `path` with synth; throws when synth fails.
void synth_tiny_model(const std::string& path);

}  // namespace tool_test
