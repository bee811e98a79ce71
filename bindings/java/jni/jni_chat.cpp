// dev.engine.Native's chat functions: render a conversation, a turn's
// prefill, and the streamed generation.
#include <string>
#include <vector>

#include "jni_support.h"

using namespace engine::jni;

namespace {

// A conversation as Native.Messages flattens it (4 texts per message, its
// tool-call count, 3 texts per call) and the options (template name, template
// text, tools, variables), as the C API's structs. Every text is read before
// a pointer into one is taken, so the pointers stay valid.
class ChatInput {
 public:
  // false with an exception pending when the arrays cannot be read or do not match.
  bool read(JNIEnv* env, jobjectArray fields, jintArray call_counts, jobjectArray calls, jobjectArray options,
            bool add_generation_prompt) {
    std::vector<int32_t> counts;
    if (!read_texts(env, fields, fields_) || !read_ints(env, call_counts, counts) || !read_texts(env, calls, calls_) ||
        !read_texts(env, options, options_)) {
      return false;
    }
    size_t n_calls = 0;
    for (int32_t c : counts) n_calls += static_cast<size_t>(c < 0 ? 0 : c);
    if (fields_.size() != 4 * counts.size() || calls_.size() != 3 * n_calls || options_.size() != 4) {
      throw_java(env, "java/lang/IllegalArgumentException", "the flattened messages do not match their counts");
      return false;
    }
    c_calls_.reserve(n_calls);
    for (size_t i = 0; i < n_calls; ++i) {
      c_calls_.push_back({calls_[3 * i].c_str(), calls_[3 * i + 1].c_str(), calls_[3 * i + 2].c_str()});
    }
    size_t first_call = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      const auto n = static_cast<size_t>(counts[i] < 0 ? 0 : counts[i]);
      messages_.push_back({fields_[4 * i].c_str(), fields_[4 * i + 1].c_str(), c_calls_.data() + first_call, n,
                           fields_[4 * i + 2].c_str(), fields_[4 * i + 3].c_str()});
      first_call += n;
    }
    params_ = engine_chat_default_params();
    params_.template_name = options_[0].c_str();
    params_.template_text = options_[1].c_str();
    params_.tools = options_[2].c_str();
    params_.variables = options_[3].c_str();
    params_.add_generation_prompt = add_generation_prompt;
    return true;
  }
  const engine_chat_message* messages() const { return messages_.data(); }
  size_t size() const { return messages_.size(); }
  const engine_chat_params* params() const { return &params_; }

 private:
  std::vector<Text> fields_, calls_, options_;
  std::vector<engine_chat_tool_call> c_calls_;
  std::vector<engine_chat_message> messages_;
  engine_chat_params params_{};
};

// The state of one generate call, for the text callback: it runs on the
// calling thread, inside engine_chat_generate, so `env` is that thread's.
struct Generation {
  JNIEnv* env;
  jobject sink;
  jthrowable pending = nullptr;  // a Java exception raised in the callback, thrown once the engine returns
};

bool on_text(const char* text, size_t len, void* user) {
  auto* g = static_cast<Generation*>(user);
  JNIEnv* env = g->env;
  jbyteArray piece = new_bytes(env, text, len);
  jboolean more = JNI_FALSE;
  if (piece != nullptr) {
    more = call_sink(env, g->sink, piece);
    env->DeleteLocalRef(piece);  // one per piece: a long reply would fill the local reference table
  }
  if (env->ExceptionCheck()) {
    // No JNI call may follow with an exception pending; the engine is told to
    // stop and the exception is thrown again when it has returned.
    g->pending = env->ExceptionOccurred();
    env->ExceptionClear();
    return false;
  }
  return more == JNI_TRUE;
}

}  // namespace

extern "C" {

JNIEXPORT jbyteArray JNICALL Java_dev_engine_Native_renderChat(JNIEnv* env, jclass, jlong model, jobjectArray fields,
                                                              jintArray call_counts, jobjectArray calls,
                                                              jobjectArray options, jboolean add_generation_prompt) {
  ChatInput in;
  if (!in.read(env, fields, call_counts, calls, options, add_generation_prompt)) return nullptr;
  const engine_model* m = from<engine_model>(model);
  std::string out(1024, '\0');
  const engine_status s = engine::api::fill_buffer(
      out,
      [&](char* text, size_t cap, size_t* n) {
        return engine_chat_render(m, in.messages(), in.size(), in.params(), text, cap, n);
      },
      1);
  if (!check(env, s)) return nullptr;
  return new_bytes(env, out.data(), out.size());
}

JNIEXPORT jlongArray JNICALL Java_dev_engine_Native_prefillChat(JNIEnv* env, jclass, jlong session, jlong flag,
                                                               jobjectArray fields, jintArray call_counts,
                                                               jobjectArray calls, jobjectArray options) {
  ChatInput in;
  if (!in.read(env, fields, call_counts, calls, options, true)) return nullptr;
  begin_evaluation(flag);
  size_t n_prompt = 0, n_reused = 0;
  if (!check(env, engine_chat_prefill(from<engine_session>(session), in.messages(), in.size(), in.params(), &n_prompt,
                                      &n_reused))) {
    return nullptr;
  }
  const int64_t out[] = {static_cast<int64_t>(n_prompt), static_cast<int64_t>(n_reused)};
  return new_longs(env, out, 2);
}

JNIEXPORT jintArray JNICALL Java_dev_engine_Native_generate(JNIEnv* env, jclass, jlong session, jlong flag,
                                                           jlong sampler, jint max_tokens, jobjectArray stop,
                                                           jobject sink) {
  std::vector<Text> stops;
  if (!read_texts(env, stop, stops)) return nullptr;
  std::vector<const char*> c_stops;
  for (const Text& s : stops) c_stops.push_back(s.present ? s.c_str() : "");
  Generation g{env, sink};
  engine_chat_generate_params p = engine_chat_default_generate_params();
  p.max_tokens = static_cast<uint32_t>(max_tokens);
  p.stop = c_stops.data();
  p.n_stop = c_stops.size();
  p.on_text = on_text;
  p.user_data = &g;
  engine_chat_result result{};
  begin_evaluation(flag);
  const engine_status s =
      engine_chat_generate(from<engine_session>(session), from<engine_sampler>(sampler), &p, &result);
  if (g.pending != nullptr) {
    env->Throw(g.pending);
    return nullptr;
  }
  if (!check(env, s)) return nullptr;
  const int32_t out[] = {static_cast<int32_t>(result.n_tokens), static_cast<int32_t>(result.reason)};
  return new_ints(env, out, 2);
}

JNIEXPORT jobjectArray JNICALL Java_dev_engine_Native_parseToolCalls(JNIEnv* env, jclass, jlong model,
                                                                     jbyteArray format, jbyteArray reply) {
  Text f, r;
  if (!read_text(env, format, f) || !read_text(env, reply, r)) return nullptr;
  engine_chat_parsed* p = nullptr;
  if (!check(env, engine_chat_parse_tool_calls(from<engine_model>(model), f.c_str(), r.c_str(), &p))) return nullptr;
  std::vector<std::string> fields = {p->format, p->content};
  for (size_t i = 0; i < p->n_tool_calls; ++i) {
    const engine_chat_tool_call& c = p->tool_calls[i];
    fields.insert(fields.end(), {c.id != nullptr ? c.id : "", c.name, c.arguments});
  }
  engine_chat_parsed_free(p);
  jobjectArray out = env->NewObjectArray(static_cast<jsize>(fields.size()), env->FindClass("[B"), nullptr);
  for (size_t i = 0; out != nullptr && i < fields.size(); ++i) {
    jbyteArray b = new_bytes(env, fields[i].data(), fields[i].size());
    if (b == nullptr) return nullptr;
    env->SetObjectArrayElement(out, static_cast<jsize>(i), b);
    env->DeleteLocalRef(b);
  }
  return out;
}

}  // extern "C"
