// Writes a copy of a real GGUF model with some of it changed: metadata keys
// replaced or removed, tensor values overwritten, tensor infos bent. The
// hostile-model suites build their bad models this way from stories260K.
#pragma once

#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "gguf/writer.h"

namespace engine_test {

struct ModelEdit {
  std::function<void(gguf::Writer&)> metadata = {};  // after the source's keys are copied
  std::map<std::string, std::function<void(float*, size_t)>> f32_tensors = {};  // edits of F32 tensors' values
};

// Copies `src` to `dst` with the edits applied; tensors keep their order.
inline void write_edited(const std::filesystem::path& src, const std::filesystem::path& dst, const ModelEdit& edit) {
  const gguf::File f = gguf::File::open(src.string());
  gguf::Writer w;
  w.copy_metadata(f);
  if (edit.metadata) edit.metadata(w);
  std::vector<std::vector<float>> patched;  // alive until write()
  patched.reserve(edit.f32_tensors.size());
  for (const gguf::TensorInfo& t : f.tensors()) {
    const std::vector<uint64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
    std::span<const uint8_t> data(f.tensor_data(t), t.n_bytes);
    if (const auto it = edit.f32_tensors.find(std::string(t.name)); it != edit.f32_tensors.end()) {
      if (t.type != gguf::GgmlType::F32) throw std::runtime_error("write_edited: " + it->first + " is not F32");
      auto& values = patched.emplace_back(t.n_elements);
      std::memcpy(values.data(), data.data(), t.n_bytes);
      it->second(values.data(), values.size());
      data = {reinterpret_cast<const uint8_t*>(values.data()), t.n_bytes};
    }
    w.add_tensor(t.name, t.type, ne, data);
  }
  w.write(dst.string());
}

// The file offset of a tensor's data-offset field (the last field of its info).
inline uint64_t tensor_offset_field(const gguf::TensorInfo& t) {
  return t.info_offset + 8 + t.name.size() + 4 + 8 * uint64_t{t.n_dims} + 4;
}

}  // namespace engine_test
