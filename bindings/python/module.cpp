// The Python binding's native part, `engine._engine`: the C++ wrapper of the
// C API (engine/api/engine.hpp) as Python classes. engine/__init__.py adds the
// conveniences written in Python (generate, streaming text).
//
// - Errors: every engine status other than OK raises engine.EngineError (a
//   RuntimeError) carrying the engine's message and its status name.
// - The GIL is released while the engine works (load, prefill, decode, save,
//   load of a session), so other Python threads run, and Session.abort() from
//   one of them stops a prefill at the next layer.
// - Session.logits is a read-only NumPy view of the engine's buffer, not a
//   copy: valid until the session's next evaluation, which overwrites it
//   (copy() it to keep it). The view keeps the session alive.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/api/engine.hpp"

namespace py = pybind11;
using engine::api::Error;

namespace {

// A session with the stop flag its abort callback reads.
struct PySession {
  PySession(py::object model, engine_session_params params)
      : model_object(std::move(model)), session(model_object.cast<const engine::api::Model&>(), params) {
    session.set_abort(&PySession::should_stop, &stop);
  }
  static bool should_stop(void* flag) { return static_cast<std::atomic<bool>*>(flag)->load(std::memory_order_relaxed); }

  // Runs an evaluation without the GIL, the stop flag cleared first: abort()
  // stops the evaluation under way, not the next one.
  template <class Fn>
  auto evaluate(Fn&& fn) {
    stop.store(false, std::memory_order_relaxed);
    py::gil_scoped_release unlocked;
    return fn();
  }

  py::object model_object;  // the Python Model: alive as long as its sessions
  engine::api::Session session;
  std::atomic<bool> stop{false};
};

engine_session_params session_params(uint32_t n_ctx, uint32_t n_batch, const std::string& kv_type, int32_t n_threads) {
  engine_session_params p = engine_session_default_params();
  p.n_ctx = n_ctx;
  p.n_batch = n_batch;
  if (kv_type == "f16") {
    p.kv_type = ENGINE_KV_F16;
  } else if (kv_type == "f32") {
    p.kv_type = ENGINE_KV_F32;
  } else if (kv_type == "q8_0") {
    p.kv_type = ENGINE_KV_Q8_0;
  } else if (kv_type == "q4_0") {
    p.kv_type = ENGINE_KV_Q4_0;
  } else {
    throw py::value_error("kv_type must be 'f16', 'f32', 'q8_0' or 'q4_0', not '" + kv_type + "'");
  }

  p.n_threads = n_threads;
  return p;
}

// Messages as Python gives them: dicts with "role" and "content", and where
// needed "tool_calls" (dicts with "id", "name", "arguments": a JSON text or a
// dict, dumped), "tool_call_id", "name".
std::string text_of(const py::handle& value) {
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  return py::module_::import("json").attr("dumps")(value).cast<std::string>();
}
std::string get(const py::dict& d, const char* key) {
  return d.contains(key) && !d[key].is_none() ? text_of(d[key]) : std::string();
}
std::vector<engine::api::Message> messages_from(const py::list& list) {
  std::vector<engine::api::Message> out;
  for (const py::handle& item : list) {
    if (!py::isinstance<py::dict>(item)) throw py::type_error("a message is a dict with 'role' and 'content'");
    const py::dict d = py::reinterpret_borrow<py::dict>(item);
    engine::api::Message m{get(d, "role"), get(d, "content"), {}, get(d, "tool_call_id"), get(d, "name")};
    if (d.contains("tool_calls") && !d["tool_calls"].is_none()) {
      for (const py::handle& call : d["tool_calls"]) {
        const py::dict c = py::reinterpret_borrow<py::dict>(call);
        // OpenAI's shape nests name and arguments under "function".
        const py::dict f = c.contains("function") ? py::reinterpret_borrow<py::dict>(c["function"]) : c;
        m.tool_calls.push_back({get(c, "id"), get(f, "name"), get(f, "arguments")});
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}
engine::api::ChatOptions chat_options(const std::string& template_name, const py::object& tools,
                                      const py::object& variables, bool add_generation_prompt) {
  engine::api::ChatOptions o;
  o.template_name = template_name;
  o.add_generation_prompt = add_generation_prompt;
  if (!tools.is_none()) o.tools = text_of(tools);
  if (!variables.is_none()) o.variables = text_of(variables);
  return o;
}

const char* reason_name(engine_chat_stop_reason r) {
  switch (r) {
    case ENGINE_CHAT_END_OF_GENERATION: return "end_of_generation";
    case ENGINE_CHAT_STOP_STRING: return "stop_string";
    case ENGINE_CHAT_MAX_TOKENS: return "max_tokens";
    case ENGINE_CHAT_CALLBACK: return "callback";
    case ENGINE_CHAT_CONTEXT_FULL: return "context_full";
  }
  return "unknown";
}

// engine::api::generate without the GIL; on_text (None, or a callable taking
// a str and returning False to stop) is called with the GIL taken again. An
// exception it raises stops the reply and is raised here.
py::dict generate_reply(PySession& s, engine::api::Sampler& sampler, uint32_t max_tokens,
                        const std::vector<std::string>& stop, const py::object& on_text) {
  engine::api::GenerateOptions options;
  options.max_tokens = max_tokens;
  options.stop = stop;
  bool raised = false;
  engine::api::TextCallback callback;
  if (!on_text.is_none()) {
    callback = [&](std::string_view text) {
      py::gil_scoped_acquire locked;
      try {
        const py::object r = on_text(py::str(text.data(), text.size()));
        return r.is_none() || r.cast<bool>();
      } catch (py::error_already_set& e) {
        e.restore();  // raised below, once the GIL is back
        raised = true;
        return false;
      }
    };
  }
  const engine::api::Reply reply = s.evaluate([&] { return engine::api::generate(s.session, sampler, options, callback); });
  if (raised) throw py::error_already_set();
  py::dict out;
  out["text"] = reply.text;
  out["n_tokens"] = reply.n_tokens;
  out["reason"] = reason_name(reply.reason);
  return out;
}

// engine_model_load_ex with the GIL released (mapping and repacking a large
// file takes a while), taken again for each call of the Python progress
// callback. An exception the callback raises cancels the load and is raised.
std::unique_ptr<engine::api::Model> load_model(const std::string& path, const py::object& cache_dir,
                                               const py::object& progress) {
  struct Progress {
    py::object fn;
    std::optional<py::error_already_set> error;
  } p{progress, std::nullopt};
  const std::string dir = cache_dir.is_none() ? "" : py::str(cache_dir).cast<std::string>();
  engine_load_options o = engine_load_default_options();
  if (!cache_dir.is_none()) o.cache_dir = dir.c_str();
  if (!progress.is_none()) {
    o.user_data = &p;
    o.progress = [](float fraction, const char* phase, void* user) {
      auto* self = static_cast<Progress*>(user);
      py::gil_scoped_acquire locked;
      try {
        return py::cast<bool>(self->fn(fraction, phase));
      } catch (py::error_already_set& e) {
        self->error.emplace(std::move(e));
        return false;
      }
    };
  }
  std::unique_ptr<engine::api::Model> model;
  try {
    py::gil_scoped_release unlocked;
    model = std::make_unique<engine::api::Model>(path, o);
  } catch (const Error&) {
    if (p.error) throw std::move(*p.error);
    throw;
  }
  return model;
}

}  // namespace

PYBIND11_MODULE(_engine, m) {
  m.doc() = "On-device LLM inference engine: GGUF models on ARM and x86 CPUs";
  static py::exception<Error> engine_error(m, "EngineError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::object err = py::handle(engine_error.ptr())(py::str(e.what()));
      err.attr("status") = std::string(engine_status_name(e.status()));
      PyErr_SetObject(engine_error.ptr(), err.ptr());
    }
  });
  m.attr("__version__") = engine_version();

  py::class_<engine::api::Model>(m, "Model")
      .def(py::init([](const std::string& path, const py::object& cache_dir, const py::object& progress) {
             return load_model(path, cache_dir, progress);
           }),
           py::arg("path"), py::arg("cache_dir") = py::none(), py::arg("progress") = py::none(),
           "Loads a GGUF model (mapped, not copied). cache_dir: keep the repacked weights there so the next "
           "load maps them (default: $ENGINE_CACHE_DIR, else none). progress(fraction, phase) is called as the "
           "load goes; returning False cancels it (EngineError, status 'cancelled').")
      .def_property_readonly(
          "load_stats",
          [](const engine::api::Model& model) {
            const engine_load_stats s = model.load_stats();
            static const char* const kCache[] = {"off", "hit", "written", "write failed"};
            py::dict d;
            d["load_seconds"] = s.load_seconds;
            d["repack_seconds"] = s.repack_seconds;
            d["cache_seconds"] = s.cache_seconds;
            d["cache"] = kCache[s.cache];
            return d;
          },
          "The load's seconds, of which repacking and the repack cache, and how the cache served it.")
      .def_property_readonly("n_vocab", &engine::api::Model::n_vocab)
      .def_property_readonly("bos", &engine::api::Model::bos, "The begin-of-sequence token, or -1.")
      .def_property_readonly("eos", &engine::api::Model::eos, "The end-of-sequence token, or -1.")
      .def("is_end_of_generation", &engine::api::Model::is_end_of_generation, py::arg("token"))
      .def(
          "tokenize",
          [](const engine::api::Model& model, const std::string& text, bool add_bos, bool parse_special) {
            return model.tokenize(text, add_bos, parse_special);
          },
          py::arg("text"), py::arg("add_bos") = true, py::arg("parse_special") = false)
      .def(
          "token_bytes", [](const engine::api::Model& model, int32_t token) { return py::bytes(model.piece(token)); },
          py::arg("token"), "One token's bytes (a piece of UTF-8 that may end inside a character).")
      .def(
          "detokenize",
          [](const engine::api::Model& model, const std::vector<int32_t>& tokens) {
            return py::bytes(model.detokenize(tokens)).attr("decode")("utf-8", "replace");
          },
          py::arg("tokens"),
          "The tokens' text as one sequence, control tokens and SentencePiece's leading space of the first word "
          "dropped (ill-formed UTF-8 replaced by U+FFFD).")
      .def(
          "render_chat",
          [](const engine::api::Model& model, const py::list& messages, const std::string& template_name,
             const py::object& tools, const py::object& variables, bool add_generation_prompt) {
            return model.render_chat(messages_from(messages),
                                     chat_options(template_name, tools, variables, add_generation_prompt));
          },
          py::arg("messages"), py::arg("template") = "", py::arg("tools") = py::none(),
          py::arg("variables") = py::none(), py::arg("add_generation_prompt") = true,
          "The prompt text of a conversation, rendered by the model's chat template (or a built-in one: "
          "engine.builtin_chat_templates()).")
      .def(
          "parse_tool_calls",
          [](const engine::api::Model& model, const std::string& reply, const std::string& format) {
            const engine::api::ParsedReply p = engine::api::parse_tool_calls(model, reply, format);
            py::list calls;
            for (const engine::api::ToolCall& c : p.tool_calls) {
              py::dict call;
              call["id"] = c.id;
              call["name"] = c.name;
              call["arguments"] = c.arguments;
              calls.append(call);
            }
            py::dict out;
            out["content"] = p.content;
            out["tool_calls"] = calls;
            out["format"] = p.format;
            return out;
          },
          py::arg("reply"), py::arg("format") = "",
          "A reply read back into {'content', 'tool_calls': [{'id', 'name', 'arguments'}], 'format'}, in the "
          "format the model's chat template shows (or the one named: hermes, list, llama3, mistral, gemma4, "
          "pythonic, functools, none). arguments is a JSON object's text.");
  m.def("builtin_chat_templates", &engine::api::builtin_chat_templates);

  py::class_<PySession>(m, "Session")
      .def(py::init([](py::object model, uint32_t n_ctx, uint32_t n_batch, const std::string& kv_type,
                       int32_t n_threads) {
             return std::make_unique<PySession>(std::move(model), session_params(n_ctx, n_batch, kv_type, n_threads));
           }),
           py::arg("model"), py::arg("n_ctx") = 0, py::arg("n_batch") = 0, py::arg("kv_type") = "f16",
           py::arg("n_threads") = 0,
           "A context on a model: its tokens, KV cache and logits. n_ctx 0: the model's, at most 4096; "
           "n_threads 0: one per core of the fastest cluster(s).")
      .def(
          "prefill",
          [](PySession& s, const std::vector<int32_t>& tokens) { s.evaluate([&] { s.session.prefill(tokens); }); },
          py::arg("tokens"), "Evaluates tokens after those already in the session.")
      .def(
          "prefill_prompt",
          [](PySession& s, const std::vector<int32_t>& tokens) {
            return s.evaluate([&] { return s.session.prefill_prompt(tokens); });
          },
          py::arg("tokens"),
          "Evaluates a whole prompt, reusing the session's tokens it begins with; returns how many were reused.")
      .def(
          "decode", [](PySession& s, int32_t token) { s.evaluate([&] { s.session.decode(token); }); },
          py::arg("token"))
      .def_property_readonly(
          "logits",
          [](py::object self) {
            PySession& s = self.cast<PySession&>();
            const std::span<const float> l = s.session.logits();
            py::array_t<float> view({static_cast<py::ssize_t>(l.size())}, {static_cast<py::ssize_t>(sizeof(float))},
                                    l.data(), self);
            py::detail::array_proxy(view.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
            return view;
          },
          "The last token's logits: a read-only view of the engine's buffer, overwritten by the next evaluation.")
      .def(
          "prefill_chat",
          [](PySession& s, const py::list& messages, const std::string& template_name, const py::object& tools,
             const py::object& variables) {
            const std::vector<engine::api::Message> turn = messages_from(messages);
            const engine::api::ChatOptions o = chat_options(template_name, tools, variables, true);
            const engine::api::ChatPrompt p = s.evaluate([&] { return s.session.prefill_chat(turn, o); });
            return py::make_tuple(p.n_prompt, p.n_reused);
          },
          py::arg("messages"), py::arg("template") = "", py::arg("tools") = py::none(),
          py::arg("variables") = py::none(),
          "A chat turn's prompt, evaluating only what the session does not hold yet; returns (prompt tokens, "
          "reused tokens).")
      .def("generate", &generate_reply, py::arg("sampler"), py::arg("max_tokens") = 0,
           py::arg("stop") = std::vector<std::string>(), py::arg("on_text") = py::none(),
           "Generates after the session's tokens until an end-of-generation token, a stop string, max_tokens "
           "(0: the context) or on_text returning False; returns {'text', 'n_tokens', 'reason'}. on_text gets "
           "each piece (whole UTF-8 characters; a stop string's text is never given).")
      .def_property_readonly("model", [](const PySession& s) { return s.model_object; })
      .def_property_readonly("n_past", [](const PySession& s) { return s.session.n_past(); })
      .def_property_readonly("n_evaluated", [](const PySession& s) { return s.session.n_evaluated(); },
                             "Tokens evaluated over the session's life (reused ones are not).")
      .def_property_readonly("tokens", [](const PySession& s) { return s.session.tokens(); })
      .def(
          "truncate", [](PySession& s, uint32_t n) { s.session.truncate(n); }, py::arg("n"),
          "Keeps the first n tokens (regenerate, edit).")
      .def("reset", [](PySession& s) { s.session.reset(); })
      .def(
          "save", [](PySession& s, const std::string& path) { s.evaluate([&] { s.session.save(path); }); },
          py::arg("path"), "Saves tokens and KV cache (a prompt cache).")
      .def(
          "load", [](PySession& s, const std::string& path) { s.evaluate([&] { s.session.load(path); }); },
          py::arg("path"))
      .def(
          "abort", [](PySession& s) { s.stop.store(true, std::memory_order_relaxed); },
          "From another thread: stops the evaluation under way at its next layer (it raises EngineError, "
          "status ENGINE_ERR_ABORTED); the session keeps the tokens evaluated whole.")
      .def_property_readonly("kv_bytes", [](const PySession& s) { return s.session.kv_info().bytes; });

  // The keyword defaults are the C API's, read once.
  const engine_sampler_params sampler_defaults = engine_sampler_default_params();
  py::class_<engine::api::Sampler>(m, "Sampler")
      .def(py::init([](float temperature, int32_t top_k, float top_p, float min_p, float repeat_penalty,
                       int32_t repeat_last_n, uint32_t seed) {
             engine_sampler_params p = engine_sampler_default_params();
             p.temperature = temperature;
             p.top_k = top_k;
             p.top_p = top_p;
             p.min_p = min_p;
             p.repeat_penalty = repeat_penalty;
             p.repeat_last_n = repeat_last_n;
             p.seed = seed;
             return std::make_unique<engine::api::Sampler>(p);
           }),
           py::arg("temperature") = sampler_defaults.temperature,
           py::arg("top_k") = sampler_defaults.top_k,
           py::arg("top_p") = sampler_defaults.top_p,
           py::arg("min_p") = sampler_defaults.min_p,
           py::arg("repeat_penalty") = sampler_defaults.repeat_penalty,
           py::arg("repeat_last_n") = sampler_defaults.repeat_last_n,
           py::arg("seed") = sampler_defaults.seed, "temperature <= 0: greedy.")
      .def("sample", [](engine::api::Sampler& sampler, PySession& s) { return sampler.sample(s.session); },
           py::arg("session"), "Picks the next token from the session's logits and records it.")
      .def("accept", &engine::api::Sampler::accept, py::arg("token"),
           "Records a context token (the prompt's) for the repetition penalty.")
      .def("set_grammar", &engine::api::Sampler::set_grammar, py::arg("model"), py::arg("gbnf"),
           py::arg("root") = "root",
           "Samples only text of this GBNF grammar over the model's tokens (the reply ends when it is "
           "complete). A grammar that does not parse raises engine.Error naming the line and column.")
      .def("set_json_schema", &engine::api::Sampler::set_json_schema, py::arg("model"), py::arg("schema"),
           "Samples only JSON documents the schema (JSON text) validates; an unsupported keyword raises "
           "engine.Error naming it.")
      .def("set_tool_grammar", &engine::api::Sampler::set_tool_grammar, py::arg("model"), py::arg("tools"),
           py::arg("format") = "",
           "The reply must be one call of one of the tools (a JSON array of OpenAI function tools), in the "
           "model's template's tool-call format or the one named, arguments valid under the tool's schema; "
           "Model.parse_tool_calls reads it back.")
      .def("clear_grammar", &engine::api::Sampler::clear_grammar, "Removes the grammar.");
}
