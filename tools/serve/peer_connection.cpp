#include "tools/serve/peer_connection.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>

namespace serve {

namespace {

// The peer of socket fd as "address" and port; false when fd is not a
// connected IP socket.
bool peer_of(int fd, std::string& addr, int& port) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
  char text[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    port = ntohs(in->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof(text));
    port = ntohs(in->sin6_port);
  } else {
    return false;
  }
  addr = text;
  return true;
}

}  // namespace

PeerConnection::PeerConnection(const std::string& remote_addr, int remote_port)
    : addr_(remote_addr), port_(remote_port) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return;
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    std::string addr;
    int port = -1;
    if (peer_of(static_cast<int>(fd), addr, port) && port == remote_port && addr == remote_addr) {
      fd_ = static_cast<int>(fd);
      break;
    }
  }
  closedir(dir);
}

bool PeerConnection::gone() const {
  if (fd_ < 0 || gone_) return gone_;
  char byte = 0;
  const ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    gone_ = true;
  } else {
    // The descriptor may have been closed and taken by another connection.
    std::string addr;
    int port = -1;
    gone_ = !peer_of(fd_, addr, port) || port != port_ || addr != addr_;
  }
  return gone_;
}

bool PeerConnection::gone_throttled(std::chrono::milliseconds interval) const {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_check_ < interval) return gone_;
  last_check_ = now;
  return gone();
}

}  // namespace serve
