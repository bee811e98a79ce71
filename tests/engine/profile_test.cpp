// Session profiles (bench --profile): the operation classes add up to the wall
// time of the evaluations, and each class the forward pass has is seen.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/profile.h"
#include "engine/runtime/session.h"
#include "engine/threads/thread_plan.h"
#include "engine/threads/thread_pool.h"
#include "engine/threads/topology.h"
#include "tests/support/shared_data.h"

namespace {

void check_profile(engine::ThreadPool* pool) {
  const std::filesystem::path model_path = ::engine_test::default_model();
  const auto model = engine::Model::load(model_path.string());
  engine::Session s(*model, {.n_ctx = 64, .pool = pool});
  std::vector<int32_t> prompt(32);
  std::iota(prompt.begin(), prompt.end(), 10);

  engine::Profile profile;
  s.set_profile(&profile);
  const auto t0 = std::chrono::steady_clock::now();
  s.eval(prompt);
  for (int32_t t = 50; t < 58; ++t) s.eval({&t, 1});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.set_profile(nullptr);
  s.eval({prompt.data(), 1});  // detached: adds nothing

  EXPECT_EQ(profile.tokens, 40u);
  EXPECT_GT(profile.matmul[static_cast<uint32_t>(gguf::GgmlType::F32)], 0.0);
  EXPECT_GT(profile.attention, 0.0);
  EXPECT_GT(profile.elementwise, 0.0);
  EXPECT_GE(profile.pool_wait, 0.0);
  EXPECT_EQ(profile.sampling, 0.0);  // the caller's to fill
  // Everything inside the evaluations is attributed; outside them only the
  // argument checks run.
  EXPECT_LE(profile.total(), wall * 1.001);
  EXPECT_GE(profile.total(), wall * 0.8) << "total " << profile.total() << " s of " << wall << " s";
}

TEST(Profile, ClassesAddUpToTheEvaluationTimeOnOneThread) { check_profile(nullptr); }

TEST(Profile, ClassesAddUpToTheEvaluationTimeWithAPool) {
  engine::ThreadOptions options;
  options.n_threads = 2;
  options.set_cpus("none");
  engine::ThreadPool pool(engine::ThreadPlan::make(engine::CpuTopology::detect("/"), options));
  check_profile(&pool);
}

}  // namespace
