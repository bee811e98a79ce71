#include "tools/common/model_writing/row_stream.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

#include "kernels/ref/type_ops.h"

namespace tools {
namespace {

// Elements a task converts at once: 1 MiB of floats, small enough to stay in
// cache next to its output, large enough that a task is not all overhead.
constexpr uint64_t kTaskElements = 256 * 1024;
// Tasks per thread in a batch, so a slow thread does not hold up the batch.
constexpr uint64_t kTasksPerThread = 4;

}  // namespace

Progress::Progress(uint64_t total_bytes, bool enabled)
    : total_(total_bytes), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (enabled_ && !finished_ && done_ > 0) std::fputc('\n', stderr);  // leave the bar's line on an error
}

void Progress::add(uint64_t bytes) {
  done_ += bytes;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw();
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  label_.clear();
  draw();
  std::fputc('\n', stderr);
}

void Progress::draw() {
  constexpr int kWidth = 30;
  const double frac = total_ == 0 ? 1.0 : std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_));
  const int filled = static_cast<int>(frac * kWidth);
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < kWidth) bar += '>' + std::string(static_cast<size_t>(kWidth - filled - 1), ' ');
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "\r%3d%% [%s] %8.1f / %.1f MiB %5.0f s  %-40.40s", static_cast<int>(frac * 100), bar.c_str(),
               static_cast<double>(done_) / (1 << 20), static_cast<double>(total_) / (1 << 20), secs, label_.c_str());
  std::fflush(stderr);
}

void stream_rows(engine::ThreadPool& pool, gguf::GgmlType type, uint64_t row_length, uint64_t n_rows,
                 const RowSource& source, gguf::TensorSink& sink, Progress* progress, const BatchDone& batch_done,
                 RowWeights weights) {
  const kernels::ref::TypeOps* ops = kernels::ref::type_ops(type);
  const std::optional<uint64_t> row_bytes = gguf::row_bytes(type, row_length);
  if (ops == nullptr || ops->quantize_row == nullptr || !row_bytes) {
    throw std::runtime_error("cannot write " + std::to_string(row_length) + "-element rows as " +
                             std::string(gguf::type_name(type)));
  }
  const bool weighted = weights.values != nullptr && ops->quantize_row_weighted != nullptr;
  const uint64_t rows_per_task = std::max<uint64_t>(1, kTaskElements / row_length);
  const uint64_t rows_per_batch = rows_per_task * kTasksPerThread * pool.size();
  std::vector<uint8_t> out(static_cast<size_t>(std::min(rows_per_batch, n_rows) * *row_bytes));
  std::vector<std::vector<float>> scratch(pool.size());

  for (uint64_t first = 0; first < n_rows; first += rows_per_batch) {
    const uint64_t batch = std::min(rows_per_batch, n_rows - first);
    const size_t n_tasks = static_cast<size_t>((batch + rows_per_task - 1) / rows_per_task);
    pool.run(n_tasks, [&](size_t task, size_t thread) {
      const uint64_t r0 = task * rows_per_task;
      const uint64_t nr = std::min(rows_per_task, batch - r0);
      std::vector<float>& x = scratch[thread];
      if (x.size() < nr * row_length) x.resize(static_cast<size_t>(rows_per_task * row_length));
      source(first + r0, nr, x.data());
      for (uint64_t r = 0; r < nr; ++r) {
        const float* row = x.data() + r * row_length;
        uint8_t* dst = out.data() + (r0 + r) * *row_bytes;
        if (weighted) {
          const uint64_t matrix = (first + r0 + r) / weights.rows_per_matrix;
          ops->quantize_row_weighted(row, dst, row_length, weights.values + matrix * row_length);
        } else {
          ops->quantize_row(row, dst, row_length);
        }
      }
    });
    sink.write(out.data(), static_cast<size_t>(batch * *row_bytes));
    if (progress != nullptr) progress->add(batch * *row_bytes);
    if (batch_done) batch_done(first, batch);
  }
}

}  // namespace tools
