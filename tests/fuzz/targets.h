// The fuzz targets. Each takes one input and returns 0; a bug is a crash, a
// sanitizer report, a leak, a hang, or a broken invariant (abort with a
// message). Errors the engine reports as engine::Error or gguf::Error are the
// expected outcome for bad input, not bugs; any other exception is a bug.
//
// The same functions run under libFuzzer (libfuzzer_main.cpp, one binary per
// target, ENGINE_FUZZ builds) and in the regression suite, which replays the
// committed inputs of tests/fuzz/regressions in every normal build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace engine_fuzz {

// The GGUF reader on a whole file's bytes, then every accessor on what parsed.
int gguf_reader(const uint8_t* data, size_t size);
// The model loader and a short forward pass: a well-formed GGUF whose
// hyperparameters, tensors (presence, shapes, types, values) and vocabulary
// come from the input; or (first byte odd) the input's own GGUF bytes.
int model_loader(const uint8_t* data, size_t size);
// Tokenization of arbitrary bytes (ill-formed UTF-8, NULs, long repeats) with
// the SentencePiece vocabulary of llama (ggml-vocab-llama-spm.gguf) and the
// byte-level BPE vocabulary of GPT-2 (ggml-vocab-gpt-2.gguf), then decoding.
int tokenizer_spm(const uint8_t* data, size_t size);
int tokenizer_bpe(const uint8_t* data, size_t size);
// The run tool's sampler options, parsed from NUL-separated arguments, then
// sampling with the parameters that validate over logits from the input.
int sampler_params(const uint8_t* data, size_t size);
// The chat-template renderer on arbitrary template text (and, after a NUL,
// conversation JSON): output or its own Error, nothing else.
int chat_template(const uint8_t* data, size_t size);
// A GBNF grammar or JSON Schema from the input, then text matched by the
// engine's grammar matcher and the tests' plain one (they must agree) and the
// token mask over a small vocabulary (it must equal the matcher's verdicts).
int grammar(const uint8_t* data, size_t size);
// serve's reading of an OpenAI request body (a mode byte choosing chat or
// completions first): the request or a 400, and responses that are JSON.
// Built where serve's protocol library is (nlohmann-json found): ENGINE_FUZZ_SERVE.
int serve_request(const uint8_t* data, size_t size);
// A saved session's bytes (after a mode byte: bit 0 makes the checksum right
// again, bit 1 an f32 KV cache, bit 2 a session with a history of its own)
// loaded into a session of a small synthesized model.
int session_file(const uint8_t* data, size_t size);
// A real saved session of that model after n_tokens tokens, as session_file's
// input (mode byte first): the seeds.
std::vector<uint8_t> saved_session_seed(uint32_t n_tokens, bool f32);

// Stops the process with a message: an invariant the target checks is broken.
[[noreturn]] void broken(const std::string& what);

// $ENGINE_SHARED_DIR, else the ../shared folder configured at build time.
std::string shared_dir();

// The exit code of a fuzzer that cannot run because a file of ../shared is
// missing: ctest reports the test skipped (SKIP_RETURN_CODE). Not libFuzzer's
// own error code (77, its -error_exitcode), which reports a crash.
inline constexpr int kSkippedExitCode = 125;
// Ends the process with kSkippedExitCode, saying which file is missing.
[[noreturn]] void skip_without(const std::string& path);

}  // namespace engine_fuzz
