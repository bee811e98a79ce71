// dev.engine.Native's model functions: load, free, tokens, version.
#include <cstring>
#include <string>
#include <vector>

#include "jni_support.h"

using namespace engine::jni;

extern "C" {

JNIEXPORT jlong JNICALL Java_dev_engine_Native_modelLoad(JNIEnv* env, jclass, jbyteArray path) {
  Text p;
  if (!read_text(env, path, p)) return 0;
  engine_model* model = nullptr;
  if (!check(env, engine_model_load(p.c_str(), &model))) return 0;
  return to_jlong(model);
}

JNIEXPORT jlong JNICALL Java_dev_engine_Native_modelLoadEx(JNIEnv* env, jclass, jbyteArray path, jbyteArray cache_dir,
                                                          jobject progress) {
  Text p, dir;
  if (!read_text(env, path, p) || !read_text(env, cache_dir, dir)) return 0;
  // The callback runs on this thread, inside the load: `env` is its own.
  struct Listener {
    JNIEnv* env;
    jobject progress;
    jmethodID on_progress;
    jthrowable pending = nullptr;  // thrown once the engine returns
  } l{env, progress, nullptr};
  engine_load_options o = engine_load_default_options();
  o.cache_dir = dir.c_str();
  if (progress != nullptr) {
    jclass cls = env->GetObjectClass(progress);
    l.on_progress = env->GetMethodID(cls, "onProgress", "(FLjava/lang/String;)Z");
    env->DeleteLocalRef(cls);
    if (l.on_progress == nullptr) return 0;  // NoSuchMethodError pending
    o.user_data = &l;
    o.progress = [](float fraction, const char* phase, void* user) {
      auto* self = static_cast<Listener*>(user);
      JNIEnv* e = self->env;
      jstring name = e->NewStringUTF(phase);
      jboolean go = JNI_FALSE;
      if (name != nullptr) {
        go = e->CallBooleanMethod(self->progress, self->on_progress, fraction, name);
        e->DeleteLocalRef(name);
      }
      if (e->ExceptionCheck()) {
        self->pending = e->ExceptionOccurred();
        e->ExceptionClear();
        return false;
      }
      return go == JNI_TRUE;
    };
  }
  engine_model* model = nullptr;
  const engine_status s = engine_model_load_ex(p.c_str(), &o, &model);
  if (l.pending != nullptr) {
    env->Throw(l.pending);
    return 0;
  }
  if (!check(env, s)) return 0;
  return to_jlong(model);
}

JNIEXPORT void JNICALL Java_dev_engine_Native_modelFree(JNIEnv* env, jclass, jlong model) {
  check(env, engine_model_free(from<engine_model>(model)));
}

JNIEXPORT jintArray JNICALL Java_dev_engine_Native_modelInfo(JNIEnv* env, jclass, jlong handle) {
  const engine_model* m = from<engine_model>(handle);
  const int32_t info[] = {engine_model_n_vocab(m), engine_model_n_ctx_train(m), engine_model_bos(m),
                          engine_model_eos(m)};
  return new_ints(env, info, 4);
}

JNIEXPORT jboolean JNICALL Java_dev_engine_Native_isEndOfGeneration(JNIEnv*, jclass, jlong model, jint token) {
  return engine_model_is_end_of_generation(from<engine_model>(model), token) ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jintArray JNICALL Java_dev_engine_Native_tokenize(JNIEnv* env, jclass, jlong model, jbyteArray text,
                                                           jboolean add_bos, jboolean parse_special) {
  Text t;
  if (!read_text(env, text, t)) return nullptr;
  if (!t.present) {
    throw_java(env, "java/lang/NullPointerException", "tokenize: the text is null");
    return nullptr;
  }
  const engine_model* m = from<engine_model>(model);
  std::vector<int32_t> ids(t.bytes.size() + 2);  // enough unless the tokenizer splits below bytes
  const engine_status s = engine::api::fill_buffer(ids, [&](int32_t* out, size_t cap, size_t* n) {
    return engine_tokenize(m, t.bytes.data(), t.bytes.size(), add_bos, parse_special, out, cap, n);
  });
  if (!check(env, s)) return nullptr;
  return new_ints(env, ids.data(), ids.size());
}

JNIEXPORT jbyteArray JNICALL Java_dev_engine_Native_tokenBytes(JNIEnv* env, jclass, jlong model, jint token) {
  const engine_model* m = from<engine_model>(model);
  std::string piece(32, '\0');
  const engine_status s = engine::api::fill_buffer(
      piece, [&](char* out, size_t cap, size_t* n) { return engine_token_to_piece(m, token, out, cap, n); });
  if (!check(env, s)) return nullptr;
  return new_bytes(env, piece.data(), piece.size());
}

JNIEXPORT jbyteArray JNICALL Java_dev_engine_Native_detokenize(JNIEnv* env, jclass, jlong model, jintArray tokens) {
  const engine_model* m = from<engine_model>(model);
  std::vector<int32_t> ids;
  if (!read_ints(env, tokens, ids)) return nullptr;
  std::string text(4 * ids.size() + 16, '\0');
  const engine_status s = engine::api::fill_buffer(
      text, [&](char* out, size_t cap, size_t* n) { return engine_detokenize(m, ids.data(), ids.size(), out, cap, n); });
  if (!check(env, s)) return nullptr;
  return new_bytes(env, text.data(), text.size());
}

JNIEXPORT jobjectArray JNICALL Java_dev_engine_Native_builtinChatTemplates(JNIEnv* env, jclass) {
  size_t n = 0;
  if (!check(env, engine_chat_builtin_templates(nullptr, 0, &n))) return nullptr;
  std::vector<const char*> names(n);
  if (!check(env, engine_chat_builtin_templates(names.data(), names.size(), &n))) return nullptr;
  jclass string_class = env->FindClass("java/lang/String");
  if (string_class == nullptr) return nullptr;
  jobjectArray out = env->NewObjectArray(static_cast<jsize>(n), string_class, nullptr);
  env->DeleteLocalRef(string_class);
  for (size_t i = 0; out != nullptr && i < n; ++i) {
    jstring name = env->NewStringUTF(names[i]);  // ASCII names: modified UTF-8 is the same
    if (name == nullptr) return nullptr;
    env->SetObjectArrayElement(out, static_cast<jsize>(i), name);
    env->DeleteLocalRef(name);
  }
  return out;
}

JNIEXPORT jstring JNICALL Java_dev_engine_Native_version(JNIEnv* env, jclass) {
  return env->NewStringUTF(engine_version());
}

}  // extern "C"
