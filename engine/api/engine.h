/* The engine's C API: load a GGUF model, create sessions, tokenize, prefill,
 * decode, read logits, sample.
 *
 * Errors: every function that can fail returns an engine_status; on failure
 * engine_last_error() returns a message for the calling thread (valid until
 * that thread's next call). No function aborts the host app on bad input: null
 * or freed handles, wrong sizes and a full context are errors, not crashes.
 *
 * Threads: a model is read-only after engine_model_load and may be used from
 * any number of threads at once (several sessions on one model). A session or
 * a sampler must be used by one thread at a time; a call that finds the session
 * busy in another thread returns ENGINE_ERR_BUSY instead of racing (always, not
 * only in debug builds: the check is one lock of a table per call).
 *
 * Handles are opaque numbers, never reused, looked up on every call: freeing
 * twice or using a freed handle returns ENGINE_ERR_INVALID_HANDLE even after
 * new handles were created, and a pointer that never was a handle is refused
 * without being dereferenced. Freeing a handle while another thread is inside
 * a call on it returns ENGINE_ERR_BUSY. A model must outlive its sessions:
 * freeing a model with live sessions is refused (ENGINE_ERR_IN_USE).
 */
#ifndef ENGINE_API_ENGINE_H
#define ENGINE_API_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum engine_status {
  ENGINE_OK = 0,
  ENGINE_ERR_INVALID_ARGUMENT = 1, /* null pointer, out-of-range value, bad token id */
  ENGINE_ERR_INVALID_HANDLE = 2,   /* unknown, already freed or wrong kind of handle */
  ENGINE_ERR_MODEL = 3,            /* the file is not a usable model (message names file and problem) */
  ENGINE_ERR_CONTEXT_FULL = 4,     /* the tokens do not fit in the session's context */
  ENGINE_ERR_BUFFER_TOO_SMALL = 5, /* output buffer too small; the needed size is returned */
  ENGINE_ERR_BUSY = 6,             /* the session/sampler is in use by another thread */
  ENGINE_ERR_IN_USE = 7,           /* the model still has sessions */
  ENGINE_ERR_STATE = 8,            /* call out of order (e.g. logits before any evaluation) */
  ENGINE_ERR_OUT_OF_MEMORY = 9,
  ENGINE_ERR_INTERNAL = 10,
  ENGINE_ERR_ABORTED = 11, /* the session's abort callback stopped the evaluation */
  ENGINE_ERR_FILE = 12,    /* a saved session cannot be written or read, or does not fit this session */
  ENGINE_ERR_TEMPLATE = 13, /* the chat template does not parse, fails, or raised (its own message) */
  ENGINE_ERR_CANCELLED = 14 /* the load's progress callback cancelled it (engine_model_load_ex) */
} engine_status;

typedef struct engine_model engine_model;
typedef struct engine_session engine_session;
typedef struct engine_sampler engine_sampler;

/* The message of the calling thread's last failed call ("" if none). */
const char* engine_last_error(void);
const char* engine_status_name(engine_status status);
const char* engine_version(void);

/* ---- logging ----
 * The engine logs what it decided (kernels per weight type, thread placement)
 * and what went wrong or will be slow (fallbacks, pinning failures,
 * oversubscribed CPUs). By default the lines go to stderr ("engine: WARNING:
 * ..."), at level info or at $ENGINE_LOG_LEVEL (debug, info, warning, error,
 * off) when that is set. Both functions are thread-safe and may be called at
 * any time, before or after models are loaded. */
typedef enum engine_log_level {
  ENGINE_LOG_DEBUG = 0,
  ENGINE_LOG_INFO = 1,
  ENGINE_LOG_WARNING = 2,
  ENGINE_LOG_ERROR = 3,
  ENGINE_LOG_OFF = 4 /* nothing is logged */
} engine_log_level;
/* Messages below `level` are dropped, whoever receives them. A value outside
 * the enum is ENGINE_ERR_INVALID_ARGUMENT and changes nothing. */
engine_status engine_set_log_level(engine_log_level level);
/* One message: the level it was logged at and its text (NUL-terminated, no
 * "engine:" prefix, no newline), valid only during the call. */
typedef void (*engine_log_callback)(engine_log_level level, const char* message, void* user);
/* Sends every message that passes the level to `callback` (with `user`)
 * instead of stderr, e.g. to Android's logcat or the app's own log; NULL
 * restores stderr. Calls are serialized (one message at a time, from whichever
 * thread logs it), and once engine_set_log_callback returns, the previous
 * callback is never called again, so its `user` may be freed. The callback must
 * not call the engine (a call that logs would wait for the callback itself). */
engine_status engine_set_log_callback(engine_log_callback callback, void* user);

/* ---- models ---- */
/* Maps the file read-only, validates it and chooses the kernels (logged):
 * engine_model_load_ex with engine_load_default_options(). */
engine_status engine_model_load(const char* path, engine_model** out);

/* Called on the loading thread with the fraction done (0 to 1, never
 * decreasing; 1 once, at the end) and what the load is doing ("reading",
 * "repacking", "mapping cache", "writing cache", "done"): at least once per
 * tensor. Return false to cancel: the load frees everything it allocated and
 * returns ENGINE_ERR_CANCELLED. It must not call the engine. */
typedef bool (*engine_load_progress_callback)(float fraction, const char* phase, void* user_data);

/* Repack cache: a kernel that computes in a layout of its own gets a
 * repacked copy of each weight matrix at load (seconds for a 1B model on a
 * phone, most of it the first touch of fresh memory). With a cache directory
 * the copy is written to DIR/<model file name>.enginecache after the first
 * load, and the loads after it map that file instead of repacking. It is used
 * only when made for the same model file (its size, modification time,
 * device, inode and a SHA-256 of its header and tensor index) and the same
 * kernels (another CPU, build or ENGINE_MAX_TIER rebuilds it); a stale,
 * truncated or corrupt cache is logged, ignored and rewritten. It takes about
 * the disk space of the model's matrices. Off unless a directory is given:
 * an app passes a directory of its own (e.g. Android's getCacheDir()); the
 * tools take --cache-dir; $ENGINE_CACHE_DIR gives one to every load that
 * leaves cache_dir NULL. */
typedef struct engine_load_options {
  /* sizeof(engine_load_options) as the caller was compiled, set by
   * engine_load_default_options: fields added later keep their defaults for
   * a caller that predates them. */
  size_t size;
  engine_load_progress_callback progress; /* NULL: none */
  void* user_data;                        /* passed to progress */
  const char* cache_dir; /* NULL: $ENGINE_CACHE_DIR when set, else no cache; "": no cache */
  bool measure_read;     /* also time a plain read of the file (engine_load_stats.read_seconds); costs a full read */
} engine_load_options;

engine_load_options engine_load_default_options(void);
/* engine_model_load with options (NULL: the defaults). A size below the
 * first field's end, or larger than this library's struct, is
 * ENGINE_ERR_INVALID_ARGUMENT. */
engine_status engine_model_load_ex(const char* path, const engine_load_options* options, engine_model** out);

typedef enum engine_cache_state {
  ENGINE_CACHE_OFF = 0,         /* no cache directory, or no weight to repack */
  ENGINE_CACHE_HIT = 1,         /* the repacked weights were mapped from the cache */
  ENGINE_CACHE_WRITTEN = 2,     /* repacked, and the cache written */
  ENGINE_CACHE_WRITE_FAILED = 3 /* repacked; the cache could not be written (logged) */
} engine_cache_state;
typedef struct engine_load_stats {
  double load_seconds;   /* the whole load */
  double repack_seconds; /* of which repacking weights */
  double cache_seconds;  /* of which reading or writing the repack cache */
  double read_seconds;   /* a plain sequential read() of the file, when measure_read was set; else -1 */
  uint64_t file_bytes;
  engine_cache_state cache;
} engine_load_stats;
engine_status engine_model_load_stats(const engine_model* model, engine_load_stats* out);
engine_status engine_model_free(engine_model* model);
int32_t engine_model_n_vocab(const engine_model* model);     /* -1 for a bad handle */
int32_t engine_model_n_ctx_train(const engine_model* model); /* -1 for a bad handle */
int32_t engine_model_bos(const engine_model* model);         /* -1 when none */
int32_t engine_model_eos(const engine_model* model);         /* -1 when none */
/* Whether the model's prompts begin with BOS (tokenizer.ggml.add_bos_token): the add_bos to give engine_tokenize. */
bool engine_model_add_bos(const engine_model* model);
bool engine_model_is_end_of_generation(const engine_model* model, int32_t token);

/* ---- tokens ---- */
/* Tokenizes len bytes of UTF-8 text into tokens[0..capacity). *n_tokens gets the
 * count; if it exceeds capacity the call returns ENGINE_ERR_BUFFER_TOO_SMALL and
 * nothing past capacity is written. */
engine_status engine_tokenize(const engine_model* model, const char* text, size_t len, bool add_bos,
                              bool parse_special, int32_t* tokens, size_t capacity, size_t* n_tokens);
/* The bytes of one token (not NUL-terminated; *len gets the size). */
engine_status engine_token_to_piece(const engine_model* model, int32_t token, char* buf, size_t capacity,
                                    size_t* len);
/* The text of n tokens as one sequence (not NUL-terminated; *len gets the
 * size): their pieces joined, except that control tokens (BOS, EOS) give
 * nothing and the leading space SentencePiece vocabularies put on the first
 * word is dropped, so that detokenizing what engine_tokenize made of a text
 * gives the text back. A token outside the vocabulary is
 * ENGINE_ERR_INVALID_ARGUMENT; with capacity too small, *len gets the bytes
 * needed and the result is ENGINE_ERR_BUFFER_TOO_SMALL. */
engine_status engine_detokenize(const engine_model* model, const int32_t* tokens, size_t n, char* buf,
                                size_t capacity, size_t* len);

/* ---- sessions ----
 * CPU use: each session has a thread pool of its own, n_threads threads in
 * all. The thread that calls engine_prefill or engine_decode is thread 0 and
 * works too, but the engine never changes its CPU affinity, nor that of any
 * other thread of the app: only the pool's own workers are pinned, one per
 * CPU of its plan (the fastest cores first).
 * Sessions do not share a pool. Two sessions working at the same time (one
 * per app thread) run both pools on the same fastest cores, and each runs
 * slower than alone; engine_session_create logs a WARNING when the new
 * session's threads and those of the sessions alive add up to more than the
 * CPUs this process may use. Give such sessions fewer threads (n_threads),
 * disjoint CPUs (cpus), or let them take turns. */
/* The KV cache's precision: F16 (the default), F32, or ggml's Q8_0 / Q4_0
 * blocks (8.5 / 4.5 bits a value, attention read from the blocks in place;
 * the model's head dimensions must be multiples of 32, else
 * engine_session_create fails saying so). */
typedef enum engine_kv_type {
  ENGINE_KV_F16 = 0,
  ENGINE_KV_F32 = 1,
  ENGINE_KV_Q8_0 = 2,
  ENGINE_KV_Q4_0 = 3
} engine_kv_type;
typedef struct engine_session_params {
  uint32_t n_ctx;   /* 0: the model's training context, at most 4096 */
  uint32_t n_batch; /* prompt tokens per prefill step; 0: 512 */
  engine_kv_type kv_type;
  int32_t n_threads; /* 0: one per core of the fastest cluster(s) */
  const char* cpus;  /* NULL: the default placement; or a CPU list such as "4-7" */
} engine_session_params;

engine_session_params engine_session_default_params(void);
/* ENGINE_ERR_OUT_OF_MEMORY, before allocating anything, when the KV cache and
 * scratch for n_ctx and n_batch would not fit in the memory available (the
 * message gives the bytes needed and available). */
engine_status engine_session_create(engine_model* model, const engine_session_params* params,
                                    engine_session** out);
engine_status engine_session_free(engine_session* session);
/* Evaluates n tokens after those already in the session, n_batch at a time.
 * ENGINE_ERR_MODEL when the model produces NaN or Inf (the message names the
 * layer); after any error none of the n tokens are in the context and there
 * are no logits. ENGINE_ERR_ABORTED when the abort callback stopped it: see
 * engine_session_set_abort for what stays. */
engine_status engine_prefill(engine_session* session, const int32_t* tokens, size_t n);
/* Evaluates one token (a decode step). */
engine_status engine_decode(engine_session* session, int32_t token);
/* Evaluates a whole prompt, reusing what the session already holds: the
 * session's tokens that begin the prompt keep their KV cache, the session's
 * tokens after them are dropped, and only the prompt's remaining tokens are
 * evaluated. A chat's next turn, a regenerated or edited reply, or a prompt
 * after engine_session_load costs only its new tokens. The last token is
 * evaluated again when the prompt adds none (its logits), unless it was the
 * session's last evaluation. *n_reused (may be NULL) gets the tokens whose
 * cache was reused. The tokens after the common prefix are dropped even when
 * the evaluation then fails. */
engine_status engine_prefill_prompt(engine_session* session, const int32_t* tokens, size_t n, size_t* n_reused);
/* The logits of the last evaluated token: n_vocab floats, valid until the next
 * call on this session. */
engine_status engine_logits(engine_session* session, const float** logits, size_t* n_vocab);
/* The tokens the session holds (0 for a bad handle). */
uint32_t engine_session_n_past(const engine_session* session);
engine_status engine_session_reset(engine_session* session);
/* The session's tokens, in order: *n gets the count; at most capacity are
 * written, and ENGINE_ERR_BUFFER_TOO_SMALL says when there are more. */
engine_status engine_session_tokens(engine_session* session, int32_t* tokens, size_t capacity, size_t* n);
/* Keeps the first n tokens (regenerate, edit), and no logits. n above the
 * session's count is ENGINE_ERR_INVALID_ARGUMENT and changes nothing.
 * A sliding-window layer (Gemma 2/3/4, Phi-3) keeps only the last window +
 * n_batch - 1 positions in a ring; when the positions token n attends to were
 * already overwritten (n more than n_batch behind the furthest position
 * evaluated), their keys and values cannot be kept without recomputing them:
 * the session keeps the n tokens and its next evaluation evaluates them again
 * first (engine_prefill_prompt reports 0 reused then). */
engine_status engine_session_truncate(engine_session* session, uint32_t n);
/* Tokens evaluated by the session since it was created (every prefill and
 * decode, and kept tokens evaluated again): what prompt reuse saves shows
 * here. Readable while another thread evaluates; 0 for a bad handle. */
uint64_t engine_session_n_evaluated(const engine_session* session);

/* ---- saved sessions (prompt cache) ----
 * engine_session_save writes the session's tokens and the keys and values of
 * their positions (a sliding window's ring as the positions its next token
 * attends to) to `path`, through a temporary file beside it and a rename:
 * `path` is never half-written. engine_session_load replaces the session's
 * state by the file's: tokens and cache, no logits (engine_prefill_prompt of
 * the saved prompt and what follows evaluates only what follows). The file
 * holds the model's identity (its size, metadata, tensor index and samples of
 * every tensor's data), the KV type and each cache's shape; a file saved with
 * another model or KV type, holding more tokens than the context, truncated
 * or corrupt (a checksum covers it all) is refused with ENGINE_ERR_FILE and a
 * message naming the problem, and the session is unchanged. A session with
 * another n_batch or n_ctx on the same model reads it. */
engine_status engine_session_save(engine_session* session, const char* path);
engine_status engine_session_load(engine_session* session, const char* path);

/* ---- cancellation ----
 * callback(user_data) is called on the evaluating thread before every layer
 * of every batch of engine_prefill, engine_prefill_prompt and engine_decode;
 * returning true stops the evaluation within one layer's time, and the call
 * returns ENGINE_ERR_ABORTED. The session is left at the last whole batch
 * evaluated: the prefill's batches of n_batch tokens completed before the stop
 * stay in the context (a decode's token does not), the batch in flight is
 * dropped, and there are no logits. The next call works from there: an
 * engine_prefill_prompt with the same prompt evaluates only what was not
 * done. To stop from another thread (a "stop" button), let the callback read
 * an atomic flag that thread sets; the callback should return at once and
 * not call the engine on this session (it is busy). NULL removes it. Set it
 * while the session is idle (during an evaluation it is ENGINE_ERR_BUSY). */
typedef bool (*engine_abort_callback)(void* user_data);
engine_status engine_session_set_abort(engine_session* session, engine_abort_callback callback, void* user_data);

/* The session's KV cache, fixed when it is created. A sliding-window layer
 * (Gemma 2/3, Phi-3) keeps only its last `window` positions and those of one
 * batch, in a ring of window + n_batch - 1 positions, instead of all n_ctx:
 * a Gemma 3 1B session at 32k context holds 150 MiB of F16 cache where a
 * full one would take 832 MiB. */
typedef struct engine_kv_info {
  uint64_t bytes;             /* allocated for the keys and values of every layer */
  uint64_t full_bytes;        /* what every layer keeping all n_ctx positions would take */
  uint32_t n_ctx;
  uint32_t n_layers;          /* layers with a cache */
  uint32_t n_windowed_layers; /* of them, those with a sliding window */
  uint32_t window;            /* their window in positions (the largest when they differ); 0: none */
  engine_kv_type kv_type;
} engine_kv_info;
/* Readable while another thread evaluates on the session (the figures do not
 * change). ENGINE_ERR_INVALID_ARGUMENT for a null `out`. */
engine_status engine_session_kv_info(const engine_session* session, engine_kv_info* out);

/* The session's state memory by kind: the attention layers' KV cache (fixed
 * at creation), the recurrent layers' states (LFM2's short-convolution
 * windows: a few rows per layer; Qwen3.5's DeltaNet windows and state
 * matrices, about 1 MiB per layer; both whatever the context), and the copies of
 * those states kept so a truncation need not evaluate the whole prompt again
 * (taken after each batch of more than one token and every 64 decoded
 * positions, at most 16 and 64 MiB of them, at least 2; dropped with the
 * tokens after them). A model without
 * recurrent layers has zeros for the last four. Claims the session like an
 * evaluation: ENGINE_ERR_BUSY while another thread evaluates on it. */
typedef struct engine_memory_info {
  uint64_t attention_bytes;  /* the KV cache of the attention layers (engine_kv_info.bytes without the states) */
  uint64_t recurrent_bytes;  /* the recurrent layers' states */
  uint64_t checkpoint_bytes; /* the copies of the states held now, and one dropped copy's memory kept for the next */
  uint32_t n_attention_layers;
  uint32_t n_recurrent_layers;
  uint32_t n_checkpoints;
} engine_memory_info;
engine_status engine_session_memory_info(engine_session* session, engine_memory_info* out);

/* Where the session's threads run: per thread, the CPU asked for, whether
 * pinning worked (with errno when not), and the CPU it was last seen on. */
typedef enum engine_pin_state {
  ENGINE_PIN_NOT_PINNED = 0, /* thread 0 (the app's), or the plan did not ask (cpus "none", no topology) */
  ENGINE_PIN_PINNED = 1,
  ENGINE_PIN_FAILED = 2
} engine_pin_state;
typedef struct engine_worker_info {
  int32_t thread;    /* 0: the app's thread that calls engine_decode (it works too, never pinned) */
  int32_t cpu_asked; /* -1: none */
  engine_pin_state pin;
  int32_t pin_errno; /* errno of the failed sched_setaffinity, else 0 */
  int32_t last_cpu;  /* -1: unknown */
} engine_worker_info;
/* *n gets the number of threads; at most capacity entries are written, and
 * ENGINE_ERR_BUFFER_TOO_SMALL says when there are more. */
engine_status engine_session_workers(engine_session* session, engine_worker_info* out, size_t capacity, size_t* n);

/* ---- sampling ---- */
typedef struct engine_sampler_params {
  float temperature;    /* <= 0: greedy */
  int32_t top_k;        /* <= 0: off */
  float top_p;          /* >= 1: off */
  float min_p;          /* <= 0: off */
  float repeat_penalty; /* 1: off */
  int32_t repeat_last_n;
  uint32_t seed; /* 0xFFFFFFFF: random */
} engine_sampler_params;

engine_sampler_params engine_sampler_default_params(void);
engine_status engine_sampler_create(const engine_sampler_params* params, engine_sampler** out);
engine_status engine_sampler_free(engine_sampler* sampler);
/* Picks the next token from the session's current logits and records it. */
engine_status engine_sample(engine_sampler* sampler, engine_session* session, int32_t* token);
/* Records a context token (e.g. the prompt) for the repetition penalty. */
engine_status engine_sampler_accept(engine_sampler* sampler, int32_t token);

/* ---- structured output ----
 * A grammar on a sampler: engine_sample (and engine_chat_generate) then pick
 * only tokens that keep the generated text a prefix of a sentence of the
 * grammar, an end-of-generation token only once it is a whole sentence (and
 * nothing else once the grammar can only end), and advance the grammar over
 * each token picked; prompt tokens given to engine_sampler_accept do not
 * count. The grammar is over `model`'s vocabulary; sampling a session of
 * another vocabulary size is an error.
 *
 * gbnf: GBNF as llama.cpp writes it (rules "name ::= ...", literals, classes,
 * groups, * + ? {m,n}); root: the start rule, NULL for "root"; gbnf NULL
 * removes the grammar. A grammar that does not parse gets
 * ENGINE_ERR_INVALID_ARGUMENT and engine_last_error() names the line and
 * column; the sampler keeps what it had. */
engine_status engine_sampler_set_grammar(engine_sampler* sampler, const engine_model* model, const char* gbnf,
                                         const char* root);
/* The same with a JSON Schema (JSON text): the replies are JSON documents
 * the schema validates, properties in the schema's order. Supported: type,
 * properties, required, additionalProperties, items, prefixItems, minItems,
 * maxItems, minLength, maxLength, enum, const, anyOf, oneOf, allOf of one
 * schema, $ref within the document; annotations (title, description, ...)
 * are ignored; any other keyword is ENGINE_ERR_INVALID_ARGUMENT naming it and
 * its place in the schema. schema NULL removes the grammar. */
engine_status engine_sampler_set_json_schema(engine_sampler* sampler, const engine_model* model, const char* schema);
/* A grammar for a reply that must call a tool: one call of one of `tools`
 * (a JSON array of OpenAI function tools), in the tool-call format of the
 * model's template (format NULL) or the one named (engine_chat_parse_tool_calls
 * lists them), its arguments valid under the tool's "parameters" schema. The
 * formats whose calls are JSON only: hermes, list, llama3, mistral (its JSON
 * list form), functools. engine_chat_parse_tool_calls reads the reply back.
 * tools NULL removes the grammar. */
engine_status engine_sampler_set_tool_grammar(engine_sampler* sampler, const engine_model* model, const char* tools,
                                              const char* format);
/* Back to the grammar's start, for a new reply with the same sampler
 * (engine_chat_generate does this itself). */
engine_status engine_sampler_reset_grammar(engine_sampler* sampler);

/* ---- chat ----
 * A conversation as messages, rendered into a prompt by a chat template: the
 * model's tokenizer.chat_template (Jinja, rendered by the engine's own
 * renderer as Hugging Face's apply_chat_template renders it), or a built-in
 * one by name: "chatml", "llama3" (3.1 and later), "gemma", "phi3". A model
 * without a template gets "chatml". Strings are UTF-8 and NUL-terminated; NULL
 * stands for "" (and for "none" where said). */
typedef struct engine_chat_tool_call {
  const char* id;        /* NULL: none */
  const char* name;
  const char* arguments; /* a JSON object, e.g. {"city": "Paris"}; NULL: {} */
} engine_chat_tool_call;

typedef struct engine_chat_message {
  const char* role;    /* "system", "user", "assistant", "tool", ... */
  const char* content;
  const engine_chat_tool_call* tool_calls; /* an assistant's calls (n_tool_calls of them) */
  size_t n_tool_calls;
  const char* tool_call_id; /* a tool result: the call it answers; NULL: none */
  const char* name;         /* a tool result: the tool's name; NULL: none */
} engine_chat_message;

typedef struct engine_chat_params {
  const char* template_name;  /* NULL: the model's template; or a built-in's name */
  const char* template_text;  /* NULL; or a Jinja template of the app's own, over both */
  bool add_generation_prompt; /* open the assistant's turn (true in engine_chat_default_params) */
  const char* tools;          /* NULL; or a JSON array of tool schemas (OpenAI's "function" shape) */
  const char* variables;      /* NULL; or a JSON object of further variables, e.g. {"enable_thinking": false} */
} engine_chat_params;

engine_chat_params engine_chat_default_params(void);
/* The built-in templates' names: *n gets the count; names[i] for i < capacity
 * (static strings). */
engine_status engine_chat_builtin_templates(const char** names, size_t capacity, size_t* n);
/* Renders messages[0..n) into the prompt text, bos_token and eos_token being
 * the model's. *len gets its size; it is written to buf (NUL-terminated) when
 * len + 1 <= capacity, else ENGINE_ERR_BUFFER_TOO_SMALL. params NULL: the
 * defaults. A template that does not parse or fails is ENGINE_ERR_TEMPLATE
 * with the line and column; one that raises (raise_exception("...")) is
 * ENGINE_ERR_TEMPLATE with its message. A tool call's arguments, the tools or
 * the variables that are not JSON of the right shape are
 * ENGINE_ERR_INVALID_ARGUMENT naming the message or option. */
engine_status engine_chat_render(const engine_model* model, const engine_chat_message* messages, size_t n,
                                 const engine_chat_params* params, char* buf, size_t capacity, size_t* len);
/* A chat turn: renders the messages (as engine_chat_render), tokenizes the
 * prompt (special tokens' texts as those tokens, BOS first when the model adds
 * one and the template did not write it) and evaluates it with
 * engine_prefill_prompt: the session's tokens the prompt begins with (the
 * previous turns) are reused, the rest dropped, and only the new tokens are
 * evaluated. *n_prompt (may be NULL) gets the prompt's tokens, *n_reused (may
 * be NULL) those reused. A render error changes nothing in the session. */
engine_status engine_chat_prefill(engine_session* session, const engine_chat_message* messages, size_t n,
                                  const engine_chat_params* params, size_t* n_prompt, size_t* n_reused);

/* Receives the reply's text as it is generated: len bytes (not
 * NUL-terminated, valid only during the call), always whole UTF-8 characters.
 * Return false to stop the reply. It must not call the engine on this session. */
typedef bool (*engine_chat_text_callback)(const char* text, size_t len, void* user_data);

/* A token and its log-probability under the model's distribution: the
 * log-softmax of the logits, before temperature, penalties or a grammar. */
typedef struct engine_token_logprob {
  int32_t token;
  float logprob;
} engine_token_logprob;
/* Receives each token of the reply as it is added to the session, before its
 * text reaches on_text, with the n_top most likely tokens at that step (most
 * likely first). Valid only during the call; it must not call the engine on
 * this session. */
typedef void (*engine_chat_token_callback)(const engine_token_logprob* token, const engine_token_logprob* top,
                                           size_t n_top, void* user_data);

typedef struct engine_chat_generate_params {
  uint32_t max_tokens;     /* 0: until the context is full */
  const char* const* stop; /* n_stop stop strings (UTF-8), or NULL */
  size_t n_stop;
  engine_chat_text_callback on_text; /* NULL: nothing is streamed */
  void* user_data;                   /* given to on_text and on_token */
  engine_chat_token_callback on_token; /* NULL: none (no log-probabilities are computed) */
  uint32_t n_top_logprobs;             /* the most likely tokens given to on_token, at most 20 */
} engine_chat_generate_params;

typedef enum engine_chat_stop_reason {
  ENGINE_CHAT_END_OF_GENERATION = 0, /* the model's end-of-generation token (EOS, EOT, <|im_end|>, ...) */
  ENGINE_CHAT_STOP_STRING = 1,       /* one of the stop strings */
  ENGINE_CHAT_MAX_TOKENS = 2,
  ENGINE_CHAT_CALLBACK = 3,          /* on_text returned false */
  ENGINE_CHAT_CONTEXT_FULL = 4
} engine_chat_stop_reason;

typedef struct engine_chat_result {
  uint32_t n_tokens; /* tokens of the reply evaluated into the session */
  engine_chat_stop_reason reason;
} engine_chat_result;

engine_chat_generate_params engine_chat_default_generate_params(void);
/* Generates the reply after engine_chat_prefill (or any evaluation): samples
 * with `sampler`, evaluates each token and streams its text to on_text until
 * a stop. The text of a stop string is never streamed, nor anything after it:
 * text that may begin a stop string is held back until the next tokens
 * complete it (the reply ends there) or rule it out (the text is streamed).
 * Bytes of a character split across tokens are held until it completes; an
 * ill-formed sequence is streamed as U+FFFD. The end-of-generation token and
 * the token that completed a stop string are not evaluated, so the session
 * holds the prompt and the reply; the next turn's engine_chat_prefill with the
 * reply as an assistant message reuses them. *result (may be NULL) gets the
 * tokens evaluated and why the reply ended, also when an evaluation fails or
 * the abort callback stops it (ENGINE_ERR_ABORTED; see
 * engine_session_set_abort). A stop string that is not valid UTF-8 is
 * ENGINE_ERR_INVALID_ARGUMENT. A grammar on the sampler starts over for each
 * reply. */
engine_status engine_chat_generate(engine_session* session, engine_sampler* sampler,
                                   const engine_chat_generate_params* params, engine_chat_result* result);

/* A reply read back into its tool calls, in the format the model's chat
 * template shows ("hermes" <tool_call>{...}</tool_call> for Qwen, Hermes,
 * Granite; "list" <tool_calls>[...]</tool_calls>; "llama3" {"name",
 * "parameters"}; "mistral" [TOOL_CALLS]; "gemma4" <|tool_call>call:...;
 * "pythonic" LFM2's [f(k='v')]; "functools" functools[...]; "qwen3_coder"
 * <function=f><parameter=k>v</parameter></function> for Qwen3-Coder,
 * Nemotron 3, Seed-OSS; "glm" f<arg_key>k</arg_key><arg_value>v</arg_value>;
 * "invoke" <invoke name="f"><parameter name="k">v</parameter></invoke> for
 * MiniMax-M2 and DeepSeek V3.2 / V4) or the one named by `format` (NULL: the
 * model's). The text around the calls is the content;
 * a call that does not parse stays in it. Free with engine_chat_parsed_free;
 * the strings live until then. */
typedef struct engine_chat_parsed {
  const char* content;
  const engine_chat_tool_call* tool_calls; /* arguments: a JSON object's text */
  size_t n_tool_calls;
  const char* format; /* the format read, "none" when the template shows none */
  void* internal;     /* the engine's */
} engine_chat_parsed;
engine_status engine_chat_parse_tool_calls(const engine_model* model, const char* format, const char* reply,
                                           engine_chat_parsed** out);
void engine_chat_parsed_free(engine_chat_parsed* parsed);

#ifdef __cplusplus
}
#endif

#endif /* ENGINE_API_ENGINE_H */
