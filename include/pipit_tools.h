/*
 * pipit_tools.h - pipit's tooling: the test-model maker, the simulated devices, training and
 * scenario evaluation. Library libpipit-tools (pkg-config pipit-tools), built on the runtime
 * (libpipit, pipit.h, which this header includes).
 *
 * An app that runs an agent needs pipit.h and libpipit alone. This header is for the programs
 * that make and measure models: the `pipit` command (make-model, train, eval, benchmarks), the
 * tests, and anyone who wants to train or evaluate a tool set of their own. Dependencies point
 * one way: the tooling calls the runtime, the runtime never calls the tooling (the test
 * `includes` checks both the includes and the symbols, docs/design.md).
 *
 * Build against an installed pipit: `cc app.c $(pkg-config --cflags --libs pipit-tools)`.
 * The conventions are pipit.h's: statuses, `struct pipit_error`, pipit_free(), no printing.
 */
#ifndef PIPIT_TOOLS_H
#define PIPIT_TOOLS_H

#include "pipit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Only what this header declares is exported from libpipit-tools (compiled like libpipit with
 * -fvisibility=hidden and PIPIT_BUILD; the test `symbols` lists both libraries' symbols). */
#if defined(PIPIT_BUILD) && (defined(__GNUC__) || defined(__clang__))
#pragma GCC visibility push(default)
#endif

/* ============================================================================
 * test models */

/* Architecture of a tiny llama-style model with random weights (for tests and
 * benchmarks). */
struct pipit_make_model_params {
    const char *vocab_path; /* a GGUF holding tokenizer.* keys (e.g.
                               ggml-vocab-llama-spm) */
    int32_t n_embd;         /* embedding width (default 64) */
    int32_t n_layer;        /* transformer blocks (default 2) */
    int32_t n_head;         /* attention heads (default 4) */
    int32_t n_head_kv;      /* key/value heads (default 4) */
    int32_t n_ff;           /* feed-forward width (default 128) */
    int32_t n_ctx_train;    /* llama.context_length (default 2048) */
    uint64_t seed;          /* weight RNG seed (default 1) */
    float init_std;         /* weights ~ N(0, init_std) (default 0.5: varied output) */
    int32_t weight_type;    /* enum pipit_weight_type of the matrices (the norms stay F32;
                               default PIPIT_WEIGHTS_F32). The same seed gives the same
                               weights in every type (rounded or quantized from the same F32
                               draws); Q8_0 and Q4_0 need n_embd and n_ff that divide by 32 */
    float rope_base;        /* llama.rope.freq_base (default 10000) */
};

/* A named shape: the hyperparameters of a common small model, for random models of real
 * cost (docs/engine.md, "Models of real shape"). The llama graph is used whatever the
 * original's (no biases, no head_dim other than n_embd / n_head). */
struct pipit_model_shape {
    const char *name;    /* e.g. "smollm2-135m" */
    const char *like;    /* the model it copies, for people */
    const char *vocab;   /* the tokenizer: a vocab name under llama.cpp's models/ */
    int32_t n_embd;      /* width */
    int32_t n_layer;     /* blocks */
    int32_t n_head;      /* attention heads */
    int32_t n_head_kv;   /* key/value heads */
    int32_t n_ff;        /* feed-forward width */
    int32_t n_ctx_train; /* the original's trained context length */
    int64_t n_vocab;     /* the original's vocabulary size (the tokenizer's may differ) */
    float rope_base;     /* the original's rope.freq_base */
    int64_t n_params;    /* parameters with this shape and the original's vocabulary, tied
                            embeddings */
};

/* The named shapes, smallest first: *n receives how many. Static, never NULL. */
const struct pipit_model_shape *pipit_model_shapes(size_t *n);

/* The shape called `name`, NULL when none is. */
const struct pipit_model_shape *pipit_model_shape_find(const char *name);

/* Set params' sizes (width, blocks, heads, feed-forward, trained context, rope base) from
 * `shape`, and init_std to 0.02 (a trained model's scale, so a random model costs what the real
 * one does); vocab_path, seed and weight_type are left as they are. */
void pipit_make_model_apply_shape(struct pipit_make_model_params *params,
                                  const struct pipit_model_shape *shape);

struct pipit_make_model_params pipit_make_model_default_params(void);

/* Write a llama-architecture GGUF with random weights (params->weight_type) and the tokenizer
 * copied from params->vocab_path. The write is atomic (temp file + rename). */
enum pipit_status pipit_make_model(const struct pipit_make_model_params *params,
                                   const char *out_path,
                                   struct pipit_error *err);

struct pipit_make_lora_params {
    const char *model_path; /* the base GGUF the adapter is for */
    int32_t rank;           /* LoRA rank r (default 4) */
    float alpha;            /* adapter.lora.alpha (default 4) */
    uint64_t seed;          /* RNG seed (default 7) */
    float init_std;         /* A, B ~ N(0, init_std) (default 0.1) */
};

struct pipit_make_lora_params pipit_make_lora_default_params(void);

/* Write a LoRA adapter GGUF for the attention q/v and ffn_up weights of every
 * block. */
enum pipit_status pipit_make_lora(const struct pipit_make_lora_params *params,
                                  const char *out_path,
                                  struct pipit_error *err);

/* ============================================================================
 * simulated devices
 *
 * pipit's simulated camera and phone (docs/camera.md, docs/phone.md) for tools/camera.json and
 * tools/phone.json: they take their ranges and enums from the tool set (a spec with another
 * zoom range gets a camera with that range) and keep the rules a declaration cannot say (no
 * flash on the front camera, settings locked while recording, contact and message IDs). They
 * are what the evaluation, the training data and `pipit run` act on; an app's agent acts on
 * its own state (pipit_device_from_app()) or its pack's (pipit_device_from_pack()).
 */

/* Create a device. `kind`:
 *   "camera", "phone"  pipit's simulated camera or phone (`tools` may be NULL)
 *   "pack"             the generic device of `tools`' declared state (docs/pack.md); the pack's
 *                      own name (e.g. "home") means the same
 *   NULL               chosen from `tools`: a pack named "camera" or "phone" with a declared
 *                      state -> that simulator; any other pack with a declared state -> "pack";
 *                      without a declared state, the simulator that runs every tool of the set
 *                      (besides undo and cloud delegation) -> it; else no device: *out is NULL
 *                      and the status PIPIT_OK (the agent then runs handlers only)
 * `init_json` (NULL = defaults) is a JSON object of state keys the device starts with, e.g.
 * {"recording": true}, applied all-or-nothing. The generic device reads `tools` as long as it
 * lives (the tool set must outlive it); the simulators read it at creation only. Free with
 * pipit_device_free().
 * Errors: PIPIT_ERR_INVALID_ARG (unknown kind, "pack" for a tool set without a declared state,
 * NULL out), PIPIT_ERR_JSON (init_json is not a JSON object, or names a key or value the
 * device refuses; err->text names it), PIPIT_ERR_NOMEM. */
enum pipit_status pipit_device_init(const char *kind,
                                    const struct pipit_toolset *tools,
                                    const char *init_json,
                                    struct pipit_device **out,
                                    struct pipit_error *err);

/* ============================================================================
 * training: pipit's own tiny model for a fixed tool set (train/, docs/training.md)
 *
 * pipit makes the model it ships: a seeded generator writes camera commands and their answers
 * in the prompt format of docs/prompt.md, a vocabulary is built from that text, and a small
 * llama (the forward graph written in ggml, optimized with ggml_opt's AdamW, loss on the
 * answer tokens only) is trained and written as a GGUF that libllama runs.
 *
 *     struct pipit_dataset *ds = NULL;
 *     struct pipit_datagen_params dp = pipit_datagen_default_params();
 *     pipit_datagen_camera(&dp, &ds, &err);
 *     pipit_vocab_build(ds, "camera", 1024, "vocab.gguf", &err);
 *     struct pipit_train_params tp = pipit_train_default_params();
 *     tp.vocab_path = "vocab.gguf";
 *     pipit_train(&tp, ds, "model.gguf", &result, &err);
 *     pipit_train_evaluate("model.gguf", ds, PIPIT_SPLIT_VALID, 0, 1, NULL, NULL, &ev, &err);
 *     pipit_dataset_free(ds);
 *
 * Training runs on the CPU backend with exactly params->n_threads threads (ggml threads spin:
 * never ask for more than the free cores). Nothing here prints; progress goes to a callback. */

/* A generated data set: a training split and a validation split that share no phrasing
 * template (generalisation is measured on phrasings the model never saw). Read-only. */
struct pipit_dataset;

enum pipit_split {
    PIPIT_SPLIT_TRAIN = 0,
    PIPIT_SPLIT_VALID = 1, /* held out by phrasing template */
};

struct pipit_overlap_index; /* see "overlap" below */

struct pipit_datagen_params {
    uint64_t seed;           /* generator seed: the same seed gives the same bytes (default 1) */
    int32_t n_train;         /* examples drawn from the training templates (default 200000) */
    int32_t n_valid;         /* examples drawn from the held-out templates (default 1000) */
    int32_t tracker_percent; /* share of State-Tracker examples, 0..100 (default 8) */
    const struct pipit_overlap_index *exclude; /* texts no example may say (verbatim or near,
                                                  pipit_overlap_find()): a drawn example that
                                                  does is drawn again; NULL = none (default) */
};

struct pipit_datagen_params pipit_datagen_default_params(void);

/* One example, borrowed from its data set. */
struct pipit_example {
    const char *memory;    /* memory (CSO) lines before the state line, each ending in "\n";
                              "" for none */
    const char *state;     /* device state line: "zoom=1 flash=off facing=back recording=no ..." */
    const char *utterance; /* what the user typed, or one router segment of it */
    const char *output;    /* the expected answer: "<call>set_zoom(level=2)" or plain text */
    const char *category;  /* "zoom", "flash", "relative", "cloud", "chat", ... */
    int32_t template_id;   /* the phrasing template it came from */
    bool tracker;          /* a State-Tracker example: `utterance` holds the turn's messages
                              ("user: ...\nassistant: ...\ntool: ...\n"), `memory` the CSO,
                              `state` is empty, `output` is "key: value\n" or "# NO_UPDATE" */
    const char *system;    /* the system text of its prompt when the data set holds several
                              packs' data (pipit_dataset_append); NULL = the one the caller
                              gives pipit_train_prompt_example */
};

/* Add every example of `src` (both splits) to `dst`, each remembering `system` as its
 * prompt's system text: one data set for several packs, as a base for their adapters is
 * trained on (docs/training.md, "Adapters"). The two are interleaved in proportion, so the
 * first examples of each split (what a vocabulary is built from, what an evaluation of the
 * first N reads) hold every pack's share. Both must come from the same generator family
 * (pipit_datagen_pack); `src` is left as it is. Errors: PIPIT_ERR_INVALID_ARG (NULL, or
 * another generator's categories), PIPIT_ERR_NOMEM. */
enum pipit_status pipit_dataset_append(struct pipit_dataset *dst,
                                       const struct pipit_dataset *src,
                                       const char *system,
                                       struct pipit_error *err);

/* Give every example of `ds` that has no system text of its own `system` (so the prompts stay
 * the pack's whatever model is evaluated on them). Errors: PIPIT_ERR_INVALID_ARG (NULL),
 * PIPIT_ERR_NOMEM. */
enum pipit_status
pipit_dataset_set_system(struct pipit_dataset *ds, const char *system, struct pipit_error *err);

/* Generate the camera tool pack's data set (tools/camera.json, docs/training.md). Errors:
 * PIPIT_ERR_INVALID_ARG (sizes outside 1..10,000,000), PIPIT_ERR_NOMEM. */
enum pipit_status pipit_datagen_camera(const struct pipit_datagen_params *params,
                                       struct pipit_dataset **out,
                                       struct pipit_error *err);

/* Generate the data set of any pack (a tool set with a "pipit" block and a declared state,
 * docs/toolspec.md "Packs") from its spec: tool names, descriptions and schemas, the declared
 * state and its words, effects, per-tool examples and the cloud tool, plus a generic phrase
 * bank (docs/training.md, "Any pack"). tracker_percent is ignored (no State-Tracker examples).
 * Errors: PIPIT_ERR_INVALID_ARG (no pack, no declared state, sizes outside 1..10,000,000, no
 * tool the generator can phrase), PIPIT_ERR_NOMEM. */
enum pipit_status pipit_datagen_pack(const struct pipit_toolset *tools,
                                     const struct pipit_datagen_params *params,
                                     struct pipit_dataset **out,
                                     struct pipit_error *err);

/* The system text a model for this pack is trained with (stored as pipit.prompt.system): the
 * pack's "system", else its name; NULL without a pack. Borrowed from the tool set. */
const char *pipit_datagen_pack_system(const struct pipit_toolset *tools);

/* What `pipit train --tools` reads from this pack and which example categories it can write
 * for it (and why not the others), as lines of text; `pipit tools check` prints it. Free with
 * free(). NULL with `err` set for a plain tool set, a pack the generator cannot phrase, or
 * PIPIT_ERR_NOMEM. */
char *pipit_datagen_pack_describe(const struct pipit_toolset *tools, struct pipit_error *err);

/* Notes for a pack's author, one "  note: ..." line each, or NULL when there are none (free
 * with free()): an example of a tool that needs no argument whose first word becomes that
 * tool's verb to the agent although the word also names another tool or a state key the tool
 * does not change ("machine status" for a status query beside a "machine" power key). `pipit
 * tools check` prints them. */
char *pipit_pack_notes(const struct pipit_toolset *tools);

void pipit_dataset_free(struct pipit_dataset *ds);

int32_t pipit_dataset_size(const struct pipit_dataset *ds, enum pipit_split split);

/* Example `i` of `split` into *ex; false when out of range. */
bool pipit_dataset_get(const struct pipit_dataset *ds,
                       enum pipit_split split,
                       int32_t i,
                       struct pipit_example *ex);

/* The prompt of docs/prompt.md for a model with `pipit.prompt.tools = "none"`, without BOS:
 * "{system}\n{memory}State: {state}\nUser: {utterance}\nAssistant: " (`memory` is zero or more
 * lines, each ending in "\n"; NULL = none). Freed with pipit_free(); NULL when out of memory. */
char *pipit_train_prompt(const char *system,
                         const char *memory,
                         const char *state,
                         const char *utterance);

/* The prompt of either role for `ex`: pipit_train_prompt(system, ...) for an executor example,
 * the tracker prompt for a State-Tracker example ("tracker\n{CSO}New Messages:\n{messages}New
 * Lines to Append:\n", PIPIT_TRACKER_ROLE in pipit.h). Freed with pipit_free(); NULL when out
 * of memory. */
char *pipit_train_prompt_example(const char *system, const struct pipit_example *ex);

/* Build a SentencePiece-style ("llama") vocabulary of `n_vocab` tokens from the data set's
 * text (prompts with `system`, and answers): <unk> <s> </s>, the 256 byte-fallback tokens
 * <0x00>..<0xFF>, the user-defined token "<call>", then characters and BPE merges (score =
 * -merge rank). Pieces never contain a newline and only start with "▁", so text tokenized
 * line by line gives the same tokens as the whole; no space prefix is added. Writes a GGUF
 * holding only tokenizer.* keys (usable as a vocab_path anywhere). Errors:
 * PIPIT_ERR_INVALID_ARG (n_vocab outside 300..32000), PIPIT_ERR_IO, PIPIT_ERR_NOMEM. */
enum pipit_status pipit_vocab_build(const struct pipit_dataset *ds,
                                    const char *system,
                                    int32_t n_vocab,
                                    const char *out_path,
                                    struct pipit_error *err);

/* Progress of a training run, reported every `progress_every` steps and at the end. */
struct pipit_train_progress {
    int64_t step;      /* optimizer steps done */
    int64_t n_steps;   /* steps planned */
    float loss;        /* mean cross-entropy per answer token over the last report period */
    float lr;          /* learning rate of the last step */
    double tok_per_s;  /* tokens (prompt + answer, padding excluded) per second so far */
    double elapsed_s;  /* seconds since training started */
    double eta_s;      /* estimated seconds left */
    bool checkpointed; /* a checkpoint was written at this step */
};

typedef void (*pipit_train_progress_fn)(const struct pipit_train_progress *p, void *user_data);

/* Storage of the exported model's matrices (norm weights stay F32; checkpoints are always F32,
 * so they can be resumed). The trainer writes F32, F16 and Q8_0; pipit_make_model() all four. */
enum pipit_weight_type {
    PIPIT_WEIGHTS_F32 = 0,
    PIPIT_WEIGHTS_F16 = 1,
    PIPIT_WEIGHTS_Q8_0 = 2,
    PIPIT_WEIGHTS_Q4_0 = 3,
};

struct pipit_train_params {
    const char *vocab_path;   /* GGUF with tokenizer.* keys (pipit_vocab_build or llama.cpp's) */
    const char *system;       /* system text, stored as pipit.prompt.system (default "camera") */
    int32_t n_embd;           /* embedding width (default 192) */
    int32_t n_layer;          /* transformer blocks (default 3) */
    int32_t n_head;           /* attention heads (default 4) */
    int32_t n_ff;             /* SwiGLU width (default 512) */
    int32_t n_ctx;            /* tokens per training row; examples are packed into rows (each
                                 attends only to itself, positions restart at 0); an example
                                 longer than a row is skipped (default 128) */
    int32_t n_answer;         /* answer slots per row (answer tokens + EOS of its examples);
                                 an example with a longer answer is skipped (default 64) */
    int32_t n_batch;          /* rows per optimizer step (default 8) */
    int64_t n_steps;          /* optimizer steps (default 8000) */
    double max_seconds;       /* training time budget, 0 = no limit: the run stops after it, and
                                 the cosine decay follows the budget (the later of the step
                                 fraction and the time fraction), so a run cut by time ends
                                 on a decayed learning rate, not in mid-schedule */
    float lr;                 /* peak AdamW learning rate (default 4e-4) */
    float lr_min;             /* final learning rate of the cosine decay (default 4e-5) */
    int32_t warmup;           /* linear warm-up steps (default 200) */
    float weight_decay;       /* AdamW decoupled weight decay (default 0.01) */
    uint64_t seed;            /* weight init and shuffling (default 1) */
    int32_t n_threads;        /* CPU threads, >= 1 (default 1) */
    const char *checkpoint;   /* write the model (F32 GGUF) here every checkpoint_every steps;
                                 NULL = no checkpoints */
    int64_t checkpoint_every; /* (default 500) */
    const char *resume;       /* start from the weights and step of this checkpoint (the AdamW
                                 moments start from zero again); NULL = fresh weights */
    const char *init;         /* start from the weights of this model (a checkpoint or any
                                 exported pipit model, F32, F16 or Q8_0: dequantized) at step 0,
                                 the schedule from its start: fine-tuning; it needs the same
                                 shape and vocabulary. NULL = fresh weights (or `resume`) */
    pipit_train_progress_fn progress; /* NULL = silent */
    void *progress_user_data;
    int32_t progress_every;             /* steps between reports (default 50) */
    enum pipit_weight_type weight_type; /* the exported model's matrices (default F32) */
    /* Polled once per step, from the training thread: return true to stop cleanly (the
     * checkpoint, if any, and the model are written as after the last step). NULL = never. */
    bool (*should_stop)(void *user_data);
    void *should_stop_user_data;
    const char *pack_name; /* recorded as pipit.pack.name when not NULL (pipit train --tools) */
    const char *pack_hash; /* recorded as pipit.pack.hash (pipit_toolset_content_hash) */
    const char *systems;   /* a model trained on several packs' data (pipit_dataset_append):
                              their system texts, one a line, recorded as pipit.prompt.systems;
                              the agent prompts it with its tool set's (NULL = one pack) */
    /* LoRA: train an adapter on a frozen base instead of a new model. The base is any GGUF of
     * libllama's "llama" architecture the trainer's graph computes (grouped-query attention,
     * tied or untied output, any vocabulary; no biases, rope scaling or experts; its matrices
     * F32, F16, Q4_0..Q8_0 or K-quants, kept as stored). Its tokenizer replaces vocab_path, its
     * shape replaces n_embd..n_ff, and out_path receives an adapter GGUF that
     * llama_adapter_lora_init (pipit_adapter_load) loads, with the prompt metadata pipit's
     * agent reads (docs/training.md, "Adapters"). NULL = a new model. */
    const char *base;
    int32_t lora_rank;        /* r (default 8) */
    float lora_alpha;         /* adapter.lora.alpha; the update is scaled by alpha / r
                                 (default 16) */
    const char *lora_targets; /* comma list of attn_q, attn_k, attn_v, attn_output, ffn_gate,
                                 ffn_up, ffn_down, output (untied only), or "all"; NULL = the
                                 seven matrices of every block */
    /* The backward of every matrix product as ggml builds it (out_prod, two to four times
     * slower on a CPU) instead of the trainer's blocked products: the same arithmetic in
     * another order, for checking one against the other (default false). */
    bool reference_backward;
};

struct pipit_train_params pipit_train_default_params(void);

struct pipit_train_result {
    int64_t steps;        /* optimizer steps done (including resumed ones) */
    int64_t tokens;       /* tokens trained on in this run (padding excluded) */
    double seconds;       /* wall time of the training loop */
    double tok_per_s;     /* tokens / seconds */
    float loss_first;     /* mean answer-token loss of the first report period */
    float loss_last;      /* ... and of the last */
    int32_t n_vocab;      /* vocabulary size */
    int32_t n_skipped;    /* training examples longer than n_ctx / n_answer, not used */
    int32_t n_trimmed;    /* training examples that fit n_ctx only without their oldest memory
                             lines (trimmed as the agent trims) */
    uint64_t n_params;    /* parameters */
    double tokens_per_ex; /* mean tokens per used training example */
    int32_t stopped;      /* 0 = all n_steps done, 1 = the time budget ended it, 2 = should_stop */
};

/* Train a llama model on the data set's training split and write it to `out_path` (GGUF with
 * params->weight_type matrices, atomic) with pipit.prompt.system and pipit.prompt.tools =
 * "none". `result` may be NULL.
 * Errors: PIPIT_ERR_INVALID_ARG, PIPIT_ERR_IO, PIPIT_ERR_CORRUPT (vocab or checkpoint),
 * PIPIT_ERR_BACKEND (no CPU backend), PIPIT_ERR_TOKENIZE, PIPIT_ERR_NOMEM. */
enum pipit_status pipit_train(const struct pipit_train_params *params,
                              const struct pipit_dataset *ds,
                              const char *out_path,
                              struct pipit_train_result *result,
                              struct pipit_error *err);

/* Rewrite the GGUF model `in_path` to `out_path` (atomic) with its F32 matrices stored as
 * `type` (F16 or Q8_0; rows whose length is not a multiple of the block stay F32), every
 * other tensor and every metadata key as they are: the export of pipit_train() applied to
 * a finished F32 model. `general.file_type` is set to match the matrices written. When
 * `n_ctx_trained` > 0 and the model has no `pipit.train.n_ctx` (models made before pipit
 * recorded it), that key is written with this value: the row length the model was trained
 * on, which the agent takes as its prompt limit; 0 adds nothing. Errors: PIPIT_ERR_INVALID_ARG,
 * PIPIT_ERR_CORRUPT (not a GGUF, or a tensor without data), PIPIT_ERR_IO, PIPIT_ERR_NOMEM. */
enum pipit_status pipit_train_convert(const char *in_path,
                                      const char *out_path,
                                      enum pipit_weight_type type,
                                      int32_t n_ctx_trained,
                                      struct pipit_error *err);

#define PIPIT_TRAIN_EVAL_MAX_CATEGORIES 32

/* Accuracy of greedy answers, overall and per category. */
struct pipit_train_eval_result {
    int32_t n;       /* examples evaluated */
    int32_t n_exact; /* answers identical to the expected output */
    int32_t n_kind;  /* right kind of answer: the same tool name for a call, or plain text when
                        plain text was expected (arguments or wording may still differ) */
    int32_t n_categories;
    struct {
        char name[24];
        int32_t n;
        int32_t n_exact;
        int32_t n_kind;
    } categories[PIPIT_TRAIN_EVAL_MAX_CATEGORIES];
    double seconds; /* wall time */
};

/* Called for every wrong answer: the example and what the model wrote (borrowed). */
typedef void (*pipit_train_eval_miss_fn)(const struct pipit_example *ex,
                                         const char *got,
                                         void *user_data);

/* Load `model_path` through libllama and greedy-decode (at most 64 tokens) every example of
 * `split` (the first `max_examples`; 0 = all): BOS, the prompt with the model's
 * pipit.prompt.system, then the answer up to end of generation. Errors: those of
 * pipit_model_load and pipit_context_init, PIPIT_ERR_TOKENIZE, PIPIT_ERR_DECODE. */
enum pipit_status pipit_train_evaluate(const char *model_path,
                                       const struct pipit_dataset *ds,
                                       enum pipit_split split,
                                       int32_t max_examples,
                                       int32_t n_threads,
                                       pipit_train_eval_miss_fn miss,
                                       void *user_data,
                                       struct pipit_train_eval_result *result,
                                       struct pipit_error *err);

/* pipit_train_evaluate on the model at `model_path` with the LoRA adapter at `adapter_path`
 * applied at scale 1 (NULL = none); the prompt's system text and trained length are the
 * adapter's when it records them. Errors: also PIPIT_ERR_ADAPTER. */
enum pipit_status pipit_train_evaluate_adapter(const char *model_path,
                                               const char *adapter_path,
                                               const struct pipit_dataset *ds,
                                               enum pipit_split split,
                                               int32_t max_examples,
                                               int32_t n_threads,
                                               pipit_train_eval_miss_fn miss,
                                               void *user_data,
                                               struct pipit_train_eval_result *result,
                                               struct pipit_error *err);

/* ----------------------------------------------------------------------------
 * overlap: does a scenario set say what the training data says? (docs/training.md, "Overlap")
 *
 * A development set measures generalisation only if the model never trained on its sentences.
 * An overlap index holds every utterance of a data set's training split (executor examples and
 * the user lines of State-Tracker examples), folded two ways:
 *
 *   verbatim  ASCII case, punctuation and whitespace folded ("Zoom in, 2x!" = "zoom in 2x")
 *   near      also numbers written as words or digits ("two" = "2", "one and a half" = "1.5"
 *             = "1.50", "2x" = "2 x") and politeness/filler words at either end ("please",
 *             "can you", "hey", "ok", "thanks", "for me", "real quick", ...) dropped
 *
 *     struct pipit_overlap_index *idx = NULL;
 *     pipit_overlap_index_init(ds, &idx, &err);
 *     struct pipit_eval_device cam = {"camera", camera_tools};  // the scenarios' tool set
 *     pipit_overlap_check_file(idx, "eval/camera.jsonl", &cam, 1, on_overlap, NULL, &counts,
 *                              &err);
 *     pipit_overlap_index_free(idx);
 */
struct pipit_overlap_index;

enum pipit_overlap_kind {
    PIPIT_OVERLAP_NONE = 0,
    PIPIT_OVERLAP_VERBATIM = 1, /* equal after folding case, punctuation and whitespace */
    PIPIT_OVERLAP_NEAR = 2,     /* equal only after also folding numbers and filler words */
};

/* Index the training split of `ds` (the index copies what it needs: `ds` may be freed after).
 * Errors: PIPIT_ERR_INVALID_ARG (NULL ds or out), PIPIT_ERR_NOMEM. */
enum pipit_status pipit_overlap_index_init(const struct pipit_dataset *ds,
                                           struct pipit_overlap_index **out,
                                           struct pipit_error *err);

/* An empty index, to fill with pipit_overlap_index_add_file(): texts a data set must not hold
 * (pipit_datagen_params.exclude). Errors: PIPIT_ERR_INVALID_ARG, PIPIT_ERR_NOMEM. */
enum pipit_status pipit_overlap_index_empty(struct pipit_overlap_index **out,
                                            struct pipit_error *err);

/* Add every `turns[].user` of a scenario file, and each router segment of a compound one, to
 * the index: the same reading, splitting (`devices`, as for pipit_overlap_check_file()) and
 * errors as pipit_overlap_check_file(). */
struct pipit_eval_device;
enum pipit_status pipit_overlap_index_add_file(struct pipit_overlap_index *idx,
                                               const char *path,
                                               const struct pipit_eval_device *devices,
                                               size_t n_devices,
                                               struct pipit_error *err);

/* NULL is a no-op. */
void pipit_overlap_index_free(struct pipit_overlap_index *idx);

/* Distinct verbatim-folded training utterances in the index. */
int32_t pipit_overlap_index_size(const struct pipit_overlap_index *idx);

/* Is `text` in the training data? *train (may be NULL) receives a training utterance it
 * matches, borrowed from the index, or NULL. Verbatim wins over near. NULL idx or text, and a
 * text that folds to nothing (only punctuation), give PIPIT_OVERLAP_NONE. */
enum pipit_overlap_kind
pipit_overlap_find(const struct pipit_overlap_index *idx, const char *text, const char **train);

/* The folded form of `text` that pipit_overlap_find() compares (`near` false: the verbatim
 * folding; true: the near one), for reports and tests. Freed with pipit_free(); NULL when out of
 * memory or `text` is NULL. */
char *pipit_overlap_fold(const char *text, bool near);

/* One scenario utterance, or one router segment of a compound utterance, that the training data
 * holds. Every pointer is borrowed for the duration of the callback. */
struct pipit_overlap {
    const char *file;   /* the scenario file's path */
    int32_t line;       /* 1-based line of the scenario */
    const char *id;     /* the scenario's "id" */
    int32_t turn;       /* 0-based turn index */
    int32_t segment;    /* 0-based router segment, -1 for the whole utterance */
    int32_t n_segments; /* router segments of the utterance (1: a single command) */
    const char *text;   /* the utterance or the segment */
    enum pipit_overlap_kind kind;
    const char *train; /* the training utterance it matches */
};

typedef void (*pipit_overlap_fn)(const struct pipit_overlap *overlap, void *user_data);

struct pipit_overlap_counts {
    int32_t n_utterances; /* turns checked */
    int32_t n_utterances_overlap;
    int32_t n_segments; /* what the model would see: one per single-command turn, one per router
                           segment of a compound (router_split, at most 3, the agent's default
                           max_steps) */
    int32_t n_segments_overlap;
    int32_t n_verbatim; /* findings reported, by kind (utterances and compound segments) */
    int32_t n_near;
};

struct pipit_eval_device; /* below, with the evaluation */

/* Check every `turns[].user` of a scenario file (JSON Lines, docs/eval.md; only `id`,
 * `device` and `turns[].user` are read, blank and `#` lines skipped) and each router segment of
 * a compound one against the index. A compound is split the way the agent splits it: by the
 * router of the tool set of the scenario's `device` (`devices[k].tools` where
 * `devices[k].device` is that name; a scenario whose device is not among them is an error,
 * PIPIT_ERR_INVALID_ARG); with no devices (NULL, 0) by the generic lexicon only. `fn` (may be NULL)
 * is called for every overlapping utterance, and for every overlapping segment of a compound, in
 * file order. *out (may be NULL) is written on success; the counts add up over several files when
 * the caller zeroes it once. Errors: PIPIT_ERR_IO (cannot read), PIPIT_ERR_JSON (a line that is not
 * JSON, or no string "id" or "turns[].user"; the message names file:line and the JSON path),
 * PIPIT_ERR_INVALID_ARG (NULL idx or path), PIPIT_ERR_NOMEM. */
enum pipit_status pipit_overlap_check_file(const struct pipit_overlap_index *idx,
                                           const char *path,
                                           const struct pipit_eval_device *devices,
                                           size_t n_devices,
                                           pipit_overlap_fn fn,
                                           void *user_data,
                                           struct pipit_overlap_counts *out,
                                           struct pipit_error *err);

/* ============================================================================
 * evaluation: scenario sets, the ablation configurations, reports (docs/eval.md)
 *
 * A scenario set is a JSON Lines file, one scenario per line: a device, its initial state,
 * and turns with what the user says, the tool calls the agent should make, the device state
 * after the turn and words the sentence must contain; optional injected tool failures. Every
 * scenario runs in every configuration with a fresh agent; the report gives tool-call
 * precision/recall/F1, state and reply accuracy, the valid-call rate, model calls per
 * utterance, prefilled and context tokens per turn and latency, overall and per category.
 *
 *     struct pipit_scenarios *set = NULL;
 *     pipit_scenarios_load_file("eval/camera.jsonl", &set, &err);  // "FILE:LINE: $.path: ..."
 *     struct pipit_eval_device dev = {"camera", camera_tools};
 *     pipit_scenarios_check(set, &dev, 1, NULL, NULL, &err);       // strict: vs the device
 *     struct pipit_eval_config cfg[2];
 *     pipit_eval_config_find("baseline", &cfg[0]);
 *     pipit_eval_config_find("combined", &cfg[1]);
 *     struct pipit_eval_params ep = pipit_eval_default_params();
 *     ep.agent.n_threads = 1;
 *     ep.devices = &dev;
 *     ep.n_devices = 1;
 *     struct pipit_eval_report *rep = NULL;
 *     pipit_eval_run(model, set, cfg, 2, &ep, &rep, &err);
 *     struct pipit_eval_metrics m;
 *     pipit_eval_report_metrics(rep, 1, NULL, &m);                 // combined, overall
 *     char *md = pipit_eval_report_markdown(rep);                  // pipit_free
 *     pipit_eval_report_free(rep);
 *     pipit_scenarios_free(set);
 *
 * Thread safety: sets and reports are read-only once built and may be shared; a run uses the
 * model like any agent does (one thread). */

#define PIPIT_SCENARIO_MAX_TURNS 64 /* turns per scenario */

/* A loaded scenario set. Read-only. */
struct pipit_scenarios;

/* Load a JSON Lines scenario file (blank lines and lines starting with '#' are skipped).
 * Errors: PIPIT_ERR_IO (err->text names the file), PIPIT_ERR_JSON with err->line and a message
 * "FILE:LINE: JSON.PATH: what is wrong", e.g. "eval/camera.jsonl:12: $.turns[1].expect[0].args:
 * expected an object", PIPIT_ERR_NOMEM. On failure *out is NULL. */
enum pipit_status
pipit_scenarios_load_file(const char *path, struct pipit_scenarios **out, struct pipit_error *err);

/* The same from `len` bytes of `text`; `name` (NULL: "<string>") stands for the file name. */
enum pipit_status pipit_scenarios_load_string(const char *text,
                                              size_t len,
                                              const char *name,
                                              struct pipit_scenarios **out,
                                              struct pipit_error *err);

void pipit_scenarios_free(struct pipit_scenarios *set);

size_t pipit_scenarios_count(const struct pipit_scenarios *set);

/* Facts about scenario `index`, borrowed for the set's lifetime; NULL / 0 when out of range. */
const char *pipit_scenarios_id(const struct pipit_scenarios *set, size_t index);
const char *pipit_scenarios_category(const struct pipit_scenarios *set, size_t index);
const char *pipit_scenarios_device(const struct pipit_scenarios *set, size_t index);
int32_t pipit_scenarios_n_turns(const struct pipit_scenarios *set, size_t index);

/* The tool set a device runs with ("camera" -> tools/camera.json, loaded by the caller). Each
 * scenario's device is made by pipit_device_init(device, tools, init) ("devices" above). */
struct pipit_eval_device {
    const char *device;                /* "camera", "phone", or a pack's name ("home") */
    const struct pipit_toolset *tools; /* borrowed */
};

/* Called with each finding of the oracle, one line: "FILE:LINE: $.json.path: what". */
typedef void (*pipit_scenarios_finding_fn)(const char *message, void *user_data);

struct pipit_scenarios_check_params {
    bool strict;                           /* refuse on the first finding (PIPIT_ERR_JSON) */
    pipit_scenarios_finding_fn on_finding; /* NULL = findings are only counted */
    void *user_data;
};

/* Not strict, no callback. */
struct pipit_scenarios_check_params pipit_scenarios_check_default_params(void);

/* Check every scenario against its device without a model (the oracle). The oracle never asks
 * the router anything: it replays each turn's expected calls on the simulated device, from
 * `init`, with the injected failures, and reverts its own action log on a turn marked
 * `"undo": true`. An expected call whose arguments are out of range (a number outside its range
 * or numeric enum, a string too long) is legal: validation refuses it, so the state is
 * unchanged and nothing is logged; the device may refuse a call too.
 *
 * Errors (always, whatever `strict`): a device without a tool set or unknown, an `init` the
 * device refuses, an unknown tool, an argument the tool does not have, a value of the wrong JSON
 * type or a string outside a string enum (no grammar-constrained call can be these), a
 * `contains` key that is not a string argument. They return PIPIT_ERR_JSON (or
 * PIPIT_ERR_INVALID_ARG) naming the file, line and JSON path.
 *
 * Findings: a turn whose `state` the expected calls do not reproduce, an undo the device
 * refuses. Each goes to params->on_finding and is counted in *n_findings (may be NULL); with
 * params->strict the check stops at the first one with PIPIT_ERR_JSON and its message in err,
 * otherwise it goes on (from the turn's stated state) and returns PIPIT_OK. pipit_eval_run()
 * skips the state check of a turn with a finding. `params` NULL = strict, no callback. */
enum pipit_status pipit_scenarios_check(const struct pipit_scenarios *set,
                                        const struct pipit_eval_device *devices,
                                        size_t n_devices,
                                        const struct pipit_scenarios_check_params *params,
                                        size_t *n_findings,
                                        struct pipit_error *err);

/* One agent configuration of the ablation (the paper's Table 1). */
struct pipit_eval_config {
    char name[32];        /* e.g. "combined" */
    int32_t tools_format; /* enum pipit_toolspec_format */
    int32_t memory;       /* enum pipit_memory_mode */
    bool grammar;         /* grammar-constrained calls */
};

/* The standard configurations, in order:
 *   baseline            OpenAPI schemas, full history, no grammar (the paper's reference)
 *   compact             compact schemas, full history, grammar
 *   jit                 JIT (names first, then the tool's schema), full history, grammar
 *   cso                 compact schemas, Context State Object memory, grammar
 *   combined            JIT + CSO, grammar
 * and the same five with the grammar switched the other way: "baseline-grammar",
 * "compact-nogrammar", "jit-nogrammar", "cso-nogrammar", "combined-nogrammar". */
size_t pipit_eval_config_count(void);

/* Standard configuration `index` into *out; false when out of range. */
bool pipit_eval_config_get(size_t index, struct pipit_eval_config *out);

/* A standard configuration by name. Errors: PIPIT_ERR_INVALID_ARG (unknown name). */
enum pipit_status pipit_eval_config_find(const char *name, struct pipit_eval_config *out);

/* Called after each scenario of each configuration. */
typedef void (*pipit_eval_progress_fn)(const char *config,
                                       size_t config_index,
                                       size_t n_configs,
                                       size_t scenarios_done,
                                       size_t n_scenarios,
                                       void *user_data);

struct pipit_eval_params {
    struct pipit_agent_params agent;         /* the base of every agent (n_threads, n_ctx, budget,
                                                syntax, ...); device (a new one per scenario,
                                                from its init), tools_format, memory and grammar
                                                are set per scenario and config (default
                                                pipit_agent_default_params()) */
    const struct pipit_eval_device *devices; /* tool set per device (borrowed) */
    size_t n_devices;
    struct pipit_cloud *cloud;       /* endpoint for process_with_cloud_llm, NULL = none (the
                                        call then fails with cloud_not_configured; it still counts
                                        as made) */
    pipit_eval_progress_fn progress; /* NULL = silent */
    void *progress_user_data;
    int32_t fresh_every; /* > 0: a new agent (no memory, no undo log) every N turns of a
                            scenario, on the same device and its state: what a long session
                            costs, against the same turns (0 = one agent per scenario) */
};

struct pipit_eval_params pipit_eval_default_params(void);

/* Aggregate metrics of a set of turns. Ratios are in 0..1; a ratio with no cases is -1. */
struct pipit_eval_metrics {
    int32_t n_scenarios;
    int32_t n_turns;
    int32_t n_errors;       /* turns where the agent returned an error */
    int64_t calls_expected; /* expected calls */
    int64_t calls_made;     /* calls attempted */
    int64_t calls_correct;  /* made calls matched one-to-one to expectations */
    int64_t calls_valid;    /* made calls that parsed and validated */
    double precision;       /* correct / made (1 when none made) */
    double recall;          /* correct / expected (1 when none expected) */
    double f1;              /* harmonic mean (0 when both are 0) */
    double state_accuracy;  /* turns whose listed state keys match / turns listing state */
    double reply_accuracy;  /* turns whose sentence has every reply_contains / such turns */
    double valid_call_rate; /* valid / made (-1 when none made) */
    double model_calls_per_utterance; /* decodes per turn (this and the token and latency
                                         figures leave error turns out) */
    double prefill_tokens_per_turn;   /* tokens prefilled per turn (ephemeral + permanent) */
    double context_tokens_per_turn;   /* mean of n_permanent + n_ephemeral_max per turn */
    double latency_ms_p50;
    double latency_ms_p95;
    double ttft_ms_p50; /* over turns with a model call; -1 when none */
    double ttft_ms_p95;
    double no_call_accuracy; /* turns that expect no call and make none / turns that expect
                                none (the "conversational precision"); -1 when none */
    int32_t n_state_skipped; /* turns listing a state the oracle could not reproduce (a
                                finding, see pipit_scenarios_check): not checked */
    /* the router, measured as part of the system (it filters nothing) */
    int32_t undo_marked;       /* turns marked "undo": true */
    int32_t undo_routed;       /* ... that the router sent to undo (PIPIT_TURN_UNDO) */
    int32_t undo_false_routes; /* turns not marked undo that the router sent to undo */
    double undo_detection;     /* undo_routed / undo_marked; -1 when none */
    int32_t split_turns;       /* turns expecting k >= 2 calls */
    int32_t split_correct;     /* ... where the router made exactly k steps */
    double split_accuracy;     /* split_correct / split_turns; -1 when none */
    /* undo outcomes */
    int32_t undo_checked;    /* marked undo turns that list a checked state */
    int32_t undo_reverted;   /* ... whose state matches and where no new action succeeded */
    int32_t undo_new_action; /* marked undo turns where a call other than the built-in undo
                                executed successfully (any, state listed or not) */
    double undo_revert_rate; /* undo_reverted / undo_checked; -1 when none */
    /* out-of-range expectations: calls the oracle expects validation or the device to refuse */
    int32_t oor_expected;
    int32_t oor_refused;     /* attempted and refused, and no call of that tool succeeded */
    int32_t oor_substituted; /* a call of that tool with other arguments succeeded instead */
    /* state questions: the sets write them as "expect": [] with the value in reply_contains
     * (not marked undo) */
    int32_t questions;
    int32_t questions_from_state; /* ... answered from the device's state, no model text
                                     (PIPIT_TURN_STATE_ANSWER): the true value of the device */
    int32_t questions_reply_ok;   /* ... whose reply holds the expected words (the oracle's
                                     value: an earlier wrong call makes the two differ) */
};

/* Turn-index buckets, turn numbers counted from 1 within a scenario: 1-5, 6-10, 11-20, 21+. */
#define PIPIT_EVAL_N_TURN_BUCKETS 4

/* Bucket `index`'s name ("1-5", "6-10", "11-20", "21+") and its first and last turn number
 * (last -1: no end); NULL when out of range. `first`/`last` may be NULL. */
const char *pipit_eval_turn_bucket(size_t index, int32_t *first, int32_t *last);

/* The results of a run (below). Read-only. */
struct pipit_eval_report;

/* Run every scenario of `set` in every configuration: a fresh agent per scenario
 * (pipit_agent_init on `model`); per turn the injected failures are registered as handlers
 * (pipit_agent_register_tool) and removed again afterwards. A turn whose agent fails, and
 * every turn of a scenario whose agent cannot be created, is recorded as an error (the
 * report's n_errors and misses say why) and the run goes on. Errors: PIPIT_ERR_INVALID_ARG
 * (NULL model or set, no configs, a scenario's device without a tool set), PIPIT_ERR_JSON (a
 * scenario with an oracle error, see pipit_scenarios_check; findings only skip the state check
 * of their turn), PIPIT_ERR_NOMEM. */
enum pipit_status pipit_eval_run(struct pipit_model *model,
                                 const struct pipit_scenarios *set,
                                 const struct pipit_eval_config *configs,
                                 size_t n_configs,
                                 const struct pipit_eval_params *params,
                                 struct pipit_eval_report **out,
                                 struct pipit_error *err);

void pipit_eval_report_free(struct pipit_eval_report *report);

size_t pipit_eval_report_n_configs(const struct pipit_eval_report *report);
const char *pipit_eval_report_config(const struct pipit_eval_report *report, size_t index);

/* Categories in order of first appearance. Borrowed. */
size_t pipit_eval_report_n_categories(const struct pipit_eval_report *report);
const char *pipit_eval_report_category(const struct pipit_eval_report *report, size_t index);

/* Metrics of configuration `config` over all turns (`category` NULL) or one category.
 * Errors: PIPIT_ERR_INVALID_ARG (index out of range, unknown category). */
enum pipit_status pipit_eval_report_metrics(const struct pipit_eval_report *report,
                                            size_t config,
                                            const char *category,
                                            struct pipit_eval_metrics *out);

/* The same over the turns of turn bucket `bucket` (pipit_eval_turn_bucket) only, so decay over
 * a session is visible. Errors: as pipit_eval_report_metrics, and a bucket out of range. */
enum pipit_status pipit_eval_report_bucket_metrics(const struct pipit_eval_report *report,
                                                   size_t config,
                                                   const char *category,
                                                   size_t bucket,
                                                   struct pipit_eval_metrics *out);

/* Mean context tokens (n_permanent + n_ephemeral_max) at each turn index 0, 1, ... over the
 * scenarios that have that turn (`category` NULL = all; error turns left out, -1 where no turn
 * is left): up to `max` values into `out`.
 * Returns the number of turn indices (which may exceed `max`), -1 on bad arguments. */
int32_t pipit_eval_report_context_tokens(const struct pipit_eval_report *report,
                                         size_t config,
                                         const char *category,
                                         double *out,
                                         int32_t max);

/* The report as JSON: {"configs": {NAME: {"overall": {...}, "by_category": {CAT: {...}},
 * "misses": [...]}}}; keys in docs/eval.md. Freed with pipit_free(); NULL when out of memory. */
char *pipit_eval_report_json(const struct pipit_eval_report *report);

/* Markdown tables: metrics per configuration, F1 per category, context tokens per turn. */
char *pipit_eval_report_markdown(const struct pipit_eval_report *report);

/* A standalone SVG of context tokens per turn, one polyline per configuration (the paper's
 * Figure 4); `category` NULL = all scenarios. */
char *pipit_eval_report_svg(const struct pipit_eval_report *report, const char *category);

/* The first `max` misses of configuration `config` (what was expected, what the agent did),
 * one per line. Freed with pipit_free(). */
char *pipit_eval_report_misses(const struct pipit_eval_report *report, size_t config, size_t max);

#if defined(PIPIT_BUILD) && (defined(__GNUC__) || defined(__clang__))
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* PIPIT_TOOLS_H */
