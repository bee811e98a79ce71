// serve's HTTP side: OpenAI's /v1/chat/completions, /v1/completions and
// /v1/models, /health, /metrics and the chat page at /, on cpp-httplib, with
// the API key, the limits and the slot pool in front of the engine.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>
#include <memory>
#include <optional>
#include <string>

#include "engine/api/engine.hpp"
#include "tools/serve/metrics.h"
#include "tools/serve/slot_pool.h"

namespace httplib {
class Server;
struct DataSink;
struct Request;
struct Response;
}  // namespace httplib

namespace serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port
  std::string api_key;  // "": none needed
  size_t max_body = size_t{1} << 20;
  size_t max_prompt_tokens = 0;  // 0: the context size
  uint32_t max_tokens = 0;       // the most a request may ask for; 0: the context size
  uint32_t n_ctx = 0;            // each session's
  engine::api::ChatOptions chat;  // the template (--template); "" name and text: the model's
  std::string model_name;        // what /v1/models and the responses call it
  engine_sampler_params sampler = engine_sampler_default_params();  // what a request does not set
};

struct StreamJob;
struct TurnResult;

class Server {
 public:
  Server(engine::api::Model& model, SlotPool& pool, ServerOptions options);
  ~Server();
  // Binds (the port chosen when options.port is 0); throws when it cannot.
  int bind();
  // Serves until stop().
  void run();
  // Ends run(): generations in progress stop at their next token.
  void stop();

 private:
  void routes();
  void chat(const httplib::Request& req, httplib::Response& res);
  void completion(const httplib::Request& req, httplib::Response& res);
  engine::api::Sampler sampler_for(const struct GenerationRequest& g) const;
  std::vector<int32_t> prompt_tokens(const std::string& prompt) const;
  uint32_t max_tokens_for(const struct GenerationRequest& g) const;
  // The job's prompt (checked against the limits; `param` names the field in
  // an error), generation options, sampler and response id.
  void prepare(StreamJob& job, std::vector<int32_t> prompt, const struct GenerationRequest& g, const char* param,
               const char* id_prefix) const;
  // The whole turn, for a response that is not streamed; nothing (and the
  // turn recorded) when the client left.
  std::optional<TurnResult> run_whole(StreamJob& job, const char* what, httplib::Response& res);
  // A session for the request (waiting for one, or 503); false when the
  // client left while it waited.
  bool admit(StreamJob& job, const httplib::Request& req, httplib::Response& res);
  // A request's turn as a stream of server-sent events: each piece as the
  // event `piece` makes ("" sends nothing), an engine error after the 200 as
  // an error event; after a whole turn the events `closing` makes, then
  // [DONE]. False (the connection is closed) when the client left.
  using StreamPiece = std::function<std::string(std::string_view, std::span<const struct TokenLogprob>)>;
  using StreamClosing = std::function<std::vector<std::string>(const TurnResult&)>;
  bool stream_turn(StreamJob& job, httplib::DataSink& sink, const char* what, const StreamPiece& piece,
                   const StreamClosing& closing);
  // The turn in the metrics and the log.
  void record(const char* what, const StreamJob& job, const TurnResult& t);

  engine::api::Model& model_;
  SlotPool& pool_;
  ServerOptions options_;
  Metrics metrics_;
  std::unique_ptr<httplib::Server> http_;
  std::atomic<bool> stopping_{false};
};

}  // namespace serve
