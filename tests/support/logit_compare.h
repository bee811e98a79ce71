// Engine logits against llama.cpp's reference logits, the way
// ../shared/models/reference/README.md prescribes: 47 rows (32 prefill rows
// evaluated as one batch, 15 teacher-forced decode rows) compared by rel_max,
// top-1 agreement (near-ties count as agreeing) and mean KL divergence, plus
// free-running greedy up to the first near-tie, with the KV cache type the
// reference's config names (F32 for most; Q8_0 / Q4_0 for the references made
// with llama.cpp's quantized cache).
#pragma once

#include <filesystem>
#include <string>

#include "tests/support/json.h"

namespace engine_test {

struct LogitTolerance {
  double rel_max = 0, top1_min = 0, kld_max = 0;
};

// A reference model of manifest.json: its tolerances (by its type) and the
// llama.cpp logits file. Throws std::runtime_error when `name` (e.g.
// "llama-d256-Q4_0") is not listed.
struct ReferenceEntry {
  std::string type;  // "Q4_K_M"
  LogitTolerance tol;
  std::filesystem::path model;      // <dir>/<name>.gguf
  std::filesystem::path reference;  // <dir>/<name>.llamacpp.json
};
ReferenceEntry reference_entry(const std::filesystem::path& manifest_path, const std::string& name);

struct LogitComparison {
  size_t rows = 0;
  double max_ref = 0;    // max |R| over the rows
  double rel_max = 0;    // max |E - R| / max |R|
  double top1 = 0;       // fraction of rows agreeing (near-ties included)
  double kld_mean = 0;   // mean KL(softmax(R) || softmax(E)), nats
  int greedy_mismatch = -1;  // first free-running step (before a near-tie) that differs; -1: none
  bool all_finite = true;

  bool passes(const LogitTolerance& tol) const {
    return all_finite && rel_max <= tol.rel_max && top1 >= tol.top1_min && kld_mean <= tol.kld_max &&
           greedy_mismatch < 0;
  }
  std::string describe(const LogitTolerance& tol) const;  // "rel_max 0.0123 (tol 0.09), top1 ..."
};

// Runs the model file through the procedure against `ref` (a *.llamacpp.json);
// `tol` sets the near-tie margins (2 * tol.rel_max * max|R|).
LogitComparison compare_logits(const std::string& model_path, const Json& ref, const LogitTolerance& tol);

}  // namespace engine_test
