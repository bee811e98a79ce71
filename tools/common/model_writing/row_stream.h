// Writing a tensor a batch of rows at a time: rows come from a callback as
// floats (dequantized from an input file, or generated), are converted to the
// output type by the scalar reference quantizers, spread over a thread pool,
// and go to the GGUF writer's sink in row order. Memory stays at a few MiB per
// thread whatever the tensor's size, so a 7B model is written in bounded RAM.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "engine/threads/thread_pool.h"
#include "gguf/writer.h"

namespace tools {

// A progress bar on stderr, drawn only when stderr is a terminal, redrawn at
// most every 100 ms. Counts bytes written.
class Progress {
 public:
  Progress(uint64_t total_bytes, bool enabled);
  ~Progress();
  void set_label(std::string label) { label_ = std::move(label); }
  void add(uint64_t bytes);
  void finish();  // draws 100% and ends the line

 private:
  void draw();
  uint64_t total_ = 0, done_ = 0;
  bool enabled_ = false, finished_ = false;
  std::string label_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

// Fills rows [first_row, first_row + n_rows) of a tensor as floats into dst
// (n_rows * row_length). Called concurrently for disjoint rows; must not throw.
using RowSource = std::function<void(uint64_t first_row, uint64_t n_rows, float* dst)>;

// Called on the calling thread after each batch of rows is written (quantize
// drops the batch's input pages from the resident set).
using BatchDone = std::function<void(uint64_t first_row, uint64_t n_rows)>;

// An importance matrix's weights for one tensor (quantize --imatrix):
// row_length weights per matrix of rows_per_matrix rows (one matrix, or one
// per expert of a 3-D tensor). values nullptr: none.
struct RowWeights {
  const float* values = nullptr;
  uint64_t rows_per_matrix = 1;
};

// Writes n_rows rows of row_length elements, in `type`, to `sink`.
// row_length must be a multiple of the type's block size. With weights, types
// whose quantizer takes an importance matrix use it (kernels/ref/quants.h).
void stream_rows(engine::ThreadPool& pool, gguf::GgmlType type, uint64_t row_length, uint64_t n_rows,
                 const RowSource& source, gguf::TensorSink& sink, Progress* progress,
                 const BatchDone& batch_done = nullptr, RowWeights weights = {});

}  // namespace tools
