// fuzz_seeds OUT_DIR: writes the starting corpus of every fuzz target into
// OUT_DIR/<target>/, from the malformed-GGUF corpus, models synthesized here,
// and files of ../shared/models (read at run time, never copied into the
// repository). Run by ctest before the fuzz runs.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/model_synth.h"
#include "tests/fuzz/targets.h"
#include "tests/support/gguf_corpus.h"

namespace fs = std::filesystem;

namespace {

// Large files are cut: the reader's seeds need their header and metadata, and
// every fuzz input costs in proportion to its size.
constexpr size_t kMaxSeedBytes = 64 << 10;
// The model loader's -max_len (tests/fuzz/CMakeLists.txt): its file seeds must fit.
constexpr size_t kMaxModelSeedBytes = 16 << 10;

int g_written = 0;

void write(const fs::path& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  fs::create_directories(dir);
  ++g_written;
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> read(const fs::path& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes;
  char c;
  while (bytes.size() < max_bytes && in.get(c)) bytes.push_back(static_cast<uint8_t>(c));
  return bytes;
}

std::vector<uint8_t> text_bytes(uint8_t flags, std::string_view text) {
  std::vector<uint8_t> out = {flags};
  out.insert(out.end(), text.begin(), text.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds OUT_DIR\n");
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path models = fs::path(engine_fuzz::shared_dir()) / "models";

  // GGUF reader: the malformed corpus, synthesized models, shared files' heads.
  for (const auto& [name, bytes] : engine_test::malformed_corpus()) write(out / "gguf_reader", name, bytes);
  // Structured model seeds: {mode (even), arch, weight type byte}. Type bytes
  // index model_synth.cpp's list: 0 F32, 1 F16, 2 Q8_0, 3 Q4_0, 8 Q4_K, 10 Q6_K.
  const std::vector<std::vector<uint8_t>> choices = {{0}, {0, 1, 1}, {0, 2, 2}, {0, 0, 3}, {0, 1, 8}, {0, 2, 10}};
  for (size_t i = 0; i < choices.size(); ++i) {
    write(out / "model_loader", "synth-" + std::to_string(i), choices[i]);
    engine_fuzz::FuzzInput in({choices[i].data() + 1, choices[i].size() - 1});
    std::vector<uint8_t> model = engine_fuzz::synthesize_model(in);
    write(out / "gguf_reader", "model-" + std::to_string(i) + ".gguf", model);
    if (model.size() > kMaxModelSeedBytes) continue;  // the K-quant ones: 256-wide rows
    model.insert(model.begin(), 1);  // odd first byte: the model loader reads the rest as a file
    write(out / "model_loader", "file-" + std::to_string(i), model);
  }
  for (const char* rel : {"stories260K.gguf", "legacy/tinyllamas-stories-260k-f32.gguf",
                          "random/llama-2-tiny-random.gguf", "vocab/ggml-vocab-llama-spm.gguf",
                          "vocab/ggml-vocab-gpt-2.gguf", "reference/qwen2-d256-Q4_K_M.gguf",
                          "reference/qwen3-d256-Q8_0.gguf"}) {
    if (!fs::exists(models / rel)) continue;
    write(out / "gguf_reader", fs::path(rel).filename().string(), read(models / rel, kMaxSeedBytes));
  }

  // Tokenizers: llama.cpp's test strings of every vocabulary, some special
  // token texts, ill-formed UTF-8.
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts = {"", "\xFF\xFE\xC3", "\xE2\x82", "\xF4\x90\x80\x80 \xC0\x80 \xED\xA0\x80",
                                    std::string("a\0b\0", 4), "<s></s><unk><|endoftext|>", "   x", "\n\n\n"};
  for (const fs::path& inp : {models / "vocab/ggml-vocab-llama-spm.gguf.inp", models / "vocab/ggml-vocab-gpt-2.gguf.inp",
                              models / "vocab/ggml-vocab-phi-3.gguf.inp", models / "vocab/ggml-vocab-starcoder.gguf.inp"}) {
    const std::vector<uint8_t> all = read(inp, SIZE_MAX);
    const std::string s(all.begin(), all.end());
    for (size_t pos = 0; pos < s.size();) {
      const size_t end = s.find(sep, pos);
      texts.push_back(s.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
      if (end == std::string::npos) break;
      pos = end + sep.size();
    }
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    for (const char* target : {"tokenizer_spm", "tokenizer_bpe"}) {
      write(out / target, "text-" + std::to_string(i), text_bytes(i % 3 == 0 ? 2 : 0, texts[i]));
    }
  }

  // Sampler options: what run's usage documents, and values at the edges.
  using namespace std::literals;  // "..."sv keeps the NULs that separate arguments
  const std::vector<std::string_view> lines = {
      "--temp\0" "0.8\0--top-k\0" "40\0--top-p\0" "0.95\0--min-p\0" "0.05\0"sv,
      "--temp\0" "0\0--repeat-penalty\0" "1.3\0--repeat-last-n\0" "8\0-s\0" "42\0"sv,
      "--temp=1e-30\0--top-k=1\0--seed=4294967295\0"sv,
      "--top-p\0" "0\0--min-p\0" "1\0--temp\0inf\0"sv,
      "--repeat-penalty\0" "1e-30\0--top-k\0-5\0--seed\0-1\0"sv,
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<uint8_t> bytes(lines[i].begin(), lines[i].end());
    bytes.push_back(0);  // the empty argument that ends the list; logits follow
    for (uint16_t h : {0x3c00, 0xbc00, 0x4000, 0x0000, 0x7c00, 0xfc00, 0x3800}) {
      bytes.push_back(static_cast<uint8_t>(h & 0xff));
      bytes.push_back(static_cast<uint8_t>(h >> 8));
    }
    write(out / "sampler_params", "args-" + std::to_string(i), bytes);
  }
  // Chat templates: the real ones of ../shared/chat-templates, and a few
  // small ones with a conversation of their own after a NUL.
  const fs::path templates = fs::path(engine_fuzz::shared_dir()) / "chat-templates" / "templates";
  if (fs::is_directory(templates))
    for (const auto& entry : fs::directory_iterator(templates))
      write(out / "chat_template", entry.path().filename().string(), read(entry.path(), 32 << 10));
  const std::vector<std::string_view> small_templates = {
      "{% for m in messages %}{{ m.role }}: {{ m.content | trim }}\n{% endfor %}"sv,
      "{% set ns = namespace(n=0) %}{% for x in range(3) if x is odd %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.n }}"sv,
      "{% macro f(a, b=[1, {'k': (2,)}]) %}{{ a ~ b | tojson(indent=2) }}{% endmacro %}{{ f('x')[1:-1] }}"sv,
      "{{ messages[0]['content'].split(' ') | map('upper') | join('-') }}\0{\"messages\": [{\"content\": \"a b\"}]}"sv,
  };
  for (size_t i = 0; i < small_templates.size(); ++i)
    write(out / "chat_template", "small-" + std::to_string(i),
          std::vector<uint8_t>(small_templates[i].begin(), small_templates[i].end()));
  // Grammars: GBNF (mode byte 0) and JSON Schemas (1), each with a text that
  // follows it a while.
  const std::vector<std::string_view> grammars = {
      "\0root ::= \"{\" ws (pair (\",\" ws pair)*)? \"}\"\npair ::= [a-z]+ \":\" ws [0-9]{1,3}\nws ::= [ \\t\\n]*\0{a: 1, bc:22}"sv,
      "\0root ::= (\"\\u00e9\" | [^a-z\\x00-\\x1F] | \"x\"{2,4})+ .?\0\xC3\xA9" "Axxx\xE4\xB8\xAD"sv,
      "\0root ::= item (\",\" item)*\nitem ::= [0-9]+ | \"(\" root \")\"\0(1,(2,3)),4"sv,
      "\x01{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", \"maxLength\": 5}, \"n\": {\"type\": [\"integer\", \"null\"]}}, \"required\": [\"name\"]}\0{\"name\": \"ab\", \"n\": null}"sv,
      "\x01{\"$defs\": {\"t\": {\"type\": \"array\", \"items\": {\"anyOf\": [{\"$ref\": \"#/$defs/t\"}, {\"enum\": [1, \"x\"]}]}}}, \"$ref\": \"#/$defs/t\"}\0[[1, \"x\"], []]"sv,
  };
  for (size_t i = 0; i < grammars.size(); ++i)
    write(out / "grammar", "grammar-" + std::to_string(i), std::vector<uint8_t>(grammars[i].begin(), grammars[i].end()));
#if ENGINE_FUZZ_SERVE
  // Request bodies (mode byte: 0 chat, 1 completions) with every kind of field.
  const std::vector<std::string_view> requests = {
      "\0{\"model\": \"m\", \"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": \"Hi\"}], \"max_tokens\": 8, \"temperature\": 0.7, \"top_p\": 0.9, \"seed\": 1, \"stop\": [\"\\n\"], \"stream\": true, \"stream_options\": {\"include_usage\": true}}"sv,
      "\0{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"a\"}]}, {\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"c\", \"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1}\"}}]}, {\"role\": \"tool\", \"tool_call_id\": \"c\", \"content\": \"2\"}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"integer\"}}}}}], \"tool_choice\": {\"type\": \"function\", \"function\": {\"name\": \"f\"}}, \"logprobs\": true, \"top_logprobs\": 2}"sv,
      "\0{\"messages\": [{\"role\": \"user\", \"content\": \"\\u00e9\\ud83d\\ude00\"}], \"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"name\": \"s\", \"schema\": {\"type\": \"object\", \"required\": [\"a\"], \"properties\": {\"a\": {\"enum\": [1, \"b\"]}}}}}}"sv,
      "\1{\"prompt\": \"Once upon a time\", \"max_tokens\": 16, \"logprobs\": 3, \"stop\": \".\", \"echo\": false}"sv,
      "\1{\"prompt\": [\"x\"], \"stream\": true, \"seed\": -1}"sv,
  };
  for (size_t i = 0; i < requests.size(); ++i)
    write(out / "serve_request", "request-" + std::to_string(i), std::vector<uint8_t>(requests[i].begin(), requests[i].end()));
#endif
  // Saved sessions: real files of the session target's model, of both KV
  // types, empty, short and near a full context.
  for (const uint32_t n : {0u, 1u, 5u, 12u}) {
    for (const bool f32 : {false, true}) {
      write(out / "session_file", "session-" + std::to_string(n) + (f32 ? "-f32" : "-f16"),
            engine_fuzz::saved_session_seed(n, f32));
    }
  }
  std::printf("fuzz_seeds: wrote %d seed files to %s\n", g_written, out.c_str());
  return 0;
}
