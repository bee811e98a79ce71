// JNI_OnLoad and the helpers of jni_support.h.
#include "jni_support.h"

#include <cstring>

namespace engine::jni {
namespace {

// Global references and method ids, valid for the library's life. Looked up in
// JNI_OnLoad, on the thread that loads the library, because FindClass on a
// thread the app started natively sees only the system classes (Android).
struct Classes {
  jclass engine_exception = nullptr;
  jmethodID from_native = nullptr;
  jmethodID sink_accept = nullptr;
} g;

}  // namespace

StopFlag* begin_evaluation(jlong flag) {
  StopFlag* f = from<StopFlag>(flag);
  f->stop.store(false, std::memory_order_relaxed);
  return f;
}

bool check(JNIEnv* env, engine_status status) {
  if (status == ENGINE_OK) return true;
  const char* message = engine_last_error();
  jbyteArray bytes = new_bytes(env, message, std::strlen(message));
  if (bytes == nullptr) return false;
  auto error = static_cast<jthrowable>(
      env->CallStaticObjectMethod(g.engine_exception, g.from_native, static_cast<jint>(status), bytes));
  env->DeleteLocalRef(bytes);
  if (env->ExceptionCheck()) return false;  // building it failed: that exception is thrown instead
  env->Throw(error);
  env->DeleteLocalRef(error);
  return false;
}

void throw_java(JNIEnv* env, const char* class_name, const std::string& message) {
  jclass c = env->FindClass(class_name);
  if (c == nullptr) return;  // NoClassDefFoundError pending
  env->ThrowNew(c, message.c_str());
  env->DeleteLocalRef(c);
}

bool read_text(JNIEnv* env, jbyteArray array, Text& out) {
  out.present = array != nullptr;
  out.bytes.clear();
  if (array == nullptr) return true;
  out.bytes.resize(static_cast<size_t>(env->GetArrayLength(array)));
  env->GetByteArrayRegion(array, 0, static_cast<jsize>(out.bytes.size()), reinterpret_cast<jbyte*>(out.bytes.data()));
  return !env->ExceptionCheck();
}

bool read_texts(JNIEnv* env, jobjectArray arrays, std::vector<Text>& out) {
  out.clear();
  if (arrays == nullptr) return true;
  out.resize(static_cast<size_t>(env->GetArrayLength(arrays)));
  for (size_t i = 0; i < out.size(); ++i) {
    auto item = static_cast<jbyteArray>(env->GetObjectArrayElement(arrays, static_cast<jsize>(i)));
    if (env->ExceptionCheck()) return false;
    const bool ok = read_text(env, item, out[i]);
    if (item != nullptr) env->DeleteLocalRef(item);  // one per element: a long conversation would fill the table
    if (!ok) return false;
  }
  return true;
}

bool read_ints(JNIEnv* env, jintArray array, std::vector<int32_t>& out) {
  if (array == nullptr) {
    throw_java(env, "java/lang/NullPointerException", "the token array is null");
    return false;
  }
  out.resize(static_cast<size_t>(env->GetArrayLength(array)));
  env->GetIntArrayRegion(array, 0, static_cast<jsize>(out.size()), reinterpret_cast<jint*>(out.data()));
  return !env->ExceptionCheck();
}

jbyteArray new_bytes(JNIEnv* env, const char* data, size_t len) {
  jbyteArray a = env->NewByteArray(static_cast<jsize>(len));
  if (a != nullptr) env->SetByteArrayRegion(a, 0, static_cast<jsize>(len), reinterpret_cast<const jbyte*>(data));
  return a;
}

jintArray new_ints(JNIEnv* env, const int32_t* data, size_t n) {
  jintArray a = env->NewIntArray(static_cast<jsize>(n));
  if (a != nullptr) env->SetIntArrayRegion(a, 0, static_cast<jsize>(n), reinterpret_cast<const jint*>(data));
  return a;
}

jlongArray new_longs(JNIEnv* env, const int64_t* data, size_t n) {
  jlongArray a = env->NewLongArray(static_cast<jsize>(n));
  if (a != nullptr) env->SetLongArrayRegion(a, 0, static_cast<jsize>(n), reinterpret_cast<const jlong*>(data));
  return a;
}

jboolean call_sink(JNIEnv* env, jobject sink, jbyteArray piece) {
  return env->CallBooleanMethod(sink, g.sink_accept, piece);
}

}  // namespace engine::jni

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* /*reserved*/) {
  using engine::jni::g;
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  jclass exception = env->FindClass("dev/engine/EngineException");
  if (exception == nullptr) return JNI_ERR;
  g.engine_exception = static_cast<jclass>(env->NewGlobalRef(exception));
  env->DeleteLocalRef(exception);
  g.from_native = env->GetStaticMethodID(g.engine_exception, "fromNative", "(I[B)Ldev/engine/EngineException;");
  jclass sink = env->FindClass("dev/engine/Native$TextSink");
  if (g.engine_exception == nullptr || g.from_native == nullptr || sink == nullptr) return JNI_ERR;
  g.sink_accept = env->GetMethodID(sink, "accept", "([B)Z");
  env->DeleteLocalRef(sink);
  return g.sink_accept == nullptr ? JNI_ERR : JNI_VERSION_1_6;
}
