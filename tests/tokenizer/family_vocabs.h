// Small vocabularies shaped like those of the model families whose real
// vocabularies are too large for ../shared (Gemma 2/3 and 4, Phi-3.5, Phi-4-mini,
// SmolLM3, Granite 3): the same tokenizer model, pre-tokenizer, special-token
// layout, types and metadata keys as the converter writes for each, with merges
// learned from a small built-in corpus. Deterministic, so llama.cpp's ids for
// them (tests/tokenizer/reference/) stay valid; write_family_vocabs writes the
// files for make_family_expected.sh.
#pragma once

#include <string>
#include <vector>

namespace gguf {
class Writer;
}

namespace tokenizer_test {

// The names: gemma3, gemma4, phi3.5, phi4-mini, smollm3, granite.
std::vector<std::string> family_vocab_names();

// Adds the vocabulary `name` (tokenizer.* keys plus the few general.* and
// llama.* keys a vocabulary-only load needs) to `w`. Throws std::invalid_argument
// for an unknown name.
void add_family_vocab(const std::string& name, gguf::Writer& w);

// Writes it as a GGUF file of its own (no tensors).
void write_family_vocab(const std::string& name, const std::string& path);

}  // namespace tokenizer_test
