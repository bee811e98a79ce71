// dev.engine.Native's session functions: create and free (with the stop flag
// the abort callback reads), evaluation, logits, tokens, saved sessions.
#include <new>
#include <vector>

#include "jni_support.h"

using namespace engine::jni;

namespace {

bool should_stop(void* flag) { return static_cast<StopFlag*>(flag)->stop.load(std::memory_order_relaxed); }

engine_session* session_of(jlong h) { return from<engine_session>(h); }

}  // namespace

extern "C" {

JNIEXPORT jlongArray JNICALL Java_dev_engine_Native_sessionCreate(JNIEnv* env, jclass, jlong model, jint n_ctx,
                                                                 jint n_batch, jint kv_type, jint n_threads,
                                                                 jbyteArray cpus) {
  Text cpu_list;
  if (!read_text(env, cpus, cpu_list)) return nullptr;
  engine_session_params p = engine_session_default_params();
  p.n_ctx = static_cast<uint32_t>(n_ctx);
  p.n_batch = static_cast<uint32_t>(n_batch);
  p.kv_type = kv_type == 1 ? ENGINE_KV_F32 : ENGINE_KV_F16;
  p.n_threads = n_threads;
  p.cpus = cpu_list.c_str();
  auto* flag = new (std::nothrow) StopFlag;
  if (flag == nullptr) {
    throw_java(env, "java/lang/OutOfMemoryError", "the session's stop flag");
    return nullptr;
  }
  engine_session* s = nullptr;
  engine_status status = engine_session_create(from<engine_model>(model), &p, &s);
  if (status == ENGINE_OK) {
    status = engine_session_set_abort(s, should_stop, flag);
    if (status != ENGINE_OK) {
      check(env, status);  // its message, before the free below overwrites it
      engine_session_free(s);
      delete flag;
      return nullptr;
    }
  }
  if (!check(env, status)) {
    delete flag;
    return nullptr;
  }
  const int64_t out[] = {to_jlong(s), to_jlong(flag)};
  jlongArray a = new_longs(env, out, 2);
  if (a == nullptr) {
    engine_session_free(s);
    delete flag;
  }
  return a;
}

JNIEXPORT void JNICALL Java_dev_engine_Native_sessionFree(JNIEnv* env, jclass, jlong session, jlong flag) {
  // The flag only once the session is gone: a refused free (another thread's
  // evaluation under way) leaves the callback reading it.
  if (check(env, engine_session_free(session_of(session)))) delete from<StopFlag>(flag);
}

JNIEXPORT void JNICALL Java_dev_engine_Native_abort(JNIEnv*, jclass, jlong flag) {
  from<StopFlag>(flag)->stop.store(true, std::memory_order_relaxed);
}

JNIEXPORT void JNICALL Java_dev_engine_Native_prefill(JNIEnv* env, jclass, jlong session, jlong flag,
                                                     jintArray tokens) {
  std::vector<int32_t> t;
  if (!read_ints(env, tokens, t)) return;
  begin_evaluation(flag);
  check(env, engine_prefill(session_of(session), t.data(), t.size()));
}

JNIEXPORT jlong JNICALL Java_dev_engine_Native_prefillPrompt(JNIEnv* env, jclass, jlong session, jlong flag,
                                                            jintArray tokens) {
  std::vector<int32_t> t;
  if (!read_ints(env, tokens, t)) return 0;
  begin_evaluation(flag);
  size_t reused = 0;
  check(env, engine_prefill_prompt(session_of(session), t.data(), t.size(), &reused));
  return static_cast<jlong>(reused);
}

JNIEXPORT void JNICALL Java_dev_engine_Native_decode(JNIEnv* env, jclass, jlong session, jlong flag, jint token) {
  begin_evaluation(flag);
  check(env, engine_decode(session_of(session), token));
}

JNIEXPORT jfloatArray JNICALL Java_dev_engine_Native_logits(JNIEnv* env, jclass, jlong session, jfloatArray dst) {
  const float* logits = nullptr;
  size_t n = 0;
  if (!check(env, engine_logits(session_of(session), &logits, &n))) return nullptr;
  jfloatArray out = dst != nullptr ? dst : env->NewFloatArray(static_cast<jsize>(n));
  if (out == nullptr) return nullptr;
  if (static_cast<size_t>(env->GetArrayLength(out)) != n) {
    throw_java(env, "java/lang/IllegalArgumentException", "logits: dst does not have n_vocab floats");
    return nullptr;
  }
  env->SetFloatArrayRegion(out, 0, static_cast<jsize>(n), logits);
  return out;
}

JNIEXPORT jint JNICALL Java_dev_engine_Native_nPast(JNIEnv*, jclass, jlong session) {
  return static_cast<jint>(engine_session_n_past(session_of(session)));
}

JNIEXPORT jlong JNICALL Java_dev_engine_Native_nEvaluated(JNIEnv*, jclass, jlong session) {
  return static_cast<jlong>(engine_session_n_evaluated(session_of(session)));
}

JNIEXPORT jintArray JNICALL Java_dev_engine_Native_sessionTokens(JNIEnv* env, jclass, jlong session) {
  engine_session* s = session_of(session);
  std::vector<int32_t> out(engine_session_n_past(s));
  const engine_status status = engine::api::fill_buffer(
      out, [&](int32_t* ids, size_t cap, size_t* n) { return engine_session_tokens(s, ids, cap, n); });
  if (!check(env, status)) return nullptr;
  return new_ints(env, out.data(), out.size());
}

JNIEXPORT void JNICALL Java_dev_engine_Native_truncate(JNIEnv* env, jclass, jlong session, jint n) {
  check(env, engine_session_truncate(session_of(session), static_cast<uint32_t>(n)));
}

JNIEXPORT void JNICALL Java_dev_engine_Native_reset(JNIEnv* env, jclass, jlong session) {
  check(env, engine_session_reset(session_of(session)));
}

JNIEXPORT void JNICALL Java_dev_engine_Native_save(JNIEnv* env, jclass, jlong session, jbyteArray path) {
  Text p;
  if (read_text(env, path, p)) check(env, engine_session_save(session_of(session), p.c_str()));
}

JNIEXPORT void JNICALL Java_dev_engine_Native_load(JNIEnv* env, jclass, jlong session, jbyteArray path) {
  Text p;
  if (read_text(env, path, p)) check(env, engine_session_load(session_of(session), p.c_str()));
}

}  // extern "C"
