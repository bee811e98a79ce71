// Errors the engine reports to its caller: bad model files, bad parameters, a
// context that is full. The C API turns them into error codes and messages.
#pragma once

#include <stdexcept>

namespace engine {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace engine
