// Whether the client of a request is still there. cpp-httplib (0.11, as
// Debian ships it) gives a handler the peer's address but not its socket, and
// reading nothing from a socket is how a server learns the peer closed it: the
// socket is found once by its peer address among the process's descriptors,
// then peeked at (no data taken) when asked. A client that disconnects mid-
// prompt or mid-reply stops its generation at the next check.
#pragma once

#include <chrono>
#include <string>

namespace serve {

class PeerConnection {
 public:
  PeerConnection(const std::string& remote_addr, int remote_port);
  // True once the peer has closed or reset the connection. Unknown socket:
  // false (then a failed write is what ends a stream).
  bool gone() const;
  // gone(), looked at most every `interval` (an evaluation polls this often).
  bool gone_throttled(std::chrono::milliseconds interval = std::chrono::milliseconds(20)) const;
  bool found() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::string addr_;
  int port_ = -1;
  mutable std::chrono::steady_clock::time_point last_check_{};
  mutable bool gone_ = false;
};

}  // namespace serve
