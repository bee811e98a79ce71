// quantize: rewrite a GGUF model with its weights in another type, with
// llama.cpp's per-tensor rules (quant_mix.h) and its quantizers (kernels/ref,
// bit-exact), keeping every metadata key and recording the file type.
//
// Input tensors may be F32, F16 or BF16. Already-quantized tensors are refused
// unless allow_requantize (then a WARNING names them): re-quantizing adds the
// errors of both types. Writing a tensor in a type with more bits than it has
// is always refused: it cannot bring back what was lost.
//
// Every check happens before anything is written, and the output goes to a
// temporary file renamed into place at the end (gguf::Writer), so a refused or
// failed run leaves every file as it was. Tensors are converted one at a time,
// a batch of rows at a time (row_stream.h): memory stays bounded.
//
// With an importance matrix (imatrix.h), every tensor it has an entry for is
// quantized with those weights, as llama-quantize --imatrix does (bit-exact for
// every type: kernels/ref/quants.h); a tensor it has no entry for is
// quantized without (llama-imatrix leaves out the LM head), and an entry of
// the wrong size is an error. The file records the matrix as llama-quantize
// does (quantize.imatrix.file, .dataset, .entries_count, .chunks_count). A
// target whose tensors need a matrix (Q2_K_S) is refused without one.
//
// Tensors are written in llama.cpp's order (non-block tensors, then block by
// block, each sorted by name) with llama-quantize's header, so for the same
// input the output is byte-identical to llama-quantize's.
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/common/model_writing/plan.h"

namespace tools {

class QuantizeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct QuantizeOptions {
  std::string input;
  std::string output;  // may be empty with dry_run
  std::string type;    // a target name: "Q4_K_M", "q8_0", ...
  std::string imatrix; // an importance matrix file (llama-imatrix's GGUF or .dat), or empty
  bool pure = false;   // every quantizable tensor in the target's type (llama-quantize --pure)
  bool dry_run = false;
  bool allow_requantize = false;
  size_t n_threads = 0;  // 0: the engine's default
  bool progress = false; // draw a progress bar on stderr
  bool verbose = false;  // a line per tensor while writing
  FILE* out = stdout;    // the plan and the summary; nullptr: silent
};

struct QuantizeResult {
  std::vector<PlannedTensor> plan;
  uint64_t input_file_bytes = 0;
  uint64_t output_file_bytes = 0;
  size_t n_requantized = 0;
  size_t n_fallbacks = 0;
  size_t n_imatrix_used = 0;                  // tensors quantized with the importance matrix
  std::vector<std::string> imatrix_missing;   // quantized tensors it has no entry for
};

// Throws QuantizeError (a bad request), ImatrixError (a bad importance
// matrix), gguf::Error (a bad input file or a failed write) with a message
// naming the file and the problem.
QuantizeResult quantize_model(const QuantizeOptions& options);

}  // namespace tools
