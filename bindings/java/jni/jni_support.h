// What the JNI functions of the Java binding share (bindings/java/jni): the
// Java classes and methods they call, looked up once in JNI_OnLoad; turning a
// failed engine call into a thrown dev.engine.EngineException; byte and int
// arrays to and from C++.
//
// The rule every function follows: when a Java exception is pending (thrown
// here, or by a JNI call that failed, such as an allocation), it returns at
// once, calling nothing more of JNI but releasing local references.
#pragma once

#include <jni.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/api/engine.hpp"

namespace engine::jni {

// Handles cross as jlong (opaque numbers for the C API, never dereferenced here).
template <class T>
T* from(jlong handle) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(handle));
}
template <class T>
jlong to_jlong(T* p) {
  return static_cast<jlong>(reinterpret_cast<uintptr_t>(p));
}

// A session's stop flag: Session.abort() sets it from any thread, the
// session's abort callback reads it before every layer.
struct StopFlag {
  std::atomic<bool> stop{false};
};
// Clears the flag before an evaluation: abort() stops the evaluation under
// way, not one that begins later.
StopFlag* begin_evaluation(jlong flag);

// Throws EngineException(status, engine_last_error()) when status is not OK;
// returns whether it was OK.
bool check(JNIEnv* env, engine_status status);
// Throws a Java exception of a JDK class (e.g. "java/lang/IllegalArgumentException").
void throw_java(JNIEnv* env, const char* class_name, const std::string& message);

// A byte[] of UTF-8 as a C string: null stays null (the C API's "none").
struct Text {
  std::string bytes;
  bool present = false;
  const char* c_str() const { return present ? bytes.c_str() : nullptr; }
};
// false (with an exception pending) when the array cannot be read.
bool read_text(JNIEnv* env, jbyteArray array, Text& out);
// The elements of a byte[][] (null arrays allowed: null entries stay null).
bool read_texts(JNIEnv* env, jobjectArray arrays, std::vector<Text>& out);
bool read_ints(JNIEnv* env, jintArray array, std::vector<int32_t>& out);

// New Java arrays; nullptr with an exception pending when allocation fails.
jbyteArray new_bytes(JNIEnv* env, const char* data, size_t len);
jintArray new_ints(JNIEnv* env, const int32_t* data, size_t n);
jlongArray new_longs(JNIEnv* env, const int64_t* data, size_t n);

// Calls Native.TextSink.accept(byte[]) (on the generating thread).
jboolean call_sink(JNIEnv* env, jobject sink, jbyteArray piece);

}  // namespace engine::jni
