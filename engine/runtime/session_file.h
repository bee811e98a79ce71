// Saved sessions (a prompt cache): a session's tokens and the keys and values
// of their positions in a file, so an app restores a long system prompt in
// the time of a file read instead of a prefill. docs/sessions.md gives
// the layout; in short:
//
//   header   magic "ENGINEKV", version, byte order, the model's identity,
//            KV type, cache count, token count, positions in the cache
//   caches   per cache (a shared cache once): window, KV heads, head sizes,
//            and the positions it holds: first, count
//   tokens   int32 each
//   KV       per cache, its positions' stored bytes (AttentionCache::read_raw)
//   checksum 64 bits over everything before it
//
// A windowed layer's ring is saved as the positions the next token attends
// to, in position order, not as its rows: the file does not depend on the
// ring's size (n_batch), and a session with another batch size reads it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gguf {
class File;
}

namespace engine {

class Session;

// Writes the session's state to `path` (mode 0600 when new) through
// gguf::OutputFile: a temporary file beside it renamed over it, so `path` is
// never half-written; a folder, device node or FIFO is refused before anything
// is written. Throws SessionFileError naming the path and the reason.
void save_session(const Session& session, const std::string& path);

// Whether the file at `path` begins as a saved session does (its magic), so a
// tool asked to replace it knows it is not replacing some other file of the
// user's. False when it cannot be read.
bool starts_as_saved_session(const std::string& path);

// Replaces the session's state by the file's. Everything is checked before
// the session changes: the file's magic, version and checksum (a truncated or
// corrupt file), the model identity (a file saved with another model), the
// KV type and each cache's shape, and that the tokens fit the context and
// vocabulary. On any mismatch it throws SessionFileError naming the path and
// the problem, and the session is as it was. No logits after a load: the
// next eval (or eval_prompt of the same tokens) gives them.
void load_session(Session& session, const std::string& path);

// The same from a saved session's bytes already in memory (an app's asset, a
// fuzzer's input); errors name them `name`.
void load_session_bytes(Session& session, std::span<const uint8_t> bytes, const std::string& name);

// Rewrites the checksum a saved session ends with so it matches the bytes
// before it: for tests and fuzzers that edit a file's fields to reach the
// checks behind the checksum. Nothing when there are fewer than 8 bytes.
void reseal_session_bytes(std::span<uint8_t> bytes);

// The identity a saved session is checked against: a 64-bit hash of the
// file's size, its metadata and tensor index, and 4 KiB samples of every
// tensor's data (its first and last 2 KiB). Not a SHA-256 of the whole file,
// which would read all of it on every load (seconds for a large model); it
// tells apart a different file, quantization or fine-tune, not a deliberate
// forgery (which a checksum in the same file could not stop either).
uint64_t model_identity(const gguf::File& file);

}  // namespace engine
