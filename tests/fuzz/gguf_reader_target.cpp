// The GGUF reader on arbitrary bytes. A file that parses must keep every
// promise of gguf/file.h: each accessor stays inside the bytes (ASan checks
// the reads of the first and last byte of every tensor), each typed accessor
// either converts or throws gguf::Error.
#include <span>

#include "gguf/file.h"
#include "tests/fuzz/targets.h"

namespace engine_fuzz {
namespace {

volatile uint8_t g_sink;  // keeps the probing reads from being optimized away

void probe_value(const gguf::Value& v, int depth) {
  (void)v.to_uint();
  (void)v.to_int();
  (void)v.to_double();
  (void)v.to_bool();
  if (const auto s = v.to_string(); s && !s->empty()) g_sink = static_cast<uint8_t>(s->back());
  (void)v.to_display(4);
  if (v.type() != gguf::ValueType::ARRAY || depth > 8) return;
  const uint64_t n = v.array_size();
  // The first few and the last element: enough to touch both ends of the storage.
  for (uint64_t i = 0; i < n && i < 4; ++i) probe_value(v.at(i), depth + 1);
  if (n > 4) probe_value(v.at(n - 1), depth + 1);
  try {
    (void)v.at(n);
    broken("Value::at(array_size()) did not throw");
  } catch (const std::out_of_range&) {
  }
}

void probe(const gguf::File& f) {
  for (const gguf::KeyValue& kv : f.metadata()) {
    probe_value(kv.value, 0);
    if (f.find(kv.key) != &kv) broken("find() of a parsed key gave another entry");
    if (kv.raw_value.size() < 4) broken("a value shorter than its type field");
    const std::string key(kv.key);
    // Each typed accessor converts or throws gguf::Error naming the key.
    const auto quietly = [](auto&& fn) {
      try {
        fn();
      } catch (const gguf::Error&) {
      }
    };
    quietly([&] { (void)f.get_string(key); });
    quietly([&] { (void)f.get_uint(key); });
    quietly([&] { (void)f.get_int(key); });
    quietly([&] { (void)f.get_float(key); });
    quietly([&] { (void)f.get_bool(key); });
    quietly([&] { (void)f.get_array(key); });
  }
  const uint64_t data_size = f.data_size();
  for (const gguf::TensorInfo& t : f.tensors()) {
    (void)t.shape_string();
    if (t.offset > data_size || t.n_bytes > data_size - t.offset) broken("a tensor outside the data section parsed");
    if (t.n_bytes != 0) {
      const uint8_t* p = f.tensor_data(t);
      g_sink = p[0];
      g_sink = p[t.n_bytes - 1];
    }
    if (f.find_tensor(t.name) != &t) broken("find_tensor() of a parsed tensor gave another entry");
    f.release_pages(t);
  }
}

}  // namespace

int gguf_reader(const uint8_t* data, size_t size) {
  try {
    const gguf::File f = gguf::File::parse(std::span<const uint8_t>(data, size), "fuzz.gguf");
    probe(f);
  } catch (const gguf::Error&) {
  }
  return 0;
}

}  // namespace engine_fuzz
