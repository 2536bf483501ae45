/*
 * pipit.h - context-efficient, grammar-constrained on-device agents on top of
 * llama.cpp.
 *
 * This header is the runtime's public API (libpipit) and its manual: what an app that runs an
 * agent links. The tooling on top of it (test models, the simulated camera and phone,
 * training, scenario evaluation) is pipit_tools.h (libpipit-tools). Everything the `pipit`
 * command does, a program can do through the two headers.
 *
 * Usage: an agent on the bundled camera model, two turns. The example is a whole program; a
 * test (tests/install.sh) cuts it out of this comment, builds it against the library
 * and runs it, so it stays true. The engine layer below the agent (contexts with a permanent
 * prefix in the KV cache, samplers, constrained decoding) is documented further down.
 *
 *     #include "pipit.h"
 *
 *     #include <stdio.h>
 *
 *     int main(void) {
 *         struct pipit_error err = {0};
 *         struct pipit_model *model = NULL;
 *         struct pipit_toolset *tools = NULL;
 *         struct pipit_model_params mp = pipit_model_default_params();
 *         if (pipit_model_load("models/pipit-camera-v1.gguf", &mp, &model, &err) != PIPIT_OK ||
 *             pipit_toolset_load_file("tools/camera.json", &tools, &err) != PIPIT_OK) {
 *             fprintf(stderr, "%s\n", err.text);
 *             return 1;
 *         }
 *         struct pipit_device *camera = NULL; // the state the tools act on, as declared
 *         if (pipit_device_from_pack(tools, NULL, &camera, &err) != PIPIT_OK) {
 *             fprintf(stderr, "%s\n", err.text);
 *             return 1;
 *         }
 *         struct pipit_agent_params ap = pipit_agent_default_params();
 *         ap.device = camera;
 *         ap.n_threads = 1;
 *         struct pipit_agent *agent = NULL;
 *         if (pipit_agent_init(model, tools, &ap, &agent, &err) != PIPIT_OK) {
 *             fprintf(stderr, "%s\n", err.text);
 *             return 1;
 *         }
 *         const char *said[] = {"zoom in to 2x and turn on the flash", "never mind"};
 *         for (int i = 0; i < 2; i++) {
 *             struct pipit_turn *turn = NULL;
 *             if (pipit_agent_turn(agent, said[i], &turn) == PIPIT_OK) {
 *                 printf("%s\n", turn->sentence); // from the real result, never the model
 *             }
 *             pipit_turn_free(turn);
 *         }
 *         pipit_agent_free(agent);
 *         pipit_device_free(camera);
 *         pipit_toolset_free(tools);
 *         pipit_model_free(model);
 *         return 0;
 *     }
 *
 * Build it against an installed pipit: `cc app.c $(pkg-config --cflags --libs pipit)`.
 *
 * Conventions
 * - Every function that can fail returns an `enum pipit_status`; PIPIT_OK is 0.
 * Handles carry the message of their last failure (pipit_context_errmsg());
 * functions that create a handle fill a caller-provided `struct pipit_error`
 * instead (may be NULL).
 * - Messages read "<module>: <what failed>: <offending value>".
 * - Names are pipit_<object>_<verb>. A handle is made by `_init` (or `_load` from a file,
 * `_from_<source>` from another object) and ended by `_free`; every `_free` accepts NULL.
 * Plain structs filled by pipit are emptied by `_clear`; defaults come from
 * `_default_params()`.
 * - Strings returned as `char *` are owned by the caller and freed with
 * pipit_free(). `const` pointers returned by a handle are borrowed until the
 * next mutating call on that handle.
 * - The library never exits, never aborts on bad input and never prints to
 * stdout; logs go through the callback set with pipit_log_set().
 *
 * Thread safety: a `pipit_model` is read-only after loading and may be shared
 * by any number of contexts on any threads. A `pipit_context` and a
 * `pipit_sampler` are used by one thread at a time, except
 * pipit_context_cancel(), which may be called from any thread.
 */
#ifndef PIPIT_H
#define PIPIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Only what this header declares is exported from libpipit: the library is compiled with
 * -fvisibility=hidden and PIPIT_BUILD defined, and every declaration between this push and
 * the pop at the end of the header is the library's face (the test `symbols` lists the shared
 * library's dynamic symbols: all of them start with pipit_). */
#if defined(PIPIT_BUILD) && (defined(__GNUC__) || defined(__clang__))
#pragma GCC visibility push(default)
#endif

#define PIPIT_VERSION "0.1.0"

/* ============================================================================
 * status codes */

/* Append-only: values are never renumbered. */
enum pipit_status {
    PIPIT_OK = 0,
    PIPIT_ERR_INVALID_ARG = 1,      /* NULL handle, out-of-range value, misuse of the API */
    PIPIT_ERR_NOMEM = 2,            /* an allocation failed */
    PIPIT_ERR_IO = 3,               /* a file could not be opened, read or written */
    PIPIT_ERR_NOT_GGUF = 4,         /* the file is empty or does not start with "GGUF" */
    PIPIT_ERR_CORRUPT = 5,          /* a GGUF or session file is truncated or inconsistent */
    PIPIT_ERR_UNSUPPORTED_ARCH = 6, /* llama.cpp does not know the model's architecture */
    PIPIT_ERR_MODEL = 7,            /* llama.cpp refused the model for another reason */
    PIPIT_ERR_BACKEND = 8,          /* ggml backend initialisation failed */
    PIPIT_ERR_CONTEXT_FULL = 9,     /* the tokens do not fit in the context window */
    PIPIT_ERR_ABORTED = 10,         /* the abort callback or pipit_context_cancel() stopped it */
    PIPIT_ERR_DECODE = 11,          /* llama_decode failed */
    PIPIT_ERR_GRAMMAR = 12,         /* a GBNF grammar does not parse */
    PIPIT_ERR_TOKENIZE = 13,        /* text could not be tokenized */
    PIPIT_ERR_TEMPLATE = 14,        /* the chat template could not be applied */
    PIPIT_ERR_ADAPTER = 15,         /* a LoRA adapter could not be loaded or applied */
    PIPIT_ERR_STATE = 16,           /* operation not valid in the handle's current state */
    PIPIT_ERR_NO_CANDIDATES = 17,   /* the grammar allows no token (should not happen) */
    PIPIT_ERR_SPEC = 18,            /* a tool specification is malformed (file:line:col, path) */
    PIPIT_ERR_UNKNOWN_TOOL = 19,    /* a call names a tool the tool set does not have */
    PIPIT_ERR_INVALID_ARGS = 20,    /* a call's arguments do not match the tool's schema */
    PIPIT_ERR_PARSE = 21,           /* model output does not parse as a call */
    PIPIT_ERR_TOOL_FAILED = 22,     /* a tool handler reported a failure */
    PIPIT_ERR_JSON = 23,            /* a JSON document (state, scenario, ...) is malformed */
};

/* A static English name for a status, e.g. "context full". Never NULL. */
const char *pipit_status_str(enum pipit_status status);

/* Where a parse or load failure happened. line/column are 1-based, 0 when not
 * applicable. */
struct pipit_error {
    enum pipit_status status;
    int32_t line;   /* 1-based line in the input, 0 if none */
    int32_t column; /* 1-based column in the input, 0 if none */
    int64_t offset; /* byte offset in the input, -1 if none */
    char text[512]; /* "<module>: <what failed>: <offending value>",
                       NUL-terminated */
};

/* Free memory returned by pipit as `char *` (or any pointer documented "free
 * with pipit_free"). NULL is a no-op. */
void pipit_free(void *ptr);

/* ============================================================================
 * logging */

enum pipit_log_level {
    PIPIT_LOG_DEBUG = 0,
    PIPIT_LOG_INFO = 1,
    PIPIT_LOG_WARN = 2,
    PIPIT_LOG_ERROR = 3,
};

/* `text` is one message (a trailing newline may be present); borrowed for the
 * call only. */
typedef void (*pipit_log_fn)(enum pipit_log_level level, const char *text, void *user_data);

/* Route pipit's and llama.cpp's logs to `fn` (NULL: drop everything, the
 * default). Messages below `min_level` are dropped before the call.
 * Process-wide; thread-safe. */
void pipit_log_set(pipit_log_fn fn, void *user_data, enum pipit_log_level min_level);

/* ============================================================================
 * backend */

/* Initialise the llama.cpp backend once per process: load the CPU backend
 * variants that sit next to libllama (or in `backend_dir` when not NULL) and
 * call llama_backend_init(). Called implicitly by pipit_model_load(); calling
 * it again is a cheap no-op. Thread-safe. */
enum pipit_status pipit_backend_init(const char *backend_dir);

/* Number of logical cores this process may use (sched affinity), at least 1. */
int32_t pipit_cpu_count(void);

/* ============================================================================
 * model */

/* A loaded GGUF model: weights and vocabulary. Read-only, shareable across
 * contexts. */
struct pipit_model;

struct pipit_model_params {
    bool use_mmap;        /* map the file instead of reading it (default true) */
    bool vocab_only;      /* load the tokenizer only: tokenize, count, no contexts
                             (false) */
    int32_t n_gpu_layers; /* layers to offload when a GPU backend exists; 0 = CPU
                             (default) */
};

struct pipit_model_params pipit_model_default_params(void);

/* Load a GGUF model. Errors, each with the path in err->text:
 *   PIPIT_ERR_IO                 the file does not exist or cannot be read
 *   PIPIT_ERR_NOT_GGUF           the file is empty or its magic is not "GGUF"
 *   PIPIT_ERR_CORRUPT            the header, metadata or tensor data are
 * truncated/inconsistent PIPIT_ERR_UNSUPPORTED_ARCH   general.architecture is
 * missing or unknown to llama.cpp PIPIT_ERR_MODEL              llama.cpp
 * refused it otherwise (its last error is quoted) On failure *out is NULL and
 * nothing leaks. */
enum pipit_status pipit_model_load(const char *path,
                                   const struct pipit_model_params *params,
                                   struct pipit_model **out,
                                   struct pipit_error *err);

void pipit_model_free(struct pipit_model *model);

/* Facts about a loaded model. */
struct pipit_model_info {
    int32_t n_vocab;        /* tokens in the vocabulary */
    int32_t n_ctx_train;    /* context length it was trained for */
    int32_t n_embd;         /* embedding width */
    int32_t n_layer;        /* transformer blocks */
    uint64_t n_params;      /* parameters */
    uint64_t size_bytes;    /* bytes of tensor data */
    int32_t token_bos;      /* beginning-of-sequence token, -1 if none */
    int32_t token_eos;      /* end-of-sequence token, -1 if none */
    bool has_chat_template; /* the GGUF carries tokenizer.chat_template */
    char arch[32];          /* general.architecture, e.g. "llama" */
    char desc[128];         /* llama.cpp's one-line description */
};

void pipit_model_get_info(const struct pipit_model *model, struct pipit_model_info *info);

/* The GGUF metadata value of `key` as a string into `buf` (NUL-terminated). Returns its length,
 * or -1 when the key is absent. */
int32_t
pipit_model_meta_str(const struct pipit_model *model, const char *key, char *buf, size_t size);

/* A 64-bit fingerprint of the model (its shape and a sample of its weights): session files
 * record it and refuse a KV state made by another model. */
uint64_t pipit_model_fingerprint(const struct pipit_model *model);

/* True when `token` ends generation (EOS, EOT and the like). */
bool pipit_model_token_is_eog(const struct pipit_model *model, int32_t token);

/* ============================================================================
 * tokenizer */

/* Tokenize `text` into `tokens` (capacity `n_max`). `add_special` adds BOS/EOS
 * as the model wants; `parse_special` turns special-token text such as
 * "<|im_start|>" into its token. Returns the number of tokens; when it exceeds
 * n_max, returns -(needed) and writes nothing meaningful. Returns INT32_MIN on
 * other failure. */
int32_t pipit_tokenize(const struct pipit_model *model,
                       const char *text,
                       bool add_special,
                       bool parse_special,
                       int32_t *tokens,
                       int32_t n_max);

/* Tokenize into a new array. *out_tokens is freed with pipit_free(). */
enum pipit_status pipit_tokenize_alloc(const struct pipit_model *model,
                                       const char *text,
                                       bool add_special,
                                       bool parse_special,
                                       int32_t **out_tokens,
                                       int32_t *out_n);

/* Text of tokens, as one NUL-terminated string freed with pipit_free(); NULL on
 * failure. `render_special` includes the text of special tokens. */
char *pipit_detokenize(const struct pipit_model *model,
                       const int32_t *tokens,
                       int32_t n_tokens,
                       bool render_special);

/* The exact text of one token (special tokens rendered, no space stripped) into
 * `buf`. Returns its length in bytes, or -(needed) when `size` is too small,
 * INT32_MIN on bad input. `buf` is not NUL-terminated. */
int32_t pipit_token_piece(const struct pipit_model *model, int32_t token, char *buf, int32_t size);

/* One chat message for pipit_chat_apply_template(). */
struct pipit_chat_message {
    const char *role; /* "system", "user", "assistant" or "tool" */
    const char *content;
};

/* Format messages with the model's own chat template (tokenizer.chat_template)
 * or, when the model has none, with `fallback_template` (a name known to
 * llama.cpp such as "chatml"; NULL means "chatml"). `add_assistant` appends the
 * header that opens the assistant's reply. *out is freed with pipit_free(). */
enum pipit_status pipit_chat_apply_template(const struct pipit_model *model,
                                            const struct pipit_chat_message *messages,
                                            size_t n_messages,
                                            bool add_assistant,
                                            const char *fallback_template,
                                            char **out);

/* ============================================================================
 * adapters */

/* A LoRA adapter loaded for one model. Freed before its model. */
struct pipit_adapter;

enum pipit_status pipit_adapter_load(struct pipit_model *model,
                                     const char *path,
                                     struct pipit_adapter **out,
                                     struct pipit_error *err);

void pipit_adapter_free(struct pipit_adapter *adapter);

/* The adapter's GGUF metadata value for `key` as a string into buf (as pipit_model_meta_str):
 * the length, or -1 when absent. An adapter made by `pipit train --lora` records the prompt it
 * was trained on (pipit.prompt.system, pipit.train.n_ctx, pipit.pack.*), which the agent reads
 * before the base model's (docs/training.md, "Adapters"). */
int32_t pipit_adapter_meta_str(const struct pipit_adapter *adapter,
                               const char *key,
                               char *buf,
                               size_t size);

/* ============================================================================
 * context */

/*
 * A context is one KV cache on a model (one llama_context, one sequence). Its
 * tokens form two regions, in this order:
 *
 *     [ permanent prefix ........ | ephemeral tail ...... ]
 *       system text, tools, memory  this turn's state line, utterance,
 * generated tokens
 *
 * The permanent prefix is prefilled once and reused across turns; the ephemeral
 * tail is appended per turn and either rewound (dropped exactly, as if never
 * decoded) or committed (becomes part of the prefix). Permanent tokens can only
 * be appended while the tail is empty.
 */
struct pipit_context;

/* Return true to stop the current prefill or decode (polled between graph
 * nodes). */
typedef bool (*pipit_abort_fn)(void *user_data);

struct pipit_context_params {
    uint32_t n_ctx;          /* context window in tokens; 0 = the model's training length,
                                capped at 4096 (default 2048) */
    uint32_t n_batch;        /* max tokens per llama_decode call during prefill (default
                                512) */
    int32_t n_threads;       /* CPU threads; 0 = half the usable cores, at most 4 (default
                                0). Never use more threads than free cores: ggml threads
                                spin-wait, and one too many costs 10-100x on a busy machine */
    pipit_abort_fn abort_fn; /* optional cancellation poll, NULL = none */
    void *abort_user_data;   /* passed to abort_fn */
    bool flash_attn;         /* llama.cpp's flash attention (default false). On a CPU it makes
                                the one-time prefill of a long prefix up to a quarter faster
                                and every short per-turn tail and generated token slower
                                (warm first token 1.6x slower on a 0.5B shape with a 2K-token
                                prefix, docs/engine.md): pipit prefills once and decodes
                                every turn. Sessions save the KV layout of their setting */
};

struct pipit_context_params pipit_context_default_params(void);

enum pipit_status pipit_context_init(struct pipit_model *model,
                                     const struct pipit_context_params *params,
                                     struct pipit_context **out,
                                     struct pipit_error *err);

void pipit_context_free(struct pipit_context *ctx);

/* Message of the last failure on this context ("" when none). Borrowed. */
const char *pipit_context_errmsg(const struct pipit_context *ctx);

/* Change the thread count between calls (thermal throttling, contention). n
 * >= 1. */
enum pipit_status pipit_context_set_threads(struct pipit_context *ctx, int32_t n_threads);

/* Replace the adapters applied to this context: `n` adapters with their scales
 * (0 disables one; effective scale = scale * alpha / rank). n = 0 removes all.
 * The KV cache is NOT cleared: tokens already decoded keep the values computed
 * under the previous adapters. */
enum pipit_status pipit_context_set_adapters(struct pipit_context *ctx,
                                             struct pipit_adapter *const *adapters,
                                             const float *scales,
                                             size_t n);

enum pipit_region {
    PIPIT_REGION_PERMANENT = 0,
    PIPIT_REGION_EPHEMERAL = 1,
};

/* Prefill `n` tokens at the end of `region` in batches of n_batch; afterwards
 * the logits of the last token are available. Appending to the permanent region
 * while the ephemeral tail is not empty is PIPIT_ERR_STATE. Errors:
 * PIPIT_ERR_CONTEXT_FULL (nothing is decoded), PIPIT_ERR_ABORTED (the tokens of
 * this call are removed again: the regions are as before the call),
 * PIPIT_ERR_DECODE. */
enum pipit_status pipit_context_append(struct pipit_context *ctx,
                                       enum pipit_region region,
                                       const int32_t *tokens,
                                       int32_t n);

/* Decode one generated token into the ephemeral tail (counted as decode, not
 * prefill). */
enum pipit_status pipit_context_decode_token(struct pipit_context *ctx, int32_t token);

/* Append several already-known tokens into the ephemeral tail in one batch,
 * counted as decoded tokens (used to skip over forced text). */
enum pipit_status
pipit_context_decode_forced(struct pipit_context *ctx, const int32_t *tokens, int32_t n);

/* Drop the ephemeral tail: the KV cache is exactly as after the last permanent
 * append. */
enum pipit_status pipit_context_rewind(struct pipit_context *ctx);

/* Drop the ephemeral tail after its first `keep` tokens (0 <= keep <=
 * n_ephemeral). Like pipit_context_truncate, the dropped tokens' cells are kept until the next
 * decode: an append of the same tokens (a step decoded again with another grammar) reuses them. */
enum pipit_status pipit_context_rewind_to(struct pipit_context *ctx, int32_t keep);

/* Shorten the permanent prefix to its first `n_keep` tokens (0 <= n_keep <= n_permanent), e.g.
 * to rebuild trimmed memory. The ephemeral tail must be empty (else PIPIT_ERR_STATE). The cut
 * tokens' cache cells are kept until the next decode: a permanent append that starts with the
 * same tokens reuses them instead of prefilling them again (counted in n_reused_tokens), so a
 * rebuild pays only from the first token that changed. */
enum pipit_status pipit_context_truncate(struct pipit_context *ctx, int32_t n_keep);

/* The permanent prefix's KV state and tokens as one opaque blob (the ephemeral tail must be
 * empty: PIPIT_ERR_STATE). *out is freed with pipit_free(). Restore it with
 * pipit_context_load_state() into a context of the same model and n_ctx. */
enum pipit_status pipit_context_save_state(struct pipit_context *ctx, uint8_t **out, size_t *len);

/* Replace both regions with a blob from pipit_context_save_state(). A blob that is truncated,
 * malformed or from another model is refused (PIPIT_ERR_CORRUPT) and leaves the context empty
 * (both regions cleared), never half-loaded. */
enum pipit_status
pipit_context_load_state(struct pipit_context *ctx, const uint8_t *data, size_t len);

/* Bytes of the context's KV state (both regions): its memory cost. */
size_t pipit_context_kv_bytes(struct pipit_context *ctx);

/* Make the ephemeral tail part of the permanent prefix. */
enum pipit_status pipit_context_commit(struct pipit_context *ctx);

/* Drop everything (both regions). */
enum pipit_status pipit_context_clear(struct pipit_context *ctx);

int32_t pipit_context_n_permanent(const struct pipit_context *ctx);
int32_t pipit_context_n_ephemeral(const struct pipit_context *ctx);
int32_t pipit_context_n_ctx(const struct pipit_context *ctx);

/* The tokens currently in the cache (permanent then ephemeral); borrowed until
 * the next mutating call. *n receives the count. */
const int32_t *pipit_context_tokens(const struct pipit_context *ctx, int32_t *n);

/* Logits (n_vocab floats) after the last token appended or decoded; NULL if
 * none yet. Borrowed until the next append/decode. */
const float *pipit_context_logits(struct pipit_context *ctx);

/* Request cancellation of the running or next prefill/decode on this context,
 * from any thread. The cancelled call returns PIPIT_ERR_ABORTED and leaves the
 * regions as they were before it; the flag is cleared when that call returns.
 */
void pipit_context_cancel(struct pipit_context *ctx);

/* Counters since the context was created or last reset. */
struct pipit_perf {
    int64_t n_prefill_tokens; /* tokens appended with pipit_context_append and prefilled */
    int64_t n_reused_tokens;  /* ... appended without a prefill: the cache still held them after
                                 pipit_context_truncate or a rewind */
    int64_t n_decode_tokens;  /* tokens decoded one by one or forced */
    int64_t n_decode_calls;   /* llama_decode calls made for decode/forced tokens */
    int64_t n_sample_calls;   /* tokens sampled */
    int64_t n_grammar_fast;   /* constrained samples whose first, unmasked draw the grammar
                                 allowed (no vocabulary-wide mask was needed) */
    double t_prefill_ms;      /* wall time in prefill */
    double t_decode_ms;       /* wall time in decode */
    double t_sample_ms;       /* wall time in sampling (including grammar) */
    /* fast constrained decoding (docs/fastgrammar.md) */
    int64_t n_forced_tokens; /* tokens the grammar forced, appended without a draw (jump-forward
                                and single-candidate steps) */
    int64_t n_draws;         /* constrained tokens drawn from a distribution */
    double t_constraint_ms;  /* wall time in the grammar constraint alone (either path) */
    double t_forced_ms;      /* ... of which finding the tokens the grammar forces (not part of
                                t_sample_ms: no draw is made) */
};

void pipit_context_get_perf(const struct pipit_context *ctx, struct pipit_perf *perf);
void pipit_context_reset_perf(struct pipit_context *ctx);

/* ============================================================================
 * sampler */

struct pipit_sampler;

struct pipit_sampler_params {
    float temperature; /* <= 0: greedy (argmax) (default 0) */
    int32_t top_k;     /* keep the k most likely tokens, 0 = off (default 40) */
    float top_p;       /* nucleus threshold, 1 = off (default 0.95) */
    uint32_t seed;     /* RNG seed for temperature sampling (default 42) */

    /* Optional GBNF grammar (llama.cpp syntax). NULL = unconstrained. */
    const char *grammar;
    const char *grammar_root; /* start rule, NULL = "root" */

    /* Lazy grammar: unconstrained until a trigger fires, then the grammar applies
     * from the trigger on. Trigger tokens fire when sampled and are the grammar's
     * first token. Trigger patterns are POSIX extended regular expressions
     * searched in the output so far; the grammar is fed the text from the start
     * of capture group 1 (or of the match). A trigger whose text the grammar
     * cannot start with makes sampling fail with PIPIT_ERR_GRAMMAR (llama.cpp's
     * own lazy grammar would terminate the process). No triggers = not lazy. */
    bool grammar_lazy;
    const char *const *trigger_patterns;
    size_t n_trigger_patterns;
    const int32_t *trigger_tokens;
    size_t n_trigger_tokens;

    /* pipit's own decoder for `grammar` (docs/fastgrammar.md), borrowed, must outlive the
     * sampler. NULL (default) = llama.cpp's grammar sampler. A grammar outside the fast
     * decoder's subset falls back to llama.cpp's sampler. */
    struct pipit_fastgrammar *fast_grammar;
    /* The grammar is used for one step only (a per-turn grammar such as
     * pipit_grammar_with_copy()'s): the fast decoder keeps its automaton off the disk cache
     * and forgets it when the next transient grammar arrives, so a sampler on a transient
     * grammar must be freed before the next one is made on the same decoder (default false). */
    bool grammar_transient;
    /* With fast_grammar: llama.cpp's grammar sampler decides every drawn token, and pipit's
     * automaton, kept in step with it, only supplies the jump-forward (pipit_sampler_forced():
     * the text the grammar forces, cut as the tokenizer cuts it), each forced token also accepted
     * by llama.cpp's grammar. The model then reads the same tokens under either decoder, so greedy
     * decodes agree (default false; docs/fastgrammar.md). */
    bool gbnf_draws;
};

struct pipit_sampler_params pipit_sampler_default_params(void);

/* Errors: PIPIT_ERR_GRAMMAR when the grammar does not parse (llama.cpp's
 * message is quoted). */
enum pipit_status pipit_sampler_init(const struct pipit_model *model,
                                     const struct pipit_sampler_params *params,
                                     struct pipit_sampler **out,
                                     struct pipit_error *err);

void pipit_sampler_free(struct pipit_sampler *smpl);

/* Sample the next token from `ctx`'s current logits and accept it into the
 * sampler's state (grammar, RNG). Returns the token, or a negative status on
 * failure (-PIPIT_ERR_*). Time spent is added to ctx's t_sample_ms. */
int32_t pipit_sampler_sample(struct pipit_sampler *smpl, struct pipit_context *ctx);

/* Feed a token the sampler did not choose (forced text) into its state. Returns
 * PIPIT_ERR_GRAMMAR (and changes nothing in the grammar) when the grammar does
 * not allow it. */
enum pipit_status pipit_sampler_accept(struct pipit_sampler *smpl, int32_t token);

/* Forget accepted tokens: the grammar and triggers start again. */
void pipit_sampler_reset(struct pipit_sampler *smpl);

/* Check `text` against a GBNF grammar with llama.cpp's own grammar engine: *prefix_ok is true
 * when the text can be continued into a sentence of the grammar, *complete when it already is
 * one (end of generation allowed). The text is fed byte by byte, through tokens whose text is
 * one byte. Errors: PIPIT_ERR_GRAMMAR (the grammar does not parse), PIPIT_ERR_TOKENIZE (a byte
 * has no single-byte token in this vocabulary). */
enum pipit_status pipit_gbnf_match(const struct pipit_model *model,
                                   const char *gbnf,
                                   const char *text,
                                   bool *prefix_ok,
                                   bool *complete);

/* ============================================================================
 * generation */

struct pipit_generate_params {
    int32_t max_tokens; /* stop after this many generated tokens (default 64) */
    bool stop_at_eog;   /* stop at an end-of-generation token, not decoded (default
                           true) */
};

struct pipit_generate_params pipit_generate_default_params(void);

/* Sample and decode up to max_tokens tokens into ctx's ephemeral tail.
 * Generated tokens are written to `out_tokens` (capacity max_tokens, may be
 * NULL) and counted in *n_out. Returns PIPIT_OK when it stopped at max_tokens
 * or EOG, or the first error (the tokens generated so far stay in the tail and
 * in out_tokens). */
enum pipit_status pipit_generate(struct pipit_context *ctx,
                                 struct pipit_sampler *smpl,
                                 const struct pipit_generate_params *params,
                                 int32_t *out_tokens,
                                 int32_t *n_out);

/* ============================================================================
 * thermal state
 *
 * How hot the device is, in the five levels of Android's
 * PowerManager.getCurrentThermalStatus() (its EMERGENCY and SHUTDOWN fold into
 * CRITICAL). The harness scales threads, step delay and token limits by it and
 * pauses the loop at CRITICAL; the table and the sysfs thresholds are in
 * docs/policy.md. Append-only: values are never renumbered. */
enum pipit_thermal {
    PIPIT_THERMAL_NONE = 0,     /* cool: full speed */
    PIPIT_THERMAL_LIGHT = 1,    /* warm: still full speed */
    PIPIT_THERMAL_MODERATE = 2, /* half the threads and tokens, 200 ms between steps */
    PIPIT_THERMAL_SEVERE = 3,   /* one thread, a quarter of the tokens, 500 ms between steps */
    PIPIT_THERMAL_CRITICAL = 4, /* the agent loop is paused */
};

/* A static English name: "none", "light", "moderate", "severe", "critical";
 * "unknown thermal state" for any other value. Never NULL. */
const char *pipit_thermal_str(enum pipit_thermal t);

/* ============================================================================
 * tool specifications
 *
 * A tool set is loaded from a JSON file: an array of tools in the OpenAI
 * function-calling shape plus pipit's own "pipit" object per tool (sentence
 * templates, undo). The format, the JSON Schema subset, the limits and the
 * error messages are documented in docs/toolspec.md.
 *
 *     struct pipit_toolset *ts = NULL;
 *     struct pipit_error err;
 *     if (pipit_toolset_load_file("tools/camera.json", &ts, &err) != PIPIT_OK) {
 *         fprintf(stderr, "%s\n", err.text); // "tools/camera.json:12:7: $[3]...: ..."
 *     }
 *     char *compact = NULL;
 *     pipit_toolset_serialize(ts, PIPIT_TOOLSPEC_COMPACT, &compact);
 *     ...
 *     pipit_free(compact);
 *     pipit_toolset_free(ts);
 *
 * A toolset is read-only after loading and may be shared across threads. */
struct pipit_toolset;

/* Serializations of a tool set, as a model would see it. */
enum pipit_toolspec_format {
    PIPIT_TOOLSPEC_OPENAPI = 0,  /* pretty JSON array (2-space indent), full schemas */
    PIPIT_TOOLSPEC_MINIFIED = 1, /* the same array, no whitespace */
    PIPIT_TOOLSPEC_COMPACT = 2,  /* one signature line per tool: set_zoom(level: number 0.5..10) */
    PIPIT_TOOLSPEC_JIT = 3,      /* one line per tool: name - description */
};
#define PIPIT_TOOLSPEC_N_FORMATS 4

/* What undoing a tool's call means (the spec's "pipit.undo"). */
enum pipit_undo_kind {
    PIPIT_UNDO_NO_STATE = 0,   /* "undo" omitted: the tool changes nothing (read-only) */
    PIPIT_UNDO_IMPOSSIBLE = 1, /* "undo": "none": it changes something that cannot be undone */
    PIPIT_UNDO_KEYS = 2,       /* "undo": {"keys": [...]}: restore these state keys */
};

/* Load a specification file (at most 1 MiB). Errors: PIPIT_ERR_IO (the file
 * cannot be read; err->text names it), PIPIT_ERR_SPEC (syntax or content; err
 * has line, column, offset and "FILE:LINE:COL: JSON.PATH: what is wrong"),
 * PIPIT_ERR_NOMEM. On failure *out is NULL. */
enum pipit_status
pipit_toolset_load_file(const char *path, struct pipit_toolset **out, struct pipit_error *err);

/* Load a specification from `len` bytes of `text`; `name` (NULL: "<string>")
 * stands for the file name in messages. */
enum pipit_status pipit_toolset_load_string(const char *text,
                                            size_t len,
                                            const char *name,
                                            struct pipit_toolset **out,
                                            struct pipit_error *err);

void pipit_toolset_free(struct pipit_toolset *ts);

size_t pipit_toolset_n_tools(const struct pipit_toolset *ts);

/* The pack's name (its "pipit": {"pack": ...}), NULL for a plain array. Borrowed. */
const char *pipit_toolset_pack_name(const struct pipit_toolset *ts);

/* A content hash of the whole tool set, tools and pack block: 16 lower-case hex digits of a
 * 64-bit FNV-1a over the document with sorted keys and no whitespace, so reformatting the file
 * keeps it and any change of a name, schema, state, effect or example changes it. `pipit train
 * --tools` records it in the model (pipit.pack.hash) and the agent compares (docs/agent.md). */
void pipit_toolset_content_hash(const struct pipit_toolset *ts, char out[17]);

/* Name and one-line description of the tool at `index`; NULL when out of range.
 * Borrowed for the toolset's lifetime. */
const char *pipit_toolset_tool_name(const struct pipit_toolset *ts, size_t index);
const char *pipit_toolset_tool_description(const struct pipit_toolset *ts, size_t index);

/* Index of the tool called `name`, or -1. */
int32_t pipit_toolset_find(const struct pipit_toolset *ts, const char *name);

/* The whole tool set in `format`, NUL-terminated, freed with pipit_free().
 * Deterministic: the same file always gives the same bytes. */
enum pipit_status pipit_toolset_serialize(const struct pipit_toolset *ts,
                                          enum pipit_toolspec_format format,
                                          char **out);

/* One tool in `format` (the element of the array for the JSON formats, the line
 * without its newline for the others), freed with pipit_free(). */
enum pipit_status pipit_toolset_serialize_tool(const struct pipit_toolset *ts,
                                               size_t index,
                                               enum pipit_toolspec_format format,
                                               char **out);

/* Token counts, indexed by enum pipit_toolspec_format. */
struct pipit_token_counts {
    int32_t by_format[PIPIT_TOOLSPEC_N_FORMATS];
};

/* Count tokens with `model`'s tokenizer (no BOS, special tokens not parsed; a
 * vocab_only model is enough). `per_tool` (may be NULL) receives n_tools
 * entries: each tool's own serialization. `total` (may be NULL) receives the
 * count of the whole serialization, which includes the array brackets and
 * separators, so it is not exactly the sum. Errors: PIPIT_ERR_TOKENIZE. */
enum pipit_status pipit_toolset_count_tokens(const struct pipit_toolset *ts,
                                             const struct pipit_model *model,
                                             struct pipit_token_counts *per_tool,
                                             struct pipit_token_counts *total);

/* One problem with a call's arguments, e.g. path "args.level", message
 * "20 is above the maximum 10". Both NUL-terminated, cut if too long. */
struct pipit_arg_problem {
    char path[128];
    char message[256];
};

/* Validate the JSON text `args_json` (`len` bytes) as the arguments of tool
 * `tool_name`: types, enums, ranges, required and unknown keys, maxLength,
 * maxItems, nested objects and arrays. An integer parameter accepts a number
 * with zero fractional part (2.0). Up to `max_problems` problems are written to
 * `problems` (may be NULL when max_problems is 0); *n_problems receives how
 * many were written. Returns PIPIT_OK (no problems), PIPIT_ERR_UNKNOWN_TOOL,
 * PIPIT_ERR_JSON (the text does not parse: one problem at "args" says why) or
 * PIPIT_ERR_INVALID_ARGS. */
enum pipit_status pipit_toolset_validate_args(const struct pipit_toolset *ts,
                                              const char *tool_name,
                                              const char *args_json,
                                              size_t len,
                                              struct pipit_arg_problem *problems,
                                              size_t max_problems,
                                              size_t *n_problems);

/* The success sentence template of the tool at `index` ("Done." when the spec
 * has none); NULL when out of range. Placeholders: {arg or result key},
 * {error}, {code}; "{{" and "}}" are literal braces. */
const char *pipit_toolset_success_template(const struct pipit_toolset *ts, size_t index);

/* The failure template for reason `code`: the tool's template for that code,
 * else its catch-all "*", else "I couldn't do that: {error}.". NULL when out of
 * range. */
const char *
pipit_toolset_failure_template(const struct pipit_toolset *ts, size_t index, const char *code);

/* What undo means for the tool at `index`. For PIPIT_UNDO_KEYS, *keys
 * (borrowed) and *n_keys receive the state keys to restore; otherwise NULL and
 * 0. Either output may be NULL. Out of range: PIPIT_UNDO_NO_STATE. */
enum pipit_undo_kind pipit_toolset_undo(const struct pipit_toolset *ts,
                                        size_t index,
                                        const char *const **keys,
                                        size_t *n_keys);

/* ============================================================================
 * grammars and calls
 *
 * A call is written in one of two syntaxes:
 *   PIPIT_SYNTAX_PIPIT   <call>set_zoom(level=2.5, note="x")    pipit's own, short in tokens:
 *                        top-level arguments as key=value in schema order, values in JSON
 *   PIPIT_SYNTAX_HERMES  <tool_call>\n{"name": "set_zoom", "arguments":
 * {"level": 2.5}}\n</tool_call> the Hermes/Qwen style many instruct models are trained on A
 * compiled grammar set gives llama.cpp GBNF for "exactly one call to one of these tools" (starting
 * with the trigger "<call>" / "<tool_call>", so it also serves as a lazy grammar), for "the trigger
 * and a tool name" (just-in-time stage 1) and for "the arguments of this one tool" (stage 2).
 * Values are exact: enums, integer ranges and fixed-point number ranges (at most 3 fractional
 * digits), bounded strings and arrays, so a constrained call always passes
 * pipit_toolset_validate_args(). See docs/grammar.md. */

enum pipit_call_syntax {
    PIPIT_SYNTAX_AUTO =
        -1, /* agent params: Hermes when the model has a chat template, else pipit */
    PIPIT_SYNTAX_PIPIT = 0,
    PIPIT_SYNTAX_HERMES = 1,
};

/* "pipit" / "hermes". */
const char *pipit_call_syntax_str(enum pipit_call_syntax syntax);

/* The text that starts a call: "<call>" or "<tool_call>". */
const char *pipit_call_syntax_trigger(enum pipit_call_syntax syntax);

struct pipit_grammar;

struct pipit_grammar_params {
    enum pipit_call_syntax syntax; /* (default PIPIT_SYNTAX_PIPIT) */
    uint32_t max_string_chars;     /* cap on any string value, in characters, below the
                                      schema's maxLength (default 128): bounds the tokens a
                                      call can spend on free text */
    uint32_t max_array_items;      /* cap on arrays without maxItems (default 8) */
    bool exact_values;             /* compile minimum/maximum and numeric enums into the
                                      grammar, so every call validates (`pipit tools sample`);
                                      default false: the grammar guarantees a number's type and
                                      shape and validation refuses it out of range, so the agent
                                      can say the limit (docs/grammar.md) */
    bool copy_strings;             /* free text copied, not invented: every top-level string
                                      argument without an enum, format or pattern (outside the
                                      cloud tool, and unless a pack example gives it a value
                                      that shares no word with its sentence) is the rule `copy`,
                                      defined last as any string; pipit_grammar_with_copy()
                                      turns it into the spans of a turn's text (default false;
                                      docs/grammar.md, "Copied strings") */
};

struct pipit_grammar_params pipit_grammar_default_params(void);

/* Compile once per tool set; the result is read-only and reusable. `params` NULL = defaults. */
enum pipit_status pipit_grammar_compile(const struct pipit_toolset *ts,
                                        const struct pipit_grammar_params *params,
                                        struct pipit_grammar **out,
                                        struct pipit_error *err);
void pipit_grammar_free(struct pipit_grammar *g);

/* What tool `index` accepts and where each constraint is enforced: one line per schema node,
 * e.g. "  args.level: number; grammar: type; validated: minimum, maximum" ("grammar": a
 * constrained decode cannot break it; "validated": checked after generation, before any
 * handler, and refused with the tool's failure template). *out is freed with pipit_free().
 * PIPIT_ERR_INVALID_ARG for a bad index. */
enum pipit_status
pipit_grammar_describe_tool(const struct pipit_toolset *ts, size_t index, char **out);

/* GBNF texts (root rule "root"), borrowed for the grammar's lifetime. */
const char *pipit_grammar_call(const struct pipit_grammar *g);
const char *pipit_grammar_names(const struct pipit_grammar *g);
const char *pipit_grammar_args(const struct pipit_grammar *g, size_t tool_index);
enum pipit_call_syntax pipit_grammar_syntax(const struct pipit_grammar *g);

/* `gbnf` (one of the texts above, compiled with copy_strings) with its rule `copy` turned
 * into the word spans of `texts`: each line's words, from any word to any later word of the
 * same line, exactly as written (outer punctuation and quotes never start or end a span),
 * JSON-escaped. Lines of more than 40 words are cut into runs of 40; at most 400 words in
 * all, the texts first to last. *out (freed with pipit_free()) is NULL when `gbnf` has no
 * rule `copy` or the texts have no word: use `gbnf` as it is. */
enum pipit_status
pipit_grammar_with_copy(const char *gbnf, const char *const *texts, size_t n_texts, char **out);

/* A parsed call: the tool name and its arguments as a compact JSON object. */
struct pipit_call {
    char name[72];
    char *args_json; /* owned; freed by pipit_call_clear() */
};

/* True when `text` contains the syntax's trigger: the output is a call, not plain text. */
bool pipit_call_detect(enum pipit_call_syntax syntax, const char *text);

/* Parse model output holding one call. Text before the trigger is ignored; after the call only
 * whitespace may follow. Bytes that are not UTF-8 are read as U+FFFD. Errors: PIPIT_ERR_PARSE with
 * err->offset/column at the problem and a message such as "call: expected '=' after argument
 * 'level' at column 17". The name is not checked against a tool set (pipit_toolset_validate_args
 * does that). */
enum pipit_status pipit_call_parse(enum pipit_call_syntax syntax,
                                   const char *text,
                                   struct pipit_call *out,
                                   struct pipit_error *err);

/* Free a call's arguments and zero it. */
void pipit_call_clear(struct pipit_call *call);

/* True when `call` is the grammar's "none of these tools" outcome (docs/grammar.md): named
 * "none", no arguments, and `ts` (NULL: any set) has no tool of its own by that name. */
bool pipit_call_is_none(const struct pipit_toolset *ts, const struct pipit_call *call);

/* ============================================================================
 * devices
 *
 * A device holds the state the agent's tools act on. The agent reads it for the prompt's state
 * line, answers questions about it, snapshots the keys a call changes before the call, and
 * puts them back for undo. A device is made once and passed to pipit_agent_init() (borrowed):
 *
 *     struct pipit_device *dev = NULL;
 *     pipit_device_from_pack(toolset, NULL, &dev, &err);  // the tool set's declared state
 *     ap.device = dev;
 *     ...
 *     pipit_agent_free(agent);
 *     pipit_device_free(dev);                              // after every agent using it
 *
 * Two kinds here, in the runtime:
 * - the pack device (pipit_device_from_pack()): the generic device made from a tool set's
 *   declared state (docs/pack.md): the state line, the effects of each tool on success, ranges
 *   and enums, undo. Any pack with a declared state runs on it without C code.
 * - an app's own state (pipit_device_from_app()): the app runs its tools through its handlers
 *   (pipit_agent_register_tool()) and gives pipit its state as JSON through a callback; pipit
 *   renders it into the state line and snapshots it for undo, and undo hands the saved keys
 *   back to the app's restore callback. See examples/home_app.c.
 * pipit's simulated camera and phone, which keep the rules a declaration cannot say (no flash
 * on the front camera, contact and message IDs), are tooling: pipit_device_init() in
 * pipit_tools.h (libpipit-tools) makes them, and chooses a device for a tool set by name.
 * An agent without a device (params.device NULL) runs its tools through handlers only; it has
 * no state line, answers no state questions and has nothing to undo.
 *
 * Thread safety: a device is used by one agent's turn at a time. Several agents may share a
 * device (they then act on the same state), never concurrently.
 */

struct pipit_device;

/* The longest state JSON an app's get_state() may write, in bytes with the NUL. */
#define PIPIT_APP_STATE_MAX_BYTES 4096

/* An embedder's own state (pipit_device_from_app()). Both callbacks run on the thread that runs
 * the turn, between model steps; they must not call back into the agent. */
struct pipit_app_state {
    const char *name; /* the state's name in messages and saved sessions, e.g. "home" (a
                         session saved on one name is refused by another); NULL: "app".
                         Copied (at most 64 bytes) */

    /* Write the whole state as a JSON object into buf (NUL-terminated, at most `size` bytes,
     * size is PIPIT_APP_STATE_MAX_BYTES), e.g. {"celsius": 20, "living_light": false}. The
     * keys should be the names the tools' "undo" blocks list (docs/toolspec.md): those are
     * the keys saved before a call and restored by undo. Return PIPIT_OK; any other status,
     * text that is not a JSON object or that fills the whole buffer is an error (at creation:
     * the device is refused; during a turn: the state line is empty and nothing is saved for
     * undo). Required. */
    enum pipit_status (*get_state)(char *buf, size_t size, void *user_data);

    /* Put keys back: `keys_json` is a JSON object of state keys with the values they had,
     * e.g. {"celsius": 20}. Apply all of them or none and return PIPIT_OK, or return an error
     * status (PIPIT_ERR_JSON for a key or value the app does not take): undo then says it
     * could not undo the action. Called by undo and by pipit_agent_load(). NULL: the
     * app's actions cannot be undone ("I couldn't undo the last action"). */
    enum pipit_status (*restore)(const char *keys_json, void *user_data);

    void *user_data; /* passed to both callbacks */
};

/* Create the generic device of `tools`' declared state (docs/pack.md; a pack's "pipit" block
 * with a "state"). `init_json` (NULL = the declared initial values) is a JSON object of state
 * keys the device starts with, e.g. {"recording": true}, applied all-or-nothing. The device
 * reads `tools` as long as it lives: the tool set must outlive it. Free with
 * pipit_device_free(). Its name (pipit_device_name()) is the pack's.
 * Errors: PIPIT_ERR_INVALID_ARG (NULL tools or out, a tool set without a declared state),
 * PIPIT_ERR_JSON (init_json is not a JSON object, or names a key or value the state refuses;
 * err->text names it), PIPIT_ERR_NOMEM. */
enum pipit_status pipit_device_from_pack(const struct pipit_toolset *tools,
                                         const char *init_json,
                                         struct pipit_device **out,
                                         struct pipit_error *err);

/* Create a device over an app's own state. `app` is copied; its user_data must outlive the
 * device. get_state() is called once here: a state that is not a JSON object is refused
 * (PIPIT_ERR_JSON, err->text says why). PIPIT_ERR_INVALID_ARG: NULL app, out or get_state. */
enum pipit_status pipit_device_from_app(const struct pipit_app_state *app,
                                        struct pipit_device **out,
                                        struct pipit_error *err);

/* Free a device. Agents that use it must be freed first. NULL is a no-op. */
void pipit_device_free(struct pipit_device *device);

/* The device's name: "camera", "phone", the pack's name, or the app state's name. Borrowed
 * until pipit_device_free(); "" for NULL. */
const char *pipit_device_name(const struct pipit_device *device);

/* The whole state as a compact JSON object (free with pipit_free); NULL for NULL or when the
 * state cannot be read (out of memory, an app's get_state() failing). */
char *pipit_device_state_json(const struct pipit_device *device);

/* ============================================================================
 * agent
 *
 * One turn: route (undo, compound segmentation; no model) -> one constrained decode per
 * segment -> validate -> execute -> a sentence from the tool's template and the real result.
 * The harness owns every limit: steps, wall clock, tokens per decode, the identical-failure
 * breaker, thermal throttling, cancellation. See docs/agent.md.
 *
 *     struct pipit_device *camera = NULL;
 *     pipit_device_from_pack(toolset, NULL, &camera, &err);
 *     struct pipit_agent_params ap = pipit_agent_default_params();
 *     ap.device = camera;
 *     struct pipit_agent *agent = NULL;
 *     pipit_agent_init(model, toolset, &ap, &agent, &err);
 *     struct pipit_turn *turn = NULL;
 *     pipit_agent_turn(agent, "zoom in to 2x and turn on the flash", &turn);
 *     puts(turn->sentence);            // "Zoom set to 2x. Flash is on."
 *     pipit_turn_free(turn);
 *     pipit_agent_free(agent);
 *     pipit_device_free(camera);
 *
 * Thread safety: one thread runs turns; pipit_agent_cancel() may be called from any thread.
 */

struct pipit_agent;

/* What a tool handler reports. code and message are cut to fit. The data is never cut: a
 * handler with more than data_json holds points `data` at its own NUL-terminated JSON (read
 * once, before the handler is called again; pipit copies it). Data that is not a JSON object
 * (or data_json filled to its last byte, which is taken as cut) makes the call a failure with
 * code "handler_error", never an empty success. */
struct pipit_tool_output {
    bool ok;              /* the action happened */
    char code[64];        /* failure: stable reason code, e.g. "zoom_out_of_range" */
    char message[256];    /* failure: human message the template shows as {error} */
    char data_json[1024]; /* success: a JSON object of what changed ("" or "{}": nothing) */
    const char *data;     /* success, instead of data_json: a JSON object of any length,
                             owned by the handler; NULL = use data_json */
};

/* A custom tool handler. `args_json` is a JSON object already validated against the tool's
 * schema. Return PIPIT_OK after filling `out` (also for failures of the action: ok = false);
 * any other status is reported as a failure with code "handler_error". */
typedef enum pipit_status (*pipit_tool_fn)(const char *tool,
                                           const char *args_json,
                                           struct pipit_tool_output *out,
                                           void *user_data);

/* What the agent keeps in context between turns (docs/memory.md). */
enum pipit_memory_mode {
    PIPIT_MEMORY_NONE = 0, /* nothing: each turn sees the system text, tools and state line */
    PIPIT_MEMORY_FULL = 1, /* conventional: every turn's user line, answer and tool result
                              stay in the context */
    PIPIT_MEMORY_CSO = 2,  /* the Context State Object: short key: value lines written from
                              tool results (and the State-Tracker), appended as deltas */
};

/* "none" / "full" / "cso". */
const char *pipit_memory_mode_str(enum pipit_memory_mode mode);

/* The State-Tracker's role prefix in a model trained for both roles (pipit.prompt.tracker =
 * "role"): the tracker's prompt is "tracker\n{CSO}New Messages:\n{messages}New Lines to
 * Append:\n". */
#define PIPIT_TRACKER_ROLE "tracker"

/* Whether free-text call arguments must be copied from the turn's text. */
enum pipit_copy_mode {
    PIPIT_COPY_AUTO = 0, /* on for PIPIT_SYNTAX_PIPIT, off for PIPIT_SYNTAX_HERMES */
    PIPIT_COPY_ON,
    PIPIT_COPY_OFF,
};

struct pipit_agent_params {
    struct pipit_device *device;   /* the state the tools act on (borrowed: it must outlive
                                      the agent; see "devices" above), NULL = none: tools run
                                      through handlers only (default NULL). The device's
                                      starting state is given where it is made
                                      (pipit_device_from_pack(), ...) */
    enum pipit_call_syntax syntax; /* PIPIT_SYNTAX_AUTO: Hermes when the model has a chat
                                      template, else pipit's own (default AUTO) */
    bool grammar;                  /* grammar-constrained calls (default true) */
    bool lazy_grammar;             /* plain text allowed until the call's trigger (default
                                      true); false forces every answer to be a call */
    bool small_talk;               /* thanks, greetings, goodbyes, praise and "ok" said with
                                      nothing else are answered by the harness, no model call
                                      (flag small_talk; docs/agent.md, "Small talk"); never
                                      when lazy_grammar is false (default true) */
    const char *system_prompt;     /* NULL: the model's pipit.prompt.system or pipit's default */
    uint32_t n_ctx;                /* context window; 0 (the default) = what the model
                                      needs: pipit.train.n_ctx + max_tokens + the longest JIT
                                      tool line, else its trained context, at most 2048
                                      (docs/memory.md, "The context budget") */
    int32_t n_threads;             /* base CPU threads, 0 = the engine's default (default 0) */
    float temperature;             /* <= 0: greedy (default 0) */
    uint32_t seed;                 /* sampling seed (default 42) */
    int32_t max_steps;             /* model steps per turn (default 3) */
    double turn_budget_ms;         /* wall-clock budget per turn, <= 0 unlimited (default
                                      15000; tighter than on a GPU, see docs/policy.md) */
    int32_t max_tokens;            /* tokens per decode before thermal scaling (default 96) */
    int32_t breaker_threshold;     /* identical failures in a row that stop (default 2) */
    int32_t undo_slots;            /* actions remembered for undo (default 8, >= 1) */
    enum pipit_toolspec_format tools_format; /* how tools appear in the prompt;
                                    PIPIT_TOOLSPEC_JIT = names and
                                    descriptions only, the chosen tool's schema is injected
                                    in a second stage (default PIPIT_TOOLSPEC_COMPACT) */
    enum pipit_memory_mode memory;           /* what stays in context (default PIPIT_MEMORY_CSO) */
    int32_t context_budget;            /* tokens the permanent prefix may reach before the oldest
                                          memory lines are trimmed; 0 = as many as the prompt limit
                                          leaves (default 0). The prompt limit (pipit.train.n_ctx,
                                          else the model's trained context length, at most n_ctx)
                                          minus the longest recent turn's tail always caps it; a
                                          tool prompt that leaves no room for a short command is
                                          served in a smaller format (compact, then JIT; see
                                          pipit_agent_get_budget) or, when none fits, refused by
                                          pipit_agent_init (PIPIT_ERR_CONTEXT_FULL) */
    bool state_tracker;                /* run the State-Tracker after each turn (memory cso): a
                                          second context on the same model writes extra CSO lines
                                          (default false: it costs a decode per turn and needs a
                                          model or adapter trained for it, see docs/memory.md) */
    const char *tracker_adapter;       /* LoRA adapter GGUF for the State-Tracker context, NULL =
                                          the base model prompted with the paper's prompt */
    const char *adapter;               /* LoRA adapter GGUF for the Executor context (the one that
                                          answers), NULL = the model alone. Its prompt metadata
                                          (system text, trained length, pack) is read before the
                                          model's (pipit train --base --lora; docs/training.md) */
    bool fast_grammar;                 /* pipit's own constrained decoder with jump-forward
                                          (default true); false: llama.cpp's grammar sampler, also
                                          the fallback for grammars outside the fast path
                                          (docs/fastgrammar.md) */
    bool flash_attn;                   /* llama.cpp's flash attention in the agent's contexts
                                          (Executor and State-Tracker; default false: on a CPU it
                                          trades per-turn latency for one-time prefill, as in
                                          pipit_context_params) */
    enum pipit_copy_mode copy_strings; /* free-text arguments (names, places, messages) are
                                    spans of the person's words, the memory or the state line
                                    (pipit_grammar_params.copy_strings; default
                                    PIPIT_COPY_AUTO: on for pipit's call syntax, whose small
                                    models can only copy, off for Hermes models, which may
                                    compose a message; docs/grammar.md, "Copied strings") */
};

struct pipit_agent_params pipit_agent_default_params(void);

/* Create an agent. `model`, `tools` and params->device are borrowed and must outlive it.
 * Errors: the grammar or the context cannot be built, the device's state cannot be read. */
enum pipit_status pipit_agent_init(struct pipit_model *model,
                                   const struct pipit_toolset *tools,
                                   const struct pipit_agent_params *params,
                                   struct pipit_agent **out,
                                   struct pipit_error *err);

void pipit_agent_free(struct pipit_agent *agent);

/* How the agent fits its context (docs/agent.md, "Context budget"). */
struct pipit_agent_budget {
    int32_t prompt_limit;  /* the longest prompt the agent builds: pipit.train.n_ctx, else the
                              model's trained context length, at most n_ctx (tokens) */
    int32_t n_ctx;         /* the context window (tokens) */
    int32_t system_tokens; /* the system text and tools (tokens; -1 before it is counted) */
    int32_t memory_budget; /* the permanent prefix (system, tools, memory) may reach this many
                              tokens now: the prompt limit minus the longest recent turn's tail,
                              and n_ctx minus that tail and max_tokens (tokens) */
    enum pipit_toolspec_format tools_format; /* in use: params.tools_format, or a smaller one
                              when that one did not fit (enum pipit_toolspec_format) */
    char notice[512]; /* what creation changed to fit, with the numbers ("" = nothing) */
};

/* Fill `out` (both non-NULL, else nothing happens). */
void pipit_agent_get_budget(const struct pipit_agent *agent, struct pipit_agent_budget *out);

/* "" when the model fits the tool set, else why not: the model records the pack it was trained
 * for (pipit.pack.name and pipit.pack.hash, `pipit train --tools`) and the tool set is another
 * pack, a plain tool set, or another version of the same pack (its content hash,
 * pipit_toolset_content_hash()). Also logged as a warning at creation. Models without those
 * keys (the bundled camera model, general instruct models) are not checked. Borrowed. */
const char *pipit_agent_model_notice(const struct pipit_agent *agent);

/* Message of the agent's last failure: every call on an agent that fails (register_tool,
 * update_thermal, turn, save, load) says why here; a turn clears it when it starts. Borrowed. */
const char *pipit_agent_errmsg(const struct pipit_agent *agent);

/* Handle `tool` with `fn` instead of the device (the tool must be in the tool set). `fn` NULL
 * removes the handler: the device handles the tool again. With an app's state
 * (pipit_device_from_app()) the handlers are the app's tools: before a handler runs, the keys
 * of the tool's "undo" block are saved from get_state(), and undo gives them to restore(). */
enum pipit_status pipit_agent_register_tool(struct pipit_agent *agent,
                                            const char *tool,
                                            pipit_tool_fn fn,
                                            void *user_data);

/* The cloud endpoint for the process_with_cloud_llm tool (borrowed; NULL = none, the
 * default: then nothing leaves the device and the tool fails with cloud_not_configured).
 * A custom handler registered for the tool takes precedence. */
struct pipit_cloud;
void pipit_agent_set_cloud(struct pipit_agent *agent, struct pipit_cloud *cloud);

/* The thermal state the host reports (see enum pipit_thermal): threads, step delay and
 * token limit follow seed 001's table; CRITICAL pauses turns. */
void pipit_agent_set_thermal(struct pipit_agent *agent, enum pipit_thermal state);

/* Read the thermal state from /sys/class/thermal (Linux) and apply it. */
enum pipit_status pipit_agent_update_thermal(struct pipit_agent *agent, struct pipit_error *err);

/* Stop the running turn at the next decode step (any thread). The agent stays usable. */
void pipit_agent_cancel(struct pipit_agent *agent);

/* The device state as JSON (free with pipit_free); NULL without a device. The same as
 * pipit_device_state_json(params.device). */
char *pipit_agent_state_json(const struct pipit_agent *agent);

/* One call the turn made, with its outcome. */
struct pipit_call_record {
    char tool[72];
    char *args_json;          /* as decoded (compact JSON), "" when it did not parse */
    enum pipit_status status; /* PIPIT_OK: executed (see ok); PIPIT_ERR_PARSE,
                                 PIPIT_ERR_UNKNOWN_TOOL, PIPIT_ERR_INVALID_ARGS: refused
                                 before any handler ran */
    bool executed;            /* a handler ran */
    bool ok;                  /* ... and the action happened */
    char code[64];            /* failure reason code */
    char message[256];        /* failure message (or the validation problem) */
    char *data_json;          /* success data, "{}" when none */
    char *sentence;           /* this call's sentence */
};

/* Flags of a turn. */
enum pipit_turn_flag {
    PIPIT_TURN_UNDO = 1 << 0,             /* routed to undo, no model call */
    PIPIT_TURN_COMPOUND = 1 << 1,         /* split into several steps */
    PIPIT_TURN_NARRATION_CAUGHT = 1 << 2, /* plain text claimed an action; replaced */
    PIPIT_TURN_BREAKER = 1 << 3,          /* identical failures stopped the turn */
    PIPIT_TURN_BUDGET = 1 << 4,           /* the wall-clock budget stopped the turn */
    PIPIT_TURN_STEP_CAP = 1 << 5,         /* more segments than max_steps */
    PIPIT_TURN_CANCELLED = 1 << 6,        /* pipit_agent_cancel() stopped it */
    PIPIT_TURN_PLAIN_TEXT = 1 << 7,       /* a step answered in words */
    PIPIT_TURN_PAUSED = 1 << 8,           /* thermal CRITICAL: nothing was run */
    PIPIT_TURN_TOKEN_LIMIT = 1 << 9,      /* a decode hit the token limit */
    PIPIT_TURN_OVER_BUDGET = 1 << 10,     /* the permanent prefix exceeds the context budget
                                            and only the system text, tools and pinned memory
                                            are left (never dropped silently) */
    PIPIT_TURN_STATE_ANSWER = 1 << 11,    /* a question about the device state was answered
                                            from the state, with no model call */
    PIPIT_TURN_STATE_CORRECTED = 1 << 12, /* plain text claimed a wrong value for a state key;
                                            the sentence was replaced by the true one */
    PIPIT_TURN_NUMBER_RESTORED = 1 << 13, /* the model bent a number the person said out of
                                            range into a legal one; the person's number was
                                            put back, so the call is refused with the limit */
    PIPIT_TURN_UNPINNED = 1 << 14,        /* pinned memory lines alone did not fit the budget:
                                            the oldest were unpinned and trimmed
                                            (unpinned_lines says how many) */
    PIPIT_TURN_SMALL_TALK = 1 << 15,      /* social words only ("thanks, that's all"):
                                            answered by the harness, no model call */
    PIPIT_TURN_WORDS_RESTORED = 1 << 16,  /* the model misspelt the person's words in a free
                                            string ("Bobo" for "text Bob hi") or chose another
                                            enum value or on/off than the one said ("flash
                                            on" -> "off"); the person's words were put back */
    PIPIT_TURN_QUESTION_KEPT = 1 << 17,   /* the model answered a question ("is the porch
                                            light on?") with a call that would change
                                            something: it was not run, the sentence says so */
    PIPIT_TURN_NOT_ASKED = 1 << 18,       /* a call changed nothing and the person named neither
                                            what it acts on nor its values ("add a filter"
                                            -> the timer at the 5 s it had): the sentence says
                                            nothing changed instead of the tool's success; or
                                            a switch nobody named, on no side said, was not
                                            run ("open my Q3 report" -> Bluetooth off) */
    PIPIT_TURN_TOOL_NAMED = 1 << 20,      /* the model called a tool the segment did not name
                                            while it named another: by a value only that tool
                                            has ("try daylight" -> the grid) or by its noun and
                                            the one number it takes ("timer 7 seconds" -> the
                                            focus); that tool was called with the value, as said
                                            (agent_choose_tool_by_value(), _by_number()) */
    PIPIT_TURN_CARRIED = 1 << 21,         /* the model's call picked a place (a room) the
                                            person did not say; the last action's was kept
                                            ("bit dimmer" after "lounge light on") */
    PIPIT_TURN_GARBLED = 1 << 22,         /* the model's words held pieces of a call (syntax,
                                            a tool's or argument's name): replaced by "Sorry,
                                            I didn't understand that, so I did nothing." */
    PIPIT_TURN_OFF_TOPIC = 1 << 23,       /* the model answered a question that was no small
                                            talk with a social formula ("what's the volume?"
                                            -> "Glad it works."): replaced by "Sorry, I can't
                                            answer that here." */
    PIPIT_TURN_UNKNOWN_THING = 1 << 24,   /* the segment asked to switch a thing the pack has
                                            nothing for ("turn on HDR" with the camera pack):
                                            the model's call to another tool was not run; the
                                            sentence says none of the tools does that */
    PIPIT_TURN_OPEN_QUESTION = 1 << 25,   /* the model called a tool that changes things for a
                                            question that asks rather than requests ("should I
                                            leave the heating on all day?"): the question went
                                            to the pack's cloud tool, or nothing ran */
    PIPIT_TURN_NEGATED = 1 << 26,         /* the segment asked for something not to be done
                                            ("don't take a photo yet"): the model's call was
                                            not run */
    PIPIT_TURN_SAID_TWICE = 1 << 27,      /* a later segment's call went back on what an
                                            earlier segment of the turn did, naming none of
                                            its values ("selfie time, flip it around" ->
                                            front, then back): it was not run */
    PIPIT_TURN_CUT = 1 << 28,             /* the utterance was longer than the model's prompt
                                            limit: only its last clauses that fit were
                                            followed, or, when no clause fits, none (the
                                            sentence asks for fewer words) */
    PIPIT_TURN_FOLLOW_UP = 1 << 19,       /* a segment only followed up the last action
                                            ("again", "a bit more", "the other way"): the
                                            harness made the call from that action, not the
                                            model (docs/agent.md) */
    PIPIT_TURN_FOREIGN_MODEL = 1 << 29,   /* a segment needed the model, and the model was
                                            trained for another pack
                                            (pipit_agent_model_notice): it was not asked and
                                            nothing was run; the sentence says there is no
                                            model for these tools */
};

struct pipit_turn {
    char *sentence;                  /* what the person reads */
    struct pipit_call_record *calls; /* n_calls entries */
    size_t n_calls;
    uint32_t flags;                   /* enum pipit_turn_flag bits */
    int32_t n_steps;                  /* segments handled */
    int32_t model_calls;              /* decodes run */
    int64_t prefill_tokens;           /* all tokens prefilled this turn (not those the cache
                                         still held: pipit_context_truncate) */
    int64_t permanent_prefill_tokens; /* ... of which permanent prefix (0 once it is cached) */
    int64_t decode_tokens;            /* tokens generated */
    int32_t cloud_requests;           /* delegations sent to the cloud endpoint */
    int64_t memory_prefill_tokens;    /* memory delta (or rebuilt memory) prefilled this turn */
    int32_t memory_lines;             /* lines in the memory after the turn */
    int32_t memory_bytes;             /* bytes of the memory (the CSO size in cso mode) */
    int32_t trimmed_lines;            /* memory lines trimmed this turn to fit the budget */
    double tracker_ms;                /* the State-Tracker's update (0 when off) */
    int32_t tracker_lines;            /* lines it added to the CSO this turn */
    int64_t tracker_kv_bytes;         /* its context's KV state (its memory cost) */
    int32_t n_permanent;              /* permanent prefix length after the turn */
    int32_t n_ephemeral_max;          /* longest ephemeral tail during the turn */
    double latency_ms;                /* the whole turn */
    double ttft_ms;                   /* first step: start to first generated token */
    char *state_json;                 /* device state after the turn, NULL without a device */
    char *model_text;                 /* the last step's raw model output (for -v) */
    int32_t n_prompt_max;             /* longest prompt the model ran on this turn: permanent
                                         prefix plus ephemeral tail (<= the prompt limit) */
    int32_t unpinned_lines;           /* pinned memory lines unpinned this turn to fit the
                                         budget (PIPIT_TURN_UNPINNED) */
    /* where latency_ms went (the agent's context; the tracker's is tracker_ms): */
    double model_ms;      /* in the model: prefill (tail, memory, prefix) and generated tokens */
    double sample_ms;     /* choosing tokens: logits read, grammar (also the text it forces),
                             sampler */
    double constraint_ms; /* ... of which the grammar constraint alone */
    bool tracker_skipped; /* the turn did not fit what the State-Tracker's context had left:
                             it read nothing this turn (docs/memory.md) */
};

/* The longest utterance pipit_agent_turn() takes, in bytes (without the NUL). */
#define PIPIT_MAX_UTTERANCE_BYTES 4095

/* Run one turn. `*out` is freed with pipit_turn_free(). Returns PIPIT_OK when a turn result
 * was produced (its flags say what stopped it), or an engine error. An utterance that is empty
 * or blank, longer than PIPIT_MAX_UTTERANCE_BYTES or not valid UTF-8 is refused whole with
 * PIPIT_ERR_INVALID_ARG (never cut, never run in part); pipit_agent_errmsg() says which. */
enum pipit_status
pipit_agent_turn(struct pipit_agent *agent, const char *utterance, struct pipit_turn **out);

void pipit_turn_free(struct pipit_turn *turn);

/* Save the session (memory, action log, device state and the KV state of the context) to
 * `path` atomically: a temp file, fsync, rename, with a version and a checksum. A crash at any
 * point leaves the previous file or the new one. Call between turns. */
enum pipit_status
pipit_agent_save(struct pipit_agent *agent, const char *path, struct pipit_error *err);

/* What a load restored. */
struct pipit_session_info {
    bool kv_restored;     /* the KV cache came from the file: the next turn prefills 0
                             permanent tokens; false: it was rebuilt from the memory (another
                             model, changed prompt), and the next turn prefills it */
    int32_t n_permanent;  /* permanent tokens after the load */
    int32_t memory_lines; /* memory lines restored */
    char note[256];       /* what happened, for people */
};

/* Resume a session saved by pipit_agent_save(). A file that is missing, truncated, damaged
 * (checksum), of another format version or malformed is refused with a message naming it
 * (PIPIT_ERR_IO / PIPIT_ERR_CORRUPT / PIPIT_ERR_STATE) and the agent is unchanged. A file from
 * another model or prompt restores the memory, log and device state and rebuilds the context
 * from the memory (info->kv_restored = false). `info` may be NULL. */
enum pipit_status pipit_agent_load(struct pipit_agent *agent,
                                   const char *path,
                                   struct pipit_session_info *info,
                                   struct pipit_error *err);

/* The turn as one JSON object (sentence, calls, flags, counters, state), freed with
 * pipit_free(): the `pipit run --json` line. */
char *pipit_turn_to_json(const struct pipit_turn *turn);

/* ============================================================================
 * cloud delegation
 *
 * `process_with_cloud_llm` hands a request the small model cannot handle to a larger model
 * behind an OpenAI-compatible chat-completions API (llama-server, vLLM, OpenAI, ...): one
 * POST {url}/v1/chat/completions with a short system message and the user's query. Nothing
 * leaves the device unless a URL is configured. See docs/cloud.md.
 *
 *     struct pipit_cloud_params cp = pipit_cloud_default_params();
 *     pipit_cloud_params_from_env(&cp);          // PIPIT_CLOUD_URL, PIPIT_CLOUD_KEY, ...
 *     struct pipit_cloud *cloud = NULL;
 *     pipit_cloud_init(&cp, &cloud, &err);
 *     struct pipit_cloud_result res = {0};
 *     pipit_cloud_ask(cloud, "what is the exposure triangle?", "not a camera control",
 *                     8000.0, &res);             // at most 8 s, retries included
 *     puts(res.ok ? res.answer : res.message);   // res.summary: one line for memory
 *     pipit_cloud_result_clear(&res);
 *     pipit_cloud_free(cloud);
 *
 * Failures are results, not statuses: res.ok is false and res.code is one of
 *   "cloud_not_configured"  no URL is set (nothing was sent)
 *   "cloud_timeout"         no answer within the timeouts or the budget
 *   "cloud_error"           HTTP error status, connection refused, truncated body, invalid
 *                           JSON, body over the size limit, no choices[0].message.content
 * with res.message naming the specifics (status code, host:port, bytes).
 *
 * Thread safety: a handle is used by one thread at a time; handles are independent. */

struct pipit_cloud;

#define PIPIT_CLOUD_SUMMARY_MAX 120 /* bytes of the distilled line, without the NUL */

struct pipit_cloud_params {
    const char *url;            /* base URL such as "http://127.0.0.1:8080" (requests go to
                                   <url>/v1/chat/completions; a URL already ending in
                                   /chat/completions is used as is); NULL or "" = not
                                   configured (default NULL). http and https only */
    const char *api_key;        /* sent as "Authorization: Bearer <key>"; NULL = none
                                   (default NULL) */
    const char *model;          /* the request's "model"; NULL = field omitted, which
                                   llama-server accepts and hosted APIs do not (default NULL) */
    const char *extra_json;     /* a JSON object merged into the request body, e.g.
                                   {"temperature": 0.2}; NULL = none (default NULL) */
    int32_t connect_timeout_ms; /* per attempt, to establish the connection (default 3000) */
    int32_t timeout_ms;         /* per attempt, the whole exchange (default 20000) */
    int32_t retries;            /* extra attempts after a timeout or HTTP 5xx, 0..5 (default
                                   2) */
    int32_t backoff_ms;         /* sleep before the first retry, doubled for each further one
                                   (default 250) */
    int32_t max_tokens;         /* the request's max_tokens, 0 = omitted (default 256) */
    size_t max_response_bytes;  /* response bodies above this are refused, 1 KiB..64 MiB
                                   (default 262144) */
    size_t max_answer_bytes;    /* the answer kept, cut on a word boundary with "...",
                                   64..65536 (default 1024) */
};

struct pipit_cloud_params pipit_cloud_default_params(void);

/* Fill url, api_key and model from the environment variables PIPIT_CLOUD_URL, PIPIT_CLOUD_KEY
 * and PIPIT_CLOUD_MODEL, each only when set and not empty. The pointers are borrowed from the
 * environment: call pipit_cloud_init() before changing it. NULL is a no-op. */
void pipit_cloud_params_from_env(struct pipit_cloud_params *params);

/* Create a client; strings are copied. `params` NULL = defaults (not configured). Errors:
 * PIPIT_ERR_INVALID_ARG (a URL that is not http(s) or too long, a key with control characters,
 * a value out of range, extra_json not an object), PIPIT_ERR_BACKEND (libcurl failed to
 * initialise), PIPIT_ERR_NOMEM. */
enum pipit_status pipit_cloud_init(const struct pipit_cloud_params *params,
                                   struct pipit_cloud **out,
                                   struct pipit_error *err);

void pipit_cloud_free(struct pipit_cloud *cloud);

/* True when a URL is configured. False for NULL. */
bool pipit_cloud_configured(const struct pipit_cloud *cloud);

/* Message of the handle's last API misuse or allocation failure. Borrowed. */
const char *pipit_cloud_errmsg(const struct pipit_cloud *cloud);

/* What one delegation produced. Zero it before the first use. */
struct pipit_cloud_result {
    bool ok;
    char *answer; /* ok: the answer, trimmed, bounded by max_answer_bytes, valid UTF-8;
                     owned (pipit_cloud_result_clear); NULL on failure */
    char summary[PIPIT_CLOUD_SUMMARY_MAX + 1]; /* ok: the distilled line for memory: the
                                                  answer's first sentence on one line */
    char code[64];       /* failure: "cloud_not_configured", "cloud_timeout" or "cloud_error" */
    char message[256];   /* failure: a lower-case phrase for the template's {error}, e.g.
                            "HTTP 500 from 127.0.0.1:8080 (3 attempts)" */
    int32_t http_status; /* the last HTTP status received, 0 when none */
    int32_t attempts;    /* requests sent (0: nothing left the device) */
    double latency_ms;   /* the whole call: attempts, backoff and parsing */
};

/* Ask the cloud model. `query` is the user's request with the context it needs (at most 8 KiB,
 * valid UTF-8); `reason` why the device cannot handle it (NULL allowed, at most 1 KiB);
 * `budget_ms` the wall-clock time left for the call: attempts, backoff and parsing all end
 * within it; <= 0 (or NaN) means no time is left (cloud_timeout, nothing sent), HUGE_VAL means
 * no limit beyond the per-attempt timeouts. `cloud` NULL behaves as not configured. `out` is
 * overwritten (zero it or clear it first). Returns PIPIT_OK when `out` holds a result (success
 * or failure); PIPIT_ERR_INVALID_ARG (query or out NULL, query too long or not UTF-8) or
 * PIPIT_ERR_NOMEM otherwise, with pipit_cloud_errmsg() saying why. */
enum pipit_status pipit_cloud_ask(struct pipit_cloud *cloud,
                                  const char *query,
                                  const char *reason,
                                  double budget_ms,
                                  struct pipit_cloud_result *out);

/* Free out->answer and zero the result. NULL is a no-op. */
void pipit_cloud_result_clear(struct pipit_cloud_result *result);

/* ============================================================================
 * fast constrained decoding (docs/fastgrammar.md)
 *
 * pipit's own decoder for the call grammars pipit_grammar_compile() emits (and any GBNF of the
 * same subset: literals, character classes, groups, alternatives, ?, *, +, {m,n}, rules
 * without recursion). A grammar is compiled to a byte automaton; each automaton state knows
 * the tokens it allows, so a constrained step costs time proportional to the allowed set, not
 * to the vocabulary, and text the grammar forces is appended without sampling
 * (pipit_sampler_forced). One pipit_fastgrammar serves one model and caches every grammar it
 * has seen; one thread at a time.
 *
 *     struct pipit_fastgrammar *fg = NULL;
 *     pipit_fastgrammar_init(model, &fg, &err);
 *     sp.grammar = pipit_grammar_call(g);
 *     sp.fast_grammar = fg;                    // instead of llama.cpp's grammar sampler
 *     pipit_sampler_init(model, &sp, &smpl, &err);
 *     for (;;) {
 *         int32_t forced[64];
 *         int32_t nf = pipit_sampler_forced(smpl, ctx, forced, 64);
 *         if (nf > 0) { pipit_context_decode_forced(ctx, forced, nf); continue; }
 *         int32_t tok = pipit_sampler_sample(smpl, ctx);  ...
 *     }
 *     ...
 *     pipit_sampler_free(smpl);
 *     pipit_fastgrammar_free(fg);              // after its samplers
 */

struct pipit_fastgrammar;

/* Index `model`'s vocabulary (borrowed; must outlive the decoder). */
enum pipit_status pipit_fastgrammar_init(const struct pipit_model *model,
                                         struct pipit_fastgrammar **out,
                                         struct pipit_error *err);

/* Saves what the automata learned to the on-disk cache (pipit_fastgrammar_save), then frees. */
void pipit_fastgrammar_free(struct pipit_fastgrammar *fg);

/* Compile `gbnf` now (a sampler compiles it on first use otherwise). PIPIT_ERR_GRAMMAR when the
 * text does not parse or lies outside the subset (err says why). */
enum pipit_status
pipit_fastgrammar_add(struct pipit_fastgrammar *fg, const char *gbnf, struct pipit_error *err);

/* Whether `gbnf` fits the fast decoder, without a model: PIPIT_OK and the size of its byte
 * automaton (*nfa_states, may be NULL), or PIPIT_ERR_GRAMMAR with the reason in `err` (a
 * sampler given such a grammar uses llama.cpp's GBNF sampler; the fast decoder logs that as a
 * warning). `pipit tools check` reports it per tool set. */
enum pipit_status
pipit_fastgrammar_check(const char *gbnf, int32_t *nfa_states, struct pipit_error *err);

/* Check `text` against `gbnf` with the fast decoder's automaton; the same contract as
 * pipit_gbnf_match(). The automaton is stricter on malformed UTF-8 (see the doc). */
enum pipit_status pipit_fastgrammar_match(struct pipit_fastgrammar *fg,
                                          const char *gbnf,
                                          const char *text,
                                          bool *prefix_ok,
                                          bool *complete);

struct pipit_fastgrammar_info {
    int32_t n_vocab;           /* tokens of the model */
    int32_t n_grammars;        /* grammars compiled so far (fast path) */
    int32_t n_unsupported;     /* grammars that fell back to llama.cpp's sampler */
    int32_t dfa_states;        /* automaton states materialized, all grammars */
    int32_t listed_states;     /* states with a cached allowed-token list */
    uint64_t index_bytes;      /* memory of the vocabulary index */
    uint64_t automaton_bytes;  /* memory of the automata */
    double t_index_ms;         /* time to build the vocabulary index */
    double t_compile_ms;       /* time compiling grammars (parse + NFA + start state, and
                                * loading their states from the on-disk cache) */
    bool index_cached;         /* the vocabulary index came from the on-disk cache */
    int32_t n_grammars_cached; /* grammars whose automaton states came from the disk cache */
};

void pipit_fastgrammar_get_info(const struct pipit_fastgrammar *fg,
                                struct pipit_fastgrammar_info *info);

/* Write the automata's materialized states (transitions, allowed-token lists, exact sets of
 * large states) to the on-disk cache, for the grammars that gained any since they were loaded
 * or last saved; pipit_fastgrammar_free() does this too. The next pipit_fastgrammar_add() of
 * the same grammar text for the same vocabulary, in any process, starts from them. Returns
 * the number of files written (0 when the cache is off or nothing changed); a failed write is
 * logged at debug level and otherwise ignored. */
int32_t pipit_fastgrammar_save(struct pipit_fastgrammar *fg);

/* Jump-forward: when the grammar allows exactly one continuation, the tokens of that text
 * (tokenized with the model's tokenizer; the last one is left to the model, since it could
 * merge with what follows, unless the text completes the grammar) are written to `tokens`
 * (capacity n_max) and accepted into the sampler. Returns their number (0: nothing forced,
 * an unconstrained or llama.cpp-grammar sampler, or a lazy grammar not yet triggered). The
 * caller appends them with pipit_context_decode_forced(); they count as
 * pipit_perf.n_forced_tokens. `ctx` supplies the previous token (for token boundaries) and
 * the counters. */
int32_t pipit_sampler_forced(struct pipit_sampler *smpl,
                             struct pipit_context *ctx,
                             int32_t *tokens,
                             int32_t n_max);

#if defined(PIPIT_BUILD) && (defined(__GNUC__) || defined(__clang__))
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* PIPIT_H */
