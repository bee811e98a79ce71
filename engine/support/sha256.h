// SHA-256 (FIPS 180-4), written out so the engine and its tools need no crypto
// library: bench digests model files with it, and the repack cache keys on the
// digest of a model's header (engine/model/repack_cache.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace engine {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<uint8_t, 32> finish();  // the object must not be updated afterwards
  static std::string hex(const std::array<uint8_t, 32>& digest);
  static std::string of(std::string_view s);  // hex digest of a string

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

}  // namespace engine
