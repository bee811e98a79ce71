#include "tools/serve/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cstdio>
#include <ctime>
#include <optional>

#include "tools/serve/http_error.h"
#include "tools/serve/peer_connection.h"
#include "tools/serve/request.h"
#include "tools/serve/response.h"
#include "tools/serve/turn.h"
#include "tools/serve/web_page.h"

namespace serve {

namespace {

constexpr const char* kJson = "application/json";

// The message of the error this thread's request got, for the log line
// (the body itself may be compressed by then).
thread_local std::string t_error_message;

void answer_error(httplib::Response& res, int status, const std::string& message, const std::string& param = {},
                  const std::string& code = {}) {
  res.status = status;
  t_error_message = message;
  res.set_content(error_body(status, message, param, code), "application/json");
}

bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;  // no early exit: the time says nothing of the key
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
  return diff == 0 && !b.empty();
}

std::string default_message(int status, const httplib::Request& req, size_t max_body) {
  switch (status) {
    case 404: return "no such endpoint: " + req.method + " " + req.path;
    case 413: return "the body is larger than this server takes (" + std::to_string(max_body) + " bytes, --max-body)";
    case 400: return "the HTTP request is malformed";
    default: return "HTTP error " + std::to_string(status);
  }
}

bool write_event(httplib::DataSink& sink, const std::string& event) { return sink.write(event.data(), event.size()); }

void log_turn(const char* what, const Slot& slot, size_t n_prompt, const TurnResult& t) {
  static const char* const kReasons[] = {"end", "stop string", "max tokens", "client left", "context full"};
  if (t.abandoned) {
    std::fprintf(stderr, "serve: %s on session %d: the client left (prompt %zu tokens, %zu reused)\n", what, slot.index,
                 n_prompt, t.n_reused);
    return;
  }
  std::fprintf(stderr, "serve: %s on session %d: prompt %zu tokens (%zu reused) %.0f ms, reply %u tokens %.0f ms, %s\n",
               what, slot.index, n_prompt, t.n_reused, t.prompt_seconds * 1e3, t.reply.n_tokens,
               t.generation_seconds * 1e3, t.abandoned ? "client left" : kReasons[t.reply.reason]);
}

}  // namespace

// What a request's handler and its stream's content provider share.
struct StreamJob {
  std::optional<SlotPool::Lease> lease;
  engine::api::Sampler sampler;
  std::vector<int32_t> prompt;
  TurnRequest turn;
  ResponseMeta meta;
  std::shared_ptr<PeerConnection> peer;
  bool include_usage = false;
  bool tools = false;  // read the reply for tool calls at its end
};

Server::Server(engine::api::Model& model, SlotPool& pool, ServerOptions options)
    : model_(model), pool_(pool), options_(std::move(options)), http_(std::make_unique<httplib::Server>()) {
  routes();
}

Server::~Server() = default;

int Server::bind() {
  int listening = -1;
  http_->set_socket_options([&listening](socket_t sock) {
    httplib::default_socket_options(sock);  // SO_REUSEADDR
    if (listening < 0) listening = sock;
  });
  const int port = options_.port == 0 ? http_->bind_to_any_port(options_.host)
                                      : (http_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
  if (port < 0) {
    throw std::runtime_error("cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                             " (in use, or not an address of this machine)");
  }
  // Debian's httplib listens with a backlog of 5, compiled into its library:
  // of 16 clients connecting at once some lost their SYN and retried a second
  // later (p99 1056 ms). listen() again raises the backlog of the same socket.
  if (listening >= 0) ::listen(listening, SOMAXCONN);
  return port;
}

void Server::run() { http_->listen_after_bind(); }

void Server::stop() {
  stopping_ = true;
  http_->stop();
}

bool Server::admit(StreamJob& job, const httplib::Request& req, httplib::Response& res) {
  job.peer = std::make_shared<PeerConnection>(req.remote_addr, req.remote_port);
  job.lease.emplace(pool_.acquire(job.prompt, [&] { return stopping_.load() || job.peer->gone(); }));
  if (*job.lease) return true;
  metrics_.count_disconnect();
  res.status = 499;  // the client closed the request (nginx's code): no one reads this
  return false;
}

void Server::record(const char* what, const StreamJob& job, const TurnResult& t) {
  if (t.abandoned) metrics_.count_disconnect();
  metrics_.add_turn(job.prompt.size(), t.n_reused, t.reply.n_tokens, t.prompt_seconds, t.generation_seconds);
  log_turn(what, **job.lease, job.prompt.size(), t);
}

std::vector<int32_t> Server::prompt_tokens(const std::string& prompt) const {
  // As engine_chat_prefill tokenizes a chat prompt: special tokens' texts as
  // the tokens, BOS first when the model wants it and the text did not write it.
  std::vector<int32_t> tokens = model_.tokenize(prompt, /*add_bos=*/false, /*parse_special=*/true);
  if (model_.add_bos() && (tokens.empty() || tokens.front() != model_.bos())) tokens.insert(tokens.begin(), model_.bos());
  return tokens;
}

void Server::prepare(StreamJob& job, std::vector<int32_t> prompt, const GenerationRequest& g, const char* param,
                     const char* id_prefix) const {
  const size_t limit = options_.max_prompt_tokens != 0 ? options_.max_prompt_tokens : options_.n_ctx - 1;
  if (prompt.size() > limit) {
    throw HttpError(400,
                    "the prompt is " + std::to_string(prompt.size()) + " tokens; this server takes at most " +
                        std::to_string(limit) + " (--max-prompt-tokens, and the context size " +
                        std::to_string(options_.n_ctx) + ")",
                    param, "context_length_exceeded");
  }
  if (prompt.empty()) throw HttpError(400, "the prompt is empty and the model starts with no BOS", param);
  job.prompt = std::move(prompt);
  job.turn.prompt = job.prompt;
  job.turn.options.max_tokens = max_tokens_for(g);
  job.turn.options.stop = g.stop;
  job.turn.logprobs = g.logprobs;
  job.turn.top_logprobs = g.top_logprobs;
  job.sampler = sampler_for(g);
  job.include_usage = g.include_usage;
  job.meta = {new_id(id_prefix), std::time(nullptr), options_.model_name};
}

std::optional<TurnResult> Server::run_whole(StreamJob& job, const char* what, httplib::Response& res) {
  TurnResult t = run_turn(model_, **job.lease, job.sampler, job.turn, *job.peer, stopping_,
                          [](std::string_view, std::span<const TokenLogprob>) { return true; });
  if (!t.abandoned) return t;
  record(what, job, t);
  res.status = 499;  // no one reads it
  return std::nullopt;
}

uint32_t Server::max_tokens_for(const GenerationRequest& g) const {
  const uint32_t limit = options_.max_tokens != 0 ? options_.max_tokens : options_.n_ctx;
  if (g.max_tokens && *g.max_tokens > limit) {
    throw HttpError(400,
                    "max_tokens " + std::to_string(*g.max_tokens) + " is over this server's limit of " +
                        std::to_string(limit) + " (--max-tokens)",
                    "max_tokens");
  }
  return g.max_tokens.value_or(limit);  // the context's end stops it sooner ("length")
}

engine::api::Sampler Server::sampler_for(const GenerationRequest& g) const {
  engine_sampler_params p = options_.sampler;
  if (g.temperature) p.temperature = *g.temperature;
  if (g.top_p) p.top_p = *g.top_p;
  p.seed = g.seed.value_or(0xFFFFFFFFu);  // no seed: a random one per request, as OpenAI does
  return engine::api::Sampler(p);
}

void Server::chat(const httplib::Request& req, httplib::Response& res) {
  const ChatRequest r = parse_chat_request(req.body);
  engine::api::ChatOptions chat_options = options_.chat;
  chat_options.tools = r.tools;
  std::string prompt;
  try {
    prompt = model_.render_chat(r.messages, chat_options);
  } catch (const engine::api::Error& e) {
    throw HttpError(400, std::string("the chat template cannot render these messages: ") + e.what(), "messages");
  }
  auto job = std::make_shared<StreamJob>();
  prepare(*job, prompt_tokens(prompt), r.generation, "messages", "chatcmpl-");
  try {
    if (r.response_format == ResponseFormat::json_object) job->sampler.set_json_schema(model_, R"({"type": "object"})");
    if (r.response_format == ResponseFormat::json_schema) job->sampler.set_json_schema(model_, r.schema);
  } catch (const engine::api::Error& e) {
    throw HttpError(400, e.what(), "response_format.json_schema.schema");
  }
  try {
    if (!r.grammar_tools.empty()) job->sampler.set_tool_grammar(model_, r.grammar_tools);
  } catch (const engine::api::Error& e) {
    throw HttpError(400, std::string("tool_choice: ") + e.what(), "tool_choice");
  }
  job->tools = !r.tools.empty();
  if (!admit(*job, req, res)) return;

  // The reply's content and calls, read from its text when tools were given.
  auto finish = [this, job](const TurnResult& t, std::optional<std::string>& content,
                            std::vector<engine::api::ToolCall>& calls) {
    content = t.reply.text;
    if (job->tools) {
      engine::api::ParsedReply parsed = engine::api::parse_tool_calls(model_, t.reply.text);
      if (!parsed.tool_calls.empty()) {
        calls = std::move(parsed.tool_calls);
        content = parsed.content.find_first_not_of(" \t\r\n") == std::string::npos
                      ? std::nullopt
                      : std::optional<std::string>(parsed.content);
      }
    }
    record("chat", *job, t);
  };
  auto usage = [job](const TurnResult& t) { return Usage{job->prompt.size(), t.reply.n_tokens, t.n_reused}; };

  if (!r.generation.stream) {
    const std::optional<TurnResult> whole = run_whole(*job, "chat", res);
    if (!whole) return;
    const TurnResult& t = *whole;
    std::optional<std::string> content;
    std::vector<engine::api::ToolCall> calls;
    finish(t, content, calls);
    const Json logprobs = job->turn.logprobs ? chat_logprobs_json(t.tokens) : Json(nullptr);
    res.set_content(dump(chat_completion(job->meta, content, calls, logprobs,
                                         finish_reason(t.reply.reason, !calls.empty()), usage(t))),
                    kJson);
    return;
  }

  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [this, job, finish, usage](size_t, httplib::DataSink& sink) {
    const ResponseMeta& meta = job->meta;
    if (!write_event(sink, sse_event(chat_chunk(meta, Json{{"role", "assistant"}, {"content", ""}}, nullptr, nullptr)))) {
      return false;
    }
    const auto piece = [&](std::string_view text, std::span<const TokenLogprob> tokens) {
      if (job->tools) return std::string();  // the reply is read for calls at its end
      const Json lp = job->turn.logprobs ? chat_logprobs_json({tokens.begin(), tokens.end()}) : Json(nullptr);
      return sse_event(chat_chunk(meta, Json{{"content", text}}, lp, nullptr));
    };
    const auto closing = [&](const TurnResult& t) {
      std::optional<std::string> content;
      std::vector<engine::api::ToolCall> calls;
      finish(t, content, calls);
      std::vector<std::string> events;
      if (job->tools && content) events.push_back(sse_event(chat_chunk(meta, Json{{"content", *content}}, nullptr, nullptr)));
      if (!calls.empty()) {
        events.push_back(sse_event(chat_chunk(meta, Json{{"tool_calls", tool_calls_json(calls, true)}}, nullptr, nullptr)));
      }
      const std::vector<TokenLogprob> rest(t.tokens.begin() + static_cast<std::ptrdiff_t>(t.n_tokens_sent), t.tokens.end());
      const Json lp = job->turn.logprobs ? chat_logprobs_json(job->tools ? t.tokens : rest) : Json(nullptr);
      events.push_back(sse_event(chat_chunk(meta, Json::object(), lp, finish_reason(t.reply.reason, !calls.empty()))));
      if (job->include_usage) events.push_back(sse_event(usage_chunk(meta, "chat.completion.chunk", usage(t))));
      return events;
    };
    return stream_turn(*job, sink, "chat", piece, closing);
  });
}

void Server::completion(const httplib::Request& req, httplib::Response& res) {
  const CompletionRequest r = parse_completion_request(req.body);
  auto job = std::make_shared<StreamJob>();
  prepare(*job, model_.tokenize(r.prompt, model_.add_bos(), /*parse_special=*/true), r.generation, "prompt", "cmpl-");
  if (!admit(*job, req, res)) return;
  auto done = [this, job](const TurnResult& t) {
    record("completion", *job, t);
    return Usage{job->prompt.size(), t.reply.n_tokens, t.n_reused};
  };
  if (!r.generation.stream) {
    const std::optional<TurnResult> whole = run_whole(*job, "completion", res);
    if (!whole) return;
    const TurnResult& t = *whole;
    const Usage u = done(t);
    const Json lp = job->turn.logprobs ? completion_logprobs_json(t.tokens, 0) : Json(nullptr);
    res.set_content(dump(text_completion(job->meta, t.reply.text, lp, finish_reason(t.reply.reason, false), u)), kJson);
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [this, job, done](size_t, httplib::DataSink& sink) {
    size_t offset = 0;
    const auto piece = [&](std::string_view text, std::span<const TokenLogprob> tokens) {
      const Json lp =
          job->turn.logprobs ? completion_logprobs_json({tokens.begin(), tokens.end()}, offset) : Json(nullptr);
      offset += text.size();
      return sse_event(text_completion(job->meta, std::string(text), lp, nullptr, std::nullopt));
    };
    const auto closing = [&](const TurnResult& t) {
      const Usage u = done(t);
      const std::vector<TokenLogprob> rest(t.tokens.begin() + static_cast<std::ptrdiff_t>(t.n_tokens_sent), t.tokens.end());
      const Json lp = job->turn.logprobs ? completion_logprobs_json(rest, offset) : Json(nullptr);
      std::vector<std::string> events = {
          sse_event(text_completion(job->meta, "", lp, finish_reason(t.reply.reason, false), std::nullopt))};
      if (job->include_usage) events.push_back(sse_event(usage_chunk(job->meta, "text_completion", u)));
      return events;
    };
    return stream_turn(*job, sink, "completion", piece, closing);
  });
}

bool Server::stream_turn(StreamJob& job, httplib::DataSink& sink, const char* what, const StreamPiece& piece,
                         const StreamClosing& closing) {
  TurnResult t;
  try {
    t = run_turn(model_, **job.lease, job.sampler, job.turn, *job.peer, stopping_,
                 [&](std::string_view text, std::span<const TokenLogprob> tokens) {
                   const std::string event = piece(text, tokens);
                   return event.empty() || write_event(sink, event);
                 });
  } catch (const std::exception& e) {  // after the 200: the error is an event of the stream
    write_event(sink, sse_event(Json{{"error", {{"message", e.what()}, {"type", "server_error"}}}}));
    write_event(sink, kSseDone);
    sink.done();
    return true;
  }
  if (t.abandoned) {
    record(what, job, t);
    job.lease.reset();
    return false;  // closes the connection
  }
  const std::vector<std::string> events = closing(t);
  job.lease.reset();  // the session is free for the next request while this one finishes writing
  for (const std::string& e : events) write_event(sink, e);
  write_event(sink, kSseDone);
  sink.done();
  return true;
}

void Server::routes() {
  httplib::Server& h = *http_;
  // Enough workers that every session's request and every waiting one has a
  // thread (the pool's bound, not httplib's queue, decides who waits), plus
  // a few for /health and /metrics while all are busy.
  // httplib gives each open connection a thread, an idle keep-alive one too:
  // with parallel + queue + 4 threads, 22 idle connections made /health wait
  // 4.7 s. Threads that only wait on a socket cost little, so there are many,
  // and an idle connection is closed after 2 s.
  const size_t workers = pool_.size() + pool_.max_waiting() + 64;
  h.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  h.set_payload_max_length(options_.max_body);
  h.set_read_timeout(10, 0);   // a client that sends its request slower than this is dropped
  h.set_write_timeout(10, 0);  // and one that reads a stream slower: its generation stops
  h.set_keep_alive_timeout(2);
  h.set_keep_alive_max_count(1000);
  // Headers and body go out in two writes: with Nagle's algorithm the second
  // waited for the client's delayed ACK, 40 ms on every reused connection.
  h.set_tcp_nodelay(true);

  h.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    t_error_message.clear();
    // The page itself holds no data (it asks for the key), and /health says
    // only that the server is up, for a load balancer that cannot send a key.
    if (options_.api_key.empty() || (req.method == "GET" && (req.path == "/" || req.path == "/health"))) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    const std::string auth = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (auth.rfind(prefix, 0) == 0 && same_secret(auth.substr(prefix.size()), options_.api_key)) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.set_header("WWW-Authenticate", "Bearer");
    answer_error(res, 401,
                 auth.empty() ? "this server needs an API key: Authorization: Bearer KEY"
                              : "the API key is not this server's",
                 "", "invalid_api_key");
    return httplib::Server::HandlerResponse::Handled;
  });
  h.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty()) answer_error(res, res.status, default_message(res.status, req, options_.max_body));
  });
  h.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    answer_error(res, 500, what);
  });
  h.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    metrics_.count_response(req.path, res.status);
    if (res.status >= 400 && res.status != 499) {
      std::fprintf(stderr, "serve: %s %s from %s: %d %.300s\n", req.method.c_str(), req.path.c_str(),
                   req.remote_addr.c_str(), res.status, t_error_message.c_str());
    }
  });

  using Handler = void (Server::*)(const httplib::Request&, httplib::Response&);
  auto guarded = [this](Handler handler) {
    return [this, handler](const httplib::Request& req, httplib::Response& res) {
      try {
        (this->*handler)(req, res);
      } catch (const HttpError& e) {
        if (e.status == 503) res.set_header("Retry-After", "1");
        answer_error(res, e.status, e.what(), e.param, e.code);
      }
    };
  };
  h.Post("/v1/chat/completions", guarded(&Server::chat));
  h.Post("/v1/completions", guarded(&Server::completion));
  h.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    const Json model = {{"id", options_.model_name}, {"object", "model"}, {"created", 0}, {"owned_by", "engine"}};
    res.set_content(dump(Json{{"object", "list"}, {"data", Json::array({model})}}), kJson);
  });
  h.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(dump(Json{{"status", "ok"},
                              {"sessions", pool_.size()},
                              {"sessions_busy", pool_.busy()},
                              {"requests_waiting", pool_.waiting()}}),
                    kJson);
  });
  h.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.prometheus(pool_.size(), pool_.busy(), pool_.waiting()), "text/plain; version=0.0.4");
  });
  h.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(kChatPage, "text/html; charset=utf-8"); });
}

}  // namespace serve
