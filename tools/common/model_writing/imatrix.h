// Importance matrices for quantize --imatrix: the files llama.cpp's
// llama-imatrix writes, read as llama-quantize reads them (facts from
// llama.cpp's common/imatrix-loader.cpp and tools/quantize/quantize.cpp).
//
// - GGUF (what llama-imatrix writes today): per weight matrix W two F32
//   tensors, "W.in_sum2" (the sum over the calibration tokens of each input
//   column's squared activation, ne0 columns, one row per expert) and
//   "W.counts" (tokens seen, one per expert); metadata imatrix.datasets
//   (string array), imatrix.chunk_count and imatrix.chunk_size, all three
//   required as llama-quantize requires them. The weight of column i of
//   expert j is in_sum2 / count, computed in float with the count rounded to
//   an integer first; an expert that saw no token gets weights 1.
// - The legacy .dat format (llama-imatrix --output-format dat): int32 entry
//   count; per entry int32 name length, the name, int32 ncall, int32 value
//   count, the float values (already divided by the count and multiplied by
//   ncall); then optionally int32 chunk count, int32 length and the dataset
//   name. The weight is value / ncall (value itself when ncall is 0).
//
// Every value must be finite (llama-quantize refuses the file otherwise).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/writer.h"

namespace tools {

class ImatrixError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Imatrix {
  std::string path;
  bool legacy = false;  // the .dat format
  // Weight matrix name ("blk.0.attn_q.weight") -> one weight per input column,
  // expert after expert.
  std::map<std::string, std::vector<float>, std::less<>> entries;
  std::vector<std::string> datasets;  // the calibration text files
  uint32_t chunk_count = 0;           // chunks of calibration text it saw
};

// The weights to quantize tensor `name` of shape ne with: its entry, or
// nullptr when the matrix has none. An entry must hold ne[0] x ne[2] values
// (one per input column of each expert); any other size is an ImatrixError
// naming the file and tensor, except for the token embeddings, which are
// quantized without (as llama-quantize does: they are looked up, not
// multiplied, so no matrix fits them).
const std::vector<float>* imatrix_entry_for(const Imatrix& m, std::string_view name, const std::array<uint64_t, 4>& ne);

// Records the matrix in the file's metadata as llama-quantize does, after the
// keys already set: quantize.imatrix.file (the path as given) and .dataset
// (the first calibration file), both cut to 127 bytes, .entries_count and,
// when known, .chunks_count.
void record_imatrix(gguf::Writer& writer, const Imatrix& m);

// Reads an importance matrix. Throws ImatrixError (a file that is neither
// format, or a bad entry) or gguf::Error (a damaged GGUF file), naming the file
// and, where one is at fault, the tensor or entry.
Imatrix load_imatrix(const std::string& path);

}  // namespace tools
