// dev.engine.Native's sampler functions.
#include "jni_support.h"

using namespace engine::jni;

extern "C" {

JNIEXPORT jdoubleArray JNICALL Java_dev_engine_Native_samplerDefaults(JNIEnv* env, jclass) {
  const engine_sampler_params p = engine_sampler_default_params();
  const double values[] = {p.temperature, static_cast<double>(p.top_k), p.top_p, p.min_p, p.repeat_penalty,
                           static_cast<double>(p.repeat_last_n), static_cast<double>(p.seed)};
  jdoubleArray out = env->NewDoubleArray(7);
  if (out != nullptr) env->SetDoubleArrayRegion(out, 0, 7, values);
  return out;
}

JNIEXPORT jlong JNICALL Java_dev_engine_Native_samplerCreate(JNIEnv* env, jclass, jfloat temperature, jint top_k,
                                                            jfloat top_p, jfloat min_p, jfloat repeat_penalty,
                                                            jint repeat_last_n, jint seed) {
  engine_sampler_params p = engine_sampler_default_params();
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.min_p = min_p;
  p.repeat_penalty = repeat_penalty;
  p.repeat_last_n = repeat_last_n;
  p.seed = static_cast<uint32_t>(seed);
  engine_sampler* s = nullptr;
  if (!check(env, engine_sampler_create(&p, &s))) return 0;
  return to_jlong(s);
}

JNIEXPORT void JNICALL Java_dev_engine_Native_samplerFree(JNIEnv* env, jclass, jlong sampler) {
  check(env, engine_sampler_free(from<engine_sampler>(sampler)));
}

JNIEXPORT jint JNICALL Java_dev_engine_Native_sample(JNIEnv* env, jclass, jlong sampler, jlong session) {
  int32_t token = -1;
  check(env, engine_sample(from<engine_sampler>(sampler), from<engine_session>(session), &token));
  return token;
}

JNIEXPORT void JNICALL Java_dev_engine_Native_samplerAccept(JNIEnv* env, jclass, jlong sampler, jint token) {
  check(env, engine_sampler_accept(from<engine_sampler>(sampler), token));
}

JNIEXPORT void JNICALL Java_dev_engine_Native_samplerSetGrammar(JNIEnv* env, jclass, jlong sampler, jlong model,
                                                                jbyteArray text, jbyteArray root, jboolean json_schema) {
  Text t, r;
  if (!read_text(env, text, t) || !read_text(env, root, r)) return;
  auto* s = from<engine_sampler>(sampler);
  auto* m = from<engine_model>(model);
  check(env, json_schema ? engine_sampler_set_json_schema(s, m, t.c_str())
                         : engine_sampler_set_grammar(s, m, t.c_str(), r.c_str()));
}

JNIEXPORT void JNICALL Java_dev_engine_Native_samplerSetToolGrammar(JNIEnv* env, jclass, jlong sampler, jlong model,
                                                                    jbyteArray tools, jbyteArray format) {
  Text t, f;
  if (!read_text(env, tools, t) || !read_text(env, format, f)) return;
  check(env, engine_sampler_set_tool_grammar(from<engine_sampler>(sampler), from<engine_model>(model), t.c_str(),
                                             f.c_str()));
}

}  // extern "C"
