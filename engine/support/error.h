// Errors the engine reports to its caller: bad model files, bad parameters, a
// context that is full. The C API turns them into error codes and messages.
#pragma once

#include <stdexcept>

namespace engine {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The model cannot be used: tensors that disagree with its hyperparameters,
// or weights that turn the activations into NaN or Inf (C API: ENGINE_ERR_MODEL).
class ModelError : public Error {
 public:
  using Error::Error;
};

// A session or buffer that would not fit in the memory available, refused
// before anything was allocated (C API: ENGINE_ERR_OUT_OF_MEMORY).
class ResourceError : public Error {
 public:
  using Error::Error;
};

// An evaluation stopped by the session's abort check (C API: ENGINE_ERR_ABORTED).
class Aborted : public Error {
 public:
  using Error::Error;
};

// A model load stopped by its progress callback (C API: ENGINE_ERR_CANCELLED).
class Cancelled : public Error {
 public:
  using Error::Error;
};

// A saved session that cannot be written or read, or is not one this session
// can take (another model, KV type or shape; truncated or corrupt): C API
// ENGINE_ERR_FILE.
class SessionFileError : public Error {
 public:
  using Error::Error;
};

}  // namespace engine
