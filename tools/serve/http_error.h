// An error answered to the client: the HTTP status and OpenAI's error object
// ({"error": {"message", "type", "param", "code"}}), so clients' own error
// classes (the openai package's BadRequestError, ...) recognise it.
#pragma once

#include <stdexcept>
#include <string>

namespace serve {

struct HttpError : std::runtime_error {
  HttpError(int status_, const std::string& message, std::string param_ = {}, std::string code_ = {})
      : std::runtime_error(message), status(status_), param(std::move(param_)), code(std::move(code_)) {}
  int status;
  std::string param;  // the request field at fault, "" for none
  std::string code;   // OpenAI's machine-readable code, "" for none
};

// OpenAI's error type for a status: invalid_request_error, authentication_error, ...
const char* error_type(int status);

// The error object's JSON text.
std::string error_body(int status, const std::string& message, const std::string& param = {},
                       const std::string& code = {});
inline std::string error_body(const HttpError& e) { return error_body(e.status, e.what(), e.param, e.code); }

}  // namespace serve
