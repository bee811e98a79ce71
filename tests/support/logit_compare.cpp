#include "tests/support/logit_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <vector>

#include "engine/model/model.h"
#include "engine/runtime/session.h"

namespace engine_test {
namespace {

size_t argmax(const float* row, size_t n) { return static_cast<size_t>(std::max_element(row, row + n) - row); }

// KL(softmax(ref) || softmax(eng)) in nats, in double.
double kld(const float* ref, const float* eng, size_t n) {
  auto log_softmax = [n](const float* x) {
    const double mx = *std::max_element(x, x + n);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += std::exp(x[i] - mx);
    std::vector<double> out(n);
    for (size_t i = 0; i < n; ++i) out[i] = x[i] - mx - std::log(sum);
    return out;
  };
  const auto lr = log_softmax(ref);
  const auto le = log_softmax(eng);
  double k = 0;
  for (size_t i = 0; i < n; ++i) k += std::exp(lr[i]) * (lr[i] - le[i]);
  return k;
}

// The KV cache type the reference ran with (its config's kv_type_k and
// kv_type_v: "f32", or "q8_0" / "q4_0" for llama.cpp's quantized caches).
engine::KvType reference_kv_type(const Json& ref) {
  const Json& config = ref["config"];
  const std::string k = config["kv_type_k"].string(), v = config["kv_type_v"].string();
  const std::optional<engine::KvType> t = engine::parse_kv_type(k);
  if (!t || k != v) throw std::runtime_error("reference KV cache K " + k + ", V " + v + ": the engine has no such cache");
  return *t;
}

}  // namespace

ReferenceEntry reference_entry(const std::filesystem::path& manifest_path, const std::string& name) {
  const Json manifest = Json::parse_file(manifest_path);
  for (const Json& f : manifest["files"].array()) {
    if (f["file"].string() != name + ".gguf") continue;
    ReferenceEntry e;
    e.type = f["type"].string();
    const Json& t = manifest["tolerances"][e.type];
    e.tol = {t["rel_max"].number(), t["top1_min_frac"].number(), t["kld_mean_max"].number()};
    e.model = manifest_path.parent_path() / (name + ".gguf");
    e.reference = manifest_path.parent_path() / f["reference"].string();
    return e;
  }
  throw std::runtime_error(name + " is not in " + manifest_path.string());
}

std::string LogitComparison::describe(const LogitTolerance& tol) const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "rel_max %.3g (tol %.3g), top1 %.3f (min %.2f), kld_mean %.3g (max %.3g), %zu rows%s%s",
                rel_max, tol.rel_max, top1, tol.top1_min, kld_mean, tol.kld_max, rows,
                greedy_mismatch >= 0 ? ", greedy differs at step " : "",
                greedy_mismatch >= 0 ? std::to_string(greedy_mismatch).c_str() : "");
  return std::string(buf) + (all_finite ? "" : ", NON-FINITE logits");
}

LogitComparison compare_logits(const std::string& model_path, const Json& ref, const LogitTolerance& tol) {
  const auto model = engine::Model::load(model_path);
  const size_t n_vocab = model->config().n_vocab;
  if (n_vocab != static_cast<size_t>(ref["n_vocab"].number())) {
    throw std::runtime_error(model_path + ": vocab " + std::to_string(n_vocab) + " differs from the reference's");
  }
  const std::vector<int32_t> tokens = ref["tokens"].ints();
  const std::vector<int32_t> greedy = ref["greedy"].ints();

  // As the reference ran: its KV cache type and context; the prompt in
  // batches of 32 tokens (a longer prompt crosses batches, which llama.cpp's
  // single batch does not: recurrent state is carried between them). The
  // prefill rows compared are those the reference kept (logits_positions).
  const engine::KvType kv = reference_kv_type(ref);
  const bool has_ctx = ref.has("config") && ref["config"].has("n_ctx");  // the f64 references have no config
  const auto n_ctx = has_ctx ? static_cast<uint32_t>(ref["config"]["n_ctx"].number()) : 256u;
  engine::Session session(*model, {.n_ctx = n_ctx, .n_batch = 32, .kv_type = kv});
  std::vector<std::vector<float>> engine_rows, ref_rows;
  session.eval(tokens, /*all_logits=*/true);
  const std::vector<int32_t> positions = ref["logits_positions"].ints();
  for (size_t r = 0; r < positions.size(); ++r) {
    const auto p = static_cast<size_t>(positions[r]);
    if (p >= tokens.size()) throw std::runtime_error("logits_positions names a position past the prompt");
    engine_rows.emplace_back(session.logits().begin() + p * n_vocab, session.logits().begin() + (p + 1) * n_vocab);
    ref_rows.push_back(ref["logits"][r].floats());
  }
  for (size_t i = 1; i < greedy.size(); ++i) {  // teacher-forced decode
    const int32_t t = greedy[i - 1];
    session.eval({&t, 1});
    engine_rows.emplace_back(session.logits().begin(), session.logits().end());
    ref_rows.push_back(ref["greedy_logits"][i].floats());
  }

  LogitComparison c;
  c.rows = ref_rows.size();
  double max_diff = 0, kld_sum = 0;
  for (size_t r = 0; r < c.rows; ++r) {
    for (size_t j = 0; j < n_vocab; ++j) {
      if (!std::isfinite(engine_rows[r][j])) c.all_finite = false;
      c.max_ref = std::max(c.max_ref, std::fabs(static_cast<double>(ref_rows[r][j])));
      max_diff = std::max(max_diff, std::fabs(static_cast<double>(engine_rows[r][j]) - ref_rows[r][j]));
    }
  }
  size_t agree = 0;
  for (size_t r = 0; r < c.rows; ++r) {
    const size_t e = argmax(engine_rows[r].data(), n_vocab);
    const size_t k = argmax(ref_rows[r].data(), n_vocab);
    const bool near_tie = ref_rows[r][k] - ref_rows[r][e] <= 2 * tol.rel_max * c.max_ref;
    agree += (e == k || near_tie) ? 1 : 0;
    kld_sum += kld(ref_rows[r].data(), engine_rows[r].data(), n_vocab);
  }
  c.rel_max = max_diff / c.max_ref;
  c.top1 = static_cast<double>(agree) / static_cast<double>(c.rows);
  c.kld_mean = kld_sum / static_cast<double>(c.rows);

  // Free-running greedy: equal up to the first step whose reference margin is
  // within the tolerance (a near-tie, after which sequences may part).
  engine::Session free_run(*model, {.n_ctx = n_ctx, .n_batch = 32, .kv_type = kv});
  free_run.eval(tokens);
  const Json& top5 = ref["greedy_logits_top5"];
  for (size_t i = 0; i < greedy.size(); ++i) {
    const double margin = top5[i][0][1].number() - top5[i][1][1].number();
    if (margin < 2 * tol.rel_max * c.max_ref) break;
    const auto next = static_cast<int32_t>(argmax(free_run.logits().data(), n_vocab));
    if (next != greedy[i]) {
      c.greedy_mismatch = static_cast<int>(i);
      break;
    }
    free_run.eval({&next, 1});
  }
  return c;
}

}  // namespace engine_test
