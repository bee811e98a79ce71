// engine_session_kv_info and the C++ wrapper's kv_info: the KV cache's bytes
// beside a full cache's, for a model without windows (equal) and for a
// Gemma 3 1B-shaped one at 32k context (under a fifth).
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "engine/api/engine.h"
#include "engine/api/engine.hpp"
#include "engine/support/log.h"
#include "tests/engine/gemma3_shape.h"
#include "tests/quantize/test_util.h"
#include "tests/support/shared_data.h"

namespace {

engine_session_params params(uint32_t n_ctx) {
  engine_session_params p = engine_session_default_params();
  p.n_ctx = n_ctx;
  p.n_threads = 1;
  return p;
}

TEST(CApiKv, AModelWithoutWindowsHoldsAFullCache) {
  engine::set_log_level(engine::LogLevel::error);
  const std::string path = engine_test::default_model().string();
  engine_model* model = nullptr;
  ASSERT_EQ(engine_model_load(path.c_str(), &model), ENGINE_OK) << engine_last_error();
  const engine_session_params p = params(64);
  engine_session* s = nullptr;
  ASSERT_EQ(engine_session_create(model, &p, &s), ENGINE_OK) << engine_last_error();
  engine_kv_info info{};
  ASSERT_EQ(engine_session_kv_info(s, &info), ENGINE_OK) << engine_last_error();
  // 5 layers x 64 positions x (32 + 32) values x 2 bytes.
  EXPECT_EQ(info.bytes, 5u * 64 * 64 * 2);
  EXPECT_EQ(info.full_bytes, info.bytes);
  EXPECT_EQ(info.n_ctx, 64u);
  EXPECT_EQ(info.n_layers, 5u);
  EXPECT_EQ(info.n_windowed_layers, 0u);
  EXPECT_EQ(info.window, 0u);
  EXPECT_EQ(info.kv_type, ENGINE_KV_F16);

  EXPECT_EQ(engine_session_kv_info(s, nullptr), ENGINE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);

  engine_session_params f32 = params(64);
  f32.kv_type = ENGINE_KV_F32;
  ASSERT_EQ(engine_session_create(model, &f32, &s), ENGINE_OK) << engine_last_error();
  engine_kv_info wide{};
  ASSERT_EQ(engine_session_kv_info(s, &wide), ENGINE_OK) << engine_last_error();
  EXPECT_EQ(wide.bytes, 2 * info.bytes);
  EXPECT_EQ(wide.kv_type, ENGINE_KV_F32);
  EXPECT_EQ(engine_session_free(s), ENGINE_OK);
  EXPECT_EQ(engine_session_kv_info(s, &info), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_session_kv_info(nullptr, &info), ENGINE_ERR_INVALID_HANDLE);
  EXPECT_EQ(engine_model_free(model), ENGINE_OK);
  engine::set_log_level(engine::LogLevel::info);
}

TEST(CApiKv, AGemma3ShapedSessionAt32kHoldsUnderAFifthOfAFullCache) {
  quantize_test::TempDir dir("c-api-kv");
  const std::string path = dir / "g.gguf";
  engine_test::write_gemma3_1b_cache_model(path);

  engine::api::Model model(path);
  const engine::api::Session session(model, params(32768));
  const engine_kv_info info = session.kv_info();
  // Per layer and position 256 keys and 256 values of 2 bytes. The 4 global
  // layers keep 32768 positions, the 22 local ones 512 + 512 - 1.
  EXPECT_EQ(info.bytes, (4u * 32768 + 22 * 1023) * 1024);
  EXPECT_EQ(info.full_bytes, 26u * 32768 * 1024);
  EXPECT_LT(info.bytes * 5, info.full_bytes);
  EXPECT_EQ(info.n_ctx, 32768u);
  EXPECT_EQ(info.n_layers, 26u);
  EXPECT_EQ(info.n_windowed_layers, 22u);
  EXPECT_EQ(info.window, 512u);
  EXPECT_EQ(info.kv_type, ENGINE_KV_F16);

  // The same with Q8_0 and Q4_0 blocks: 34 and 18 bytes for each 32 values
  // where F16 takes 64, windows and full cache alike.
  for (const auto& [type, block] : {std::pair{ENGINE_KV_Q8_0, 34u}, std::pair{ENGINE_KV_Q4_0, 18u}}) {
    engine_session_params p = params(32768);
    p.kv_type = type;
    const engine_kv_info q = engine::api::Session(model, p).kv_info();
    EXPECT_EQ(q.bytes, (4u * 32768 + 22 * 1023) * 512 / 32 * block);
    EXPECT_EQ(q.full_bytes, 26u * 32768 * 512 / 32 * block);
    EXPECT_EQ(q.kv_type, type);
  }
}

}  // namespace
