/*
 * engine.c - the only code that includes llama.h: backend, models, contexts
 * with permanent and ephemeral KV regions, adapters, tokenizer, chat templates,
 * llama.cpp's side of samplers (struct engine_draw), perf counters. Beside it,
 * without llama.h: modelfile.c checks a model file before llama.cpp sees it,
 * kvstate.c reads and writes the KV state blob,
 * sampler.c is the sampler (triggers, the fast decoder's steps), fg_vocab.c
 * hands the vocabulary to the fast decoder, generate.c is the generation loop.
 *
 * Invariants of a context:
 * - It uses one llama sequence (0). Its cache holds exactly tokens[0 .. n_perm
 * + n_eph), at positions 0 .. n_perm + n_eph - 1; the first n_perm are the
 * permanent prefix.
 * - A failed or aborted append leaves both regions as they were: the tokens
 * that llama.cpp already processed are removed again with llama_memory_seq_rm,
 * which rewinds exactly.
 * - `has_logits` is true only while the logits of the last cached token are
 * available.
 */
#define _GNU_SOURCE

#include "engine.h"

#include "fg_sampler.h"
#include "ggml-backend.h"
#include "llama.h"
#include "log.h"
#include "modelfile.h"
#include "pipit.h"
#include "status.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================================
 * backend, logs */

/* The last error llama.cpp logged on this thread: quoted in load and grammar
 * errors, since llama.cpp reports those failures only through its log. */
static _Thread_local char last_llama_error[256];
/* Every error llama.cpp logged on this thread since the caller last cleared it
 * (bounded). */
static _Thread_local char llama_errors[1024];

static void llama_log_router(enum ggml_log_level level, const char *text, void *user_data) {
    (void)user_data;
    enum pipit_log_level lv = PIPIT_LOG_DEBUG;
    switch (level) {
        case GGML_LOG_LEVEL_ERROR:
            lv = PIPIT_LOG_ERROR;
            break;
        case GGML_LOG_LEVEL_WARN:
            lv = PIPIT_LOG_WARN;
            break;
        case GGML_LOG_LEVEL_INFO:
            lv = PIPIT_LOG_INFO;
            break;
        default:
            lv = PIPIT_LOG_DEBUG;
            break;
    }
    if (lv == PIPIT_LOG_ERROR && text != NULL) {
        /* keep the message without its trailing newline */
        pipit_format(last_llama_error, sizeof(last_llama_error), "%s", text);
        size_t n = strlen(last_llama_error);
        while (n > 0 && (last_llama_error[n - 1] == '\n' || last_llama_error[n - 1] == ' ')) {
            last_llama_error[--n] = '\0';
        }
        size_t used = strlen(llama_errors);
        if (used + 1 < sizeof(llama_errors)) {
            pipit_format(llama_errors + used, sizeof(llama_errors) - used, "%s\n",
                         last_llama_error);
        }
    }
    if (text != NULL && pipit_log_enabled(lv)) {
        pipit_log(lv, "llama: %s", text);
    }
}

static pthread_mutex_t backend_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool backend_ready = false;

enum pipit_status pipit_backend_init(const char *backend_dir) {
    pthread_mutex_lock(&backend_mutex);
    if (backend_ready) {
        pthread_mutex_unlock(&backend_mutex);
        return PIPIT_OK;
    }
    llama_log_set(llama_log_router, NULL);

    /* The CPU backend variants are shared objects beside libllama: find that
     * directory from the address of a libllama symbol, unless the caller or
     * PIPIT_BACKEND_DIR says otherwise. */
    char dir[4096] = {0};
    const char *env = getenv("PIPIT_BACKEND_DIR");
    if (backend_dir != NULL && backend_dir[0] != '\0') {
        pipit_format(dir, sizeof(dir), "%s", backend_dir);
    } else if (env != NULL && env[0] != '\0') {
        pipit_format(dir, sizeof(dir), "%s", env);
    } else {
        Dl_info info;
        void (*fn)(void) = llama_backend_init;
        void *addr = NULL;
        memcpy(&addr, &fn, sizeof(addr)); /* ISO C has no function-to-object pointer cast */
        if (dladdr(addr, &info) != 0 && info.dli_fname != NULL) {
            pipit_format(dir, sizeof(dir), "%s", info.dli_fname);
            char *slash = strrchr(dir, '/');
            if (slash != NULL) {
                *slash = '\0';
            } else {
                pipit_format(dir, sizeof(dir), ".");
            }
        }
    }
    if (dir[0] != '\0') {
        ggml_backend_load_all_from_path(dir);
    }
    llama_backend_init();
    if (ggml_backend_dev_count() == 0) {
        pthread_mutex_unlock(&backend_mutex);
        pipit_log(PIPIT_LOG_ERROR, "engine: no ggml backend found in '%s'", dir);
        return PIPIT_ERR_BACKEND;
    }
    backend_ready = true;
    pthread_mutex_unlock(&backend_mutex);
    pipit_log(PIPIT_LOG_DEBUG, "engine: backends loaded from '%s'", dir);
    return PIPIT_OK;
}

int32_t pipit_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int n = CPU_COUNT(&set);
        return n > 0 ? n : 1;
    }
    return 1;
}

/* ============================================================================
 * model */

struct pipit_model {
    struct llama_model *lm;
    const struct llama_vocab *vocab;
    struct pipit_model_info info;
    int32_t byte_token[256]; /* a token whose text is exactly this byte, -1 if none */
    uint64_t fingerprint;    /* sizes, description and a sample of the weights (sessions) */
};

struct pipit_model_params pipit_model_default_params(void) {
    struct pipit_model_params p = {
        .use_mmap = true,
        .vocab_only = false,
        .n_gpu_layers = 0,
    };
    return p;
}

uint64_t pipit_model_fingerprint(const struct pipit_model *model) {
    return model != NULL ? model->fingerprint : 0;
}

enum pipit_status pipit_model_load(const char *path,
                                   const struct pipit_model_params *params,
                                   struct pipit_model **out,
                                   struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "engine: out is NULL");
    }
    *out = NULL;
    if (path == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "engine: model path is NULL");
    }
    struct pipit_model_params p = params != NULL ? *params : pipit_model_default_params();

    enum pipit_status st = pipit_backend_init(NULL);
    if (st != PIPIT_OK) {
        return pipit_error_set(err, st, "engine: no ggml backend could be loaded");
    }
    char arch[64] = {0};
    st = modelfile_check(path, p.vocab_only, arch, sizeof(arch), err);
    if (st != PIPIT_OK) {
        return st;
    }

    struct llama_model_params lp = llama_model_default_params();
    lp.n_gpu_layers = p.n_gpu_layers;
    lp.load_mode = p.use_mmap ? LLAMA_LOAD_MODE_MMAP : LLAMA_LOAD_MODE_NONE;
    lp.vocab_only = p.vocab_only;
    last_llama_error[0] = '\0';
    llama_errors[0] = '\0';
    struct llama_model *lm = llama_model_load_from_file(path, lp);
    if (lm == NULL) {
        if (strstr(llama_errors, "unknown model architecture") != NULL) {
            return pipit_error_set(err, PIPIT_ERR_UNSUPPORTED_ARCH,
                                   "engine: unsupported model architecture '%s': %s", arch, path);
        }
        return pipit_error_set(err, PIPIT_ERR_MODEL, "engine: llama.cpp refused %s: %s", path,
                               last_llama_error[0] != '\0' ? last_llama_error : "no reason given");
    }

    struct pipit_model *m = calloc(1, sizeof(*m));
    if (m == NULL) {
        llama_model_free(lm);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "engine: out of memory");
    }
    m->lm = lm;
    m->vocab = llama_model_get_vocab(lm);
    m->info.n_vocab = llama_vocab_n_tokens(m->vocab);
    m->info.n_ctx_train = llama_model_n_ctx_train(lm);
    m->info.n_embd = llama_model_n_embd(lm);
    m->info.n_layer = llama_model_n_layer(lm);
    m->info.n_params = llama_model_n_params(lm);
    m->info.size_bytes = llama_model_size(lm);
    m->info.token_bos = llama_vocab_bos(m->vocab);
    m->info.token_eos = llama_vocab_eos(m->vocab);
    m->info.has_chat_template = llama_model_chat_template(lm, NULL) != NULL;
    pipit_format(m->info.arch, sizeof(m->info.arch), "%s", arch);
    llama_model_desc(lm, m->info.desc, sizeof(m->info.desc));
    m->fingerprint = modelfile_fingerprint(path, &m->info);
    /* single-byte tokens: any text can be fed to a grammar byte by byte */
    for (int i = 0; i < 256; i++) {
        m->byte_token[i] = -1;
    }
    for (int32_t t = 0; t < m->info.n_vocab; t++) {
        char piece[8];
        if (llama_vocab_is_control(m->vocab, t)) {
            continue;
        }
        int32_t n = llama_token_to_piece(m->vocab, t, piece, sizeof(piece), 0, true);
        if (n == 1 && m->byte_token[(unsigned char)piece[0]] < 0) {
            m->byte_token[(unsigned char)piece[0]] = t;
        }
    }
    *out = m;
    return PIPIT_OK;
}

void pipit_model_free(struct pipit_model *model) {
    if (model == NULL) {
        return;
    }
    llama_model_free(model->lm);
    free(model);
}

void pipit_model_get_info(const struct pipit_model *model, struct pipit_model_info *info) {
    if (model == NULL || info == NULL) {
        return;
    }
    *info = model->info;
}

int32_t
pipit_model_meta_str(const struct pipit_model *model, const char *key, char *buf, size_t size) {
    if (model == NULL || key == NULL || buf == NULL || size == 0) {
        return -1;
    }
    buf[0] = '\0';
    return llama_model_meta_val_str(model->lm, key, buf, size);
}

bool pipit_model_token_is_eog(const struct pipit_model *model, int32_t token) {
    return model != NULL && llama_vocab_is_eog(model->vocab, token);
}

/* ============================================================================
 * tokenizer */

int32_t pipit_tokenize(const struct pipit_model *model,
                       const char *text,
                       bool add_special,
                       bool parse_special,
                       int32_t *tokens,
                       int32_t n_max) {
    if (model == NULL || text == NULL || n_max < 0 || (tokens == NULL && n_max > 0)) {
        return INT32_MIN;
    }
    size_t len = strlen(text);
    if (len > (size_t)INT32_MAX / 2) {
        return INT32_MIN;
    }
    return llama_tokenize(model->vocab, text, (int32_t)len, tokens, n_max, add_special,
                          parse_special);
}

enum pipit_status pipit_tokenize_alloc(const struct pipit_model *model,
                                       const char *text,
                                       bool add_special,
                                       bool parse_special,
                                       int32_t **out_tokens,
                                       int32_t *out_n) {
    if (out_tokens == NULL || out_n == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *out_tokens = NULL;
    *out_n = 0;
    int32_t need = pipit_tokenize(model, text, add_special, parse_special, NULL, 0);
    if (need == INT32_MIN) {
        return model == NULL || text == NULL ? PIPIT_ERR_INVALID_ARG : PIPIT_ERR_TOKENIZE;
    }
    if (need < 0) {
        need = -need;
    }
    int32_t *toks = malloc(sizeof(int32_t) * (size_t)(need > 0 ? need : 1));
    if (toks == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    int32_t n = pipit_tokenize(model, text, add_special, parse_special, toks, need);
    if (n < 0) {
        free(toks);
        return PIPIT_ERR_TOKENIZE;
    }
    *out_tokens = toks;
    *out_n = n;
    return PIPIT_OK;
}

char *pipit_detokenize(const struct pipit_model *model,
                       const int32_t *tokens,
                       int32_t n_tokens,
                       bool render_special) {
    if (model == NULL || n_tokens < 0 || (tokens == NULL && n_tokens > 0)) {
        return NULL;
    }
    int32_t cap = n_tokens * 8 + 16;
    for (int attempt = 0; attempt < 2; attempt++) {
        char *buf = malloc((size_t)cap + 1);
        if (buf == NULL) {
            return NULL;
        }
        int32_t n =
            llama_detokenize(model->vocab, tokens, n_tokens, buf, cap, false, render_special);
        if (n >= 0) {
            buf[n] = '\0';
            return buf;
        }
        free(buf);
        cap = -n;
    }
    return NULL;
}

int32_t pipit_token_piece(const struct pipit_model *model, int32_t token, char *buf, int32_t size) {
    if (model == NULL || token < 0 || token >= model->info.n_vocab || size < 0 ||
        (buf == NULL && size > 0)) {
        return INT32_MIN;
    }
    return llama_token_to_piece(model->vocab, token, buf, size, 0, true);
}

enum pipit_status pipit_chat_apply_template(const struct pipit_model *model,
                                            const struct pipit_chat_message *messages,
                                            size_t n_messages,
                                            bool add_assistant,
                                            const char *fallback_template,
                                            char **out) {
    if (model == NULL || out == NULL || (messages == NULL && n_messages > 0)) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *out = NULL;
    const char *tmpl = llama_model_chat_template(model->lm, NULL);
    if (tmpl == NULL) {
        tmpl = fallback_template != NULL ? fallback_template : "chatml";
    }
    struct llama_chat_message *msgs = calloc(n_messages > 0 ? n_messages : 1, sizeof(*msgs));
    if (msgs == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    size_t total = 64;
    for (size_t i = 0; i < n_messages; i++) {
        if (messages[i].role == NULL || messages[i].content == NULL) {
            free(msgs);
            return PIPIT_ERR_INVALID_ARG;
        }
        msgs[i].role = messages[i].role;
        msgs[i].content = messages[i].content;
        total += strlen(messages[i].content) + strlen(messages[i].role) + 64;
    }
    if (total > INT32_MAX / 2) {
        free(msgs);
        return PIPIT_ERR_INVALID_ARG;
    }
    int32_t cap = (int32_t)total * 2;
    char *buf = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        buf = malloc((size_t)cap + 1);
        if (buf == NULL) {
            free(msgs);
            return PIPIT_ERR_NOMEM;
        }
        int32_t n = llama_chat_apply_template(tmpl, msgs, n_messages, add_assistant, buf, cap);
        if (n < 0) {
            free(buf);
            free(msgs);
            return PIPIT_ERR_TEMPLATE;
        }
        if (n <= cap) {
            buf[n] = '\0';
            free(msgs);
            *out = buf;
            return PIPIT_OK;
        }
        free(buf);
        cap = n;
    }
    free(msgs);
    return PIPIT_ERR_TEMPLATE;
}

/* ============================================================================
 * adapters */

struct pipit_adapter {
    struct llama_adapter_lora *la;
};

int32_t pipit_adapter_meta_str(const struct pipit_adapter *adapter,
                               const char *key,
                               char *buf,
                               size_t size) {
    if (adapter == NULL || key == NULL || buf == NULL || size == 0) {
        return -1;
    }
    buf[0] = '\0';
    return llama_adapter_meta_val_str(adapter->la, key, buf, size);
}

enum pipit_status pipit_adapter_load(struct pipit_model *model,
                                     const char *path,
                                     struct pipit_adapter **out,
                                     struct pipit_error *err) {
    pipit_error_clear(err);
    if (model == NULL || path == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "engine: adapter: NULL argument");
    }
    *out = NULL;
    char arch[64];
    enum pipit_status st = modelfile_check(path, true, arch, sizeof(arch), err);
    if (st != PIPIT_OK) {
        return st;
    }
    last_llama_error[0] = '\0';
    struct llama_adapter_lora *la = llama_adapter_lora_init(model->lm, path);
    if (la == NULL) {
        return pipit_error_set(err, PIPIT_ERR_ADAPTER,
                               "engine: LoRA adapter does not fit the model: %s: %s", path,
                               last_llama_error[0] != '\0' ? last_llama_error : "no reason given");
    }
    struct pipit_adapter *a = calloc(1, sizeof(*a));
    if (a == NULL) {
        llama_adapter_lora_free(la);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "engine: out of memory");
    }
    a->la = la;
    *out = a;
    return PIPIT_OK;
}

void pipit_adapter_free(struct pipit_adapter *adapter) {
    if (adapter == NULL) {
        return;
    }
    llama_adapter_lora_free(adapter->la);
    free(adapter);
}

/* ============================================================================
 * context */

struct pipit_context {
    struct pipit_model *model;
    struct llama_context *lctx;
    struct llama_batch batch; /* capacity n_batch, reused by every decode */
    uint32_t n_ctx;
    uint32_t n_batch;
    int32_t n_threads;

    int32_t *tokens; /* n_ctx entries: the cached tokens, permanent then ephemeral */
    int32_t n_perm;
    int32_t n_eph;
    /* after a truncate or rewind: cells past both regions still holding their tokens
     * (tokens[n_perm + n_eph ..] for n_stale), kept until the next decode so an append of the
     * same tokens at the same positions reuses them */
    int32_t n_stale;
    bool has_logits;

    atomic_bool cancel;
    pipit_abort_fn abort_fn;
    void *abort_user_data;

    struct pipit_perf perf;
    char errmsg[512];
};

struct pipit_context_params pipit_context_default_params(void) {
    struct pipit_context_params p = {
        .n_ctx = 2048,
        .n_batch = 512,
        .n_threads = 0,
        .abort_fn = NULL,
        .abort_user_data = NULL,
        .flash_attn = false,
    };
    return p;
}

static bool context_abort_cb(void *user_data) {
    struct pipit_context *ctx = user_data;
    if (atomic_load(&ctx->cancel)) {
        return true;
    }
    return ctx->abort_fn != NULL && ctx->abort_fn(ctx->abort_user_data);
}

enum pipit_status
engine_context_fail(struct pipit_context *ctx, enum pipit_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pipit_vformat(ctx->errmsg, sizeof(ctx->errmsg), fmt, ap);
    va_end(ap);
    return st;
}

enum pipit_status pipit_context_init(struct pipit_model *model,
                                     const struct pipit_context_params *params,
                                     struct pipit_context **out,
                                     struct pipit_error *err) {
    pipit_error_clear(err);
    if (model == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "engine: context: NULL argument");
    }
    *out = NULL;
    struct pipit_context_params p = params != NULL ? *params : pipit_context_default_params();
    uint32_t n_ctx = p.n_ctx;
    if (n_ctx == 0) {
        n_ctx = model->info.n_ctx_train > 0 ? (uint32_t)model->info.n_ctx_train : 2048;
        if (n_ctx > 4096) {
            n_ctx = 4096;
        }
    }
    if (n_ctx < 16 || n_ctx > (1u << 20)) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "engine: context: n_ctx %u outside 16..1048576", n_ctx);
    }
    uint32_t n_batch = p.n_batch == 0 ? 512 : p.n_batch;
    if (n_batch > n_ctx) {
        n_batch = n_ctx;
    }
    /* default: half the usable cores (at most 4): ggml threads spin-wait, and a thread more
     * than the free cores costs 10-100x on a busy machine */
    int32_t half = (pipit_cpu_count() + 1) / 2;
    int32_t n_threads = p.n_threads > 0 ? p.n_threads : (half > 4 ? 4 : half);

    struct pipit_context *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "engine: out of memory");
    }
    ctx->tokens = malloc(sizeof(int32_t) * n_ctx);
    if (ctx->tokens == NULL) {
        free(ctx);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "engine: out of memory");
    }
    ctx->model = model;
    ctx->n_ctx = n_ctx;
    ctx->n_batch = n_batch;
    ctx->n_threads = n_threads;
    ctx->abort_fn = p.abort_fn;
    ctx->abort_user_data = p.abort_user_data;
    atomic_init(&ctx->cancel, false);

    struct llama_context_params lp = llama_context_default_params();
    lp.n_ctx = n_ctx;
    lp.n_batch = n_batch;
    lp.n_ubatch = n_batch;
    lp.n_seq_max = 1;
    lp.n_threads = n_threads;
    lp.n_threads_batch = n_threads;
    lp.abort_callback = context_abort_cb;
    lp.abort_callback_data = ctx;
    lp.no_perf = true;
    /* never llama.cpp's "auto", which turns it on wherever the backend has it: on a CPU it
     * trades per-turn latency for one-time prefill (pipit_context_params.flash_attn) */
    lp.flash_attn_type =
        p.flash_attn ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    last_llama_error[0] = '\0';
    ctx->lctx = llama_init_from_model(model->lm, lp);
    if (ctx->lctx == NULL) {
        free(ctx->tokens);
        free(ctx);
        return pipit_error_set(err, PIPIT_ERR_BACKEND, "engine: cannot create a context: %s",
                               last_llama_error[0] != '\0' ? last_llama_error : "no reason");
    }
    ctx->n_ctx = llama_n_ctx(ctx->lctx);
    if (ctx->n_ctx > n_ctx) {
        /* llama.cpp may round the window up; the token array must cover it */
        int32_t *grown = realloc(ctx->tokens, sizeof(int32_t) * ctx->n_ctx);
        if (grown == NULL) {
            llama_free(ctx->lctx);
            free(ctx->tokens);
            free(ctx);
            return pipit_error_set(err, PIPIT_ERR_NOMEM, "engine: out of memory");
        }
        ctx->tokens = grown;
    }
    ctx->batch = llama_batch_init((int32_t)n_batch, 0, 1);
    *out = ctx;
    return PIPIT_OK;
}

const struct pipit_model *engine_context_model(const struct pipit_context *ctx) {
    return ctx->model;
}

struct pipit_perf *engine_context_perf(struct pipit_context *ctx) {
    return &ctx->perf;
}

void pipit_context_free(struct pipit_context *ctx) {
    if (ctx == NULL) {
        return;
    }
    llama_batch_free(ctx->batch);
    llama_free(ctx->lctx);
    free(ctx->tokens);
    free(ctx);
}

const char *pipit_context_errmsg(const struct pipit_context *ctx) {
    return ctx != NULL ? ctx->errmsg : "engine: context is NULL";
}

enum pipit_status pipit_context_set_threads(struct pipit_context *ctx, int32_t n_threads) {
    if (ctx == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    if (n_threads < 1 || n_threads > 512) {
        return engine_context_fail(ctx, PIPIT_ERR_INVALID_ARG,
                                   "engine: thread count %d outside 1..512", (int)n_threads);
    }
    ctx->n_threads = n_threads;
    llama_set_n_threads(ctx->lctx, n_threads, n_threads);
    return PIPIT_OK;
}

enum pipit_status pipit_context_set_adapters(struct pipit_context *ctx,
                                             struct pipit_adapter *const *adapters,
                                             const float *scales,
                                             size_t n) {
    if (ctx == NULL || (n > 0 && (adapters == NULL || scales == NULL)) || n > 64) {
        return PIPIT_ERR_INVALID_ARG;
    }
    struct llama_adapter_lora *las[64];
    float sc[64];
    for (size_t i = 0; i < n; i++) {
        if (adapters[i] == NULL || !isfinite(scales[i])) {
            return engine_context_fail(ctx, PIPIT_ERR_INVALID_ARG,
                                       "engine: adapter %zu is NULL or its "
                                       "scale is not finite",
                                       i);
        }
        las[i] = adapters[i]->la;
        sc[i] = scales[i];
    }
    if (llama_set_adapters_lora(ctx->lctx, n > 0 ? las : NULL, n, n > 0 ? sc : NULL) != 0) {
        return engine_context_fail(ctx, PIPIT_ERR_ADAPTER,
                                   "engine: llama.cpp refused the adapters");
    }
    return PIPIT_OK;
}

/* Remove cached tokens from position `keep` on (exact rewind). */
static void kv_truncate(struct pipit_context *ctx, int32_t keep) {
    llama_memory_seq_rm(llama_get_memory(ctx->lctx), 0, keep, -1);
    ctx->n_stale = 0;
}

/* Drop the cells a truncate or rewind kept for reuse: every decode, save and size starts from a
 * cache that holds exactly the prefix and the tail. */
static void drop_stale(struct pipit_context *ctx) {
    if (ctx->n_stale > 0) {
        kv_truncate(ctx, ctx->n_perm + ctx->n_eph);
    }
}

/* Decode `n` tokens starting at cache position n_perm + n_eph, in batches; the
 * logits of the last token are requested. On failure the cache is truncated
 * back to where it was. */
static enum pipit_status
decode_tokens(struct pipit_context *ctx, const int32_t *tokens, int32_t n, bool *made_calls) {
    int32_t pos0 = ctx->n_perm + ctx->n_eph;
    if (n <= 0) {
        return PIPIT_OK;
    }
    drop_stale(ctx);
    if ((int64_t)pos0 + n > (int64_t)ctx->n_ctx) {
        return engine_context_fail(
            ctx, PIPIT_ERR_CONTEXT_FULL,
            "engine: context full: %d cached + %d new tokens exceed n_ctx %u", (int)pos0, (int)n,
            ctx->n_ctx);
    }
    int32_t n_vocab = ctx->model->info.n_vocab;
    for (int32_t i = 0; i < n; i++) {
        if (tokens[i] < 0 || tokens[i] >= n_vocab) {
            return engine_context_fail(
                ctx, PIPIT_ERR_INVALID_ARG,
                "engine: token %d at index %d outside the vocabulary (0..%d)", (int)tokens[i],
                (int)i, (int)n_vocab - 1);
        }
    }
    ctx->has_logits = false;
    for (int32_t done = 0; done < n;) {
        int32_t chunk = n - done;
        if (chunk > (int32_t)ctx->n_batch) {
            chunk = (int32_t)ctx->n_batch;
        }
        ctx->batch.n_tokens = chunk;
        for (int32_t i = 0; i < chunk; i++) {
            ctx->batch.token[i] = tokens[done + i];
            ctx->batch.pos[i] = pos0 + done + i;
            ctx->batch.n_seq_id[i] = 1;
            ctx->batch.seq_id[i][0] = 0;
            ctx->batch.logits[i] = (done + i == n - 1);
        }
        if (made_calls != NULL) {
            *made_calls = true;
        }
        int32_t rc = llama_decode(ctx->lctx, ctx->batch);
        if (rc != 0) {
            bool aborted = rc == 2 || atomic_load(&ctx->cancel);
            kv_truncate(ctx, pos0);
            atomic_store(&ctx->cancel, false);
            if (aborted) {
                return engine_context_fail(ctx, PIPIT_ERR_ABORTED,
                                           "engine: decode aborted after %d of %d "
                                           "tokens",
                                           (int)done, (int)n);
            }
            if (rc == 1) {
                return engine_context_fail(ctx, PIPIT_ERR_CONTEXT_FULL,
                                           "engine: context full: no KV slot for %d tokens",
                                           (int)chunk);
            }
            return engine_context_fail(ctx, PIPIT_ERR_DECODE,
                                       "engine: llama_decode failed with code %d", (int)rc);
        }
        done += chunk;
    }
    atomic_store(&ctx->cancel, false);
    memcpy(ctx->tokens + pos0, tokens, sizeof(int32_t) * (size_t)n);
    ctx->has_logits = true;
    return PIPIT_OK;
}

enum pipit_status pipit_context_append(struct pipit_context *ctx,
                                       enum pipit_region region,
                                       const int32_t *tokens,
                                       int32_t n) {
    if (ctx == NULL || n < 0 || (tokens == NULL && n > 0)) {
        return PIPIT_ERR_INVALID_ARG;
    }
    if (region != PIPIT_REGION_PERMANENT && region != PIPIT_REGION_EPHEMERAL) {
        return engine_context_fail(ctx, PIPIT_ERR_INVALID_ARG, "engine: unknown region %d",
                                   (int)region);
    }
    if (region == PIPIT_REGION_PERMANENT && ctx->n_eph > 0) {
        return engine_context_fail(ctx, PIPIT_ERR_STATE,
                                   "engine: cannot append to the permanent prefix while the "
                                   "ephemeral tail "
                                   "holds %d tokens (rewind or commit first)",
                                   (int)ctx->n_eph);
    }
    /* the tokens a truncate or rewind left in the cache at these positions are not decoded
     * again; the last one always is, for its logits */
    int32_t *len = region == PIPIT_REGION_PERMANENT ? &ctx->n_perm : &ctx->n_eph;
    int32_t start = *len;
    const int32_t *old = ctx->tokens + ctx->n_perm + ctx->n_eph;
    int32_t reused = 0;
    while (reused < ctx->n_stale && reused < n - 1 && old[reused] == tokens[reused]) {
        reused++;
    }
    *len += reused;
    ctx->n_stale -= reused;
    double t0 = pipit_now_ms();
    enum pipit_status st = decode_tokens(ctx, tokens + reused, n - reused, NULL);
    ctx->perf.t_prefill_ms += pipit_now_ms() - t0;
    if (st != PIPIT_OK) {
        *len = start; /* as before the call: the reused cells go too */
        kv_truncate(ctx, ctx->n_perm + ctx->n_eph);
        return st;
    }
    ctx->perf.n_reused_tokens += reused;
    ctx->perf.n_prefill_tokens += n - reused;
    *len += n - reused;
    return PIPIT_OK;
}

enum pipit_status
pipit_context_decode_forced(struct pipit_context *ctx, const int32_t *tokens, int32_t n) {
    if (ctx == NULL || n < 0 || (tokens == NULL && n > 0)) {
        return PIPIT_ERR_INVALID_ARG;
    }
    double t0 = pipit_now_ms();
    bool called = false;
    enum pipit_status st = decode_tokens(ctx, tokens, n, &called);
    ctx->perf.t_decode_ms += pipit_now_ms() - t0;
    if (called) {
        ctx->perf.n_decode_calls += (n + (int32_t)ctx->n_batch - 1) / (int32_t)ctx->n_batch;
    }
    if (st != PIPIT_OK) {
        return st;
    }
    ctx->perf.n_decode_tokens += n;
    ctx->n_eph += n;
    return PIPIT_OK;
}

enum pipit_status pipit_context_decode_token(struct pipit_context *ctx, int32_t token) {
    return pipit_context_decode_forced(ctx, &token, 1);
}

enum pipit_status pipit_context_rewind_to(struct pipit_context *ctx, int32_t keep) {
    if (ctx == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    if (keep < 0 || keep > ctx->n_eph) {
        return engine_context_fail(ctx, PIPIT_ERR_INVALID_ARG,
                                   "engine: rewind keep %d outside 0..%d", (int)keep,
                                   (int)ctx->n_eph);
    }
    if (keep == ctx->n_eph) {
        return PIPIT_OK;
    }
    /* the cells stay until the next decode: appending the same tokens reuses them */
    ctx->n_stale += ctx->n_eph - keep;
    ctx->n_eph = keep;
    ctx->has_logits = false;
    return PIPIT_OK;
}

enum pipit_status pipit_context_rewind(struct pipit_context *ctx) {
    return pipit_context_rewind_to(ctx, 0);
}

enum pipit_status pipit_context_truncate(struct pipit_context *ctx, int32_t n_keep) {
    if (ctx == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    if (ctx->n_eph > 0) {
        return engine_context_fail(
            ctx, PIPIT_ERR_STATE,
            "engine: truncate: the ephemeral tail holds %d tokens (rewind first)", (int)ctx->n_eph);
    }
    if (n_keep < 0 || n_keep > ctx->n_perm) {
        return engine_context_fail(ctx, PIPIT_ERR_INVALID_ARG,
                                   "engine: truncate keep %d outside 0..%d", (int)n_keep,
                                   (int)ctx->n_perm);
    }
    if (n_keep < ctx->n_perm) {
        /* the cells stay until the next decode: appending the same tokens reuses them */
        ctx->n_stale += ctx->n_perm - n_keep;
        ctx->n_perm = n_keep;
        ctx->has_logits = false;
    }
    return PIPIT_OK;
}

size_t engine_context_kv_size(struct pipit_context *ctx) {
    drop_stale(ctx);
    return llama_state_seq_get_size(ctx->lctx, 0);
}

size_t engine_context_kv_read(struct pipit_context *ctx, uint8_t *dst, size_t size) {
    drop_stale(ctx);
    return llama_state_seq_get_data(ctx->lctx, dst, size, 0);
}

enum pipit_status engine_context_kv_restore(struct pipit_context *ctx,
                                            const uint8_t *toks,
                                            int32_t n_perm,
                                            const uint8_t *kv,
                                            size_t kv_len) {
    for (int32_t i = 0; i < n_perm; i++) {
        int32_t t;
        memcpy(&t, toks + sizeof(int32_t) * (size_t)i, sizeof(t));
        ctx->tokens[i] = t;
    }
    if (n_perm > 0 && llama_state_seq_set_data(ctx->lctx, kv, kv_len, 0) == 0) {
        pipit_context_clear(ctx);
        return engine_context_fail(
            ctx, PIPIT_ERR_CORRUPT,
            "engine: load state: llama.cpp refused the KV data (other model or size)");
    }
    /* the cells must be positions 0..n_perm-1, the tokens the next decode continues from: a
     * forged token count would make every later decode fail on inconsistent positions */
    if (n_perm > 0) {
        llama_memory_t mem = llama_get_memory(ctx->lctx);
        llama_pos lo = llama_memory_seq_pos_min(mem, 0);
        llama_pos hi = llama_memory_seq_pos_max(mem, 0);
        if (lo != 0 || hi != n_perm - 1) {
            pipit_context_clear(ctx);
            return engine_context_fail(
                ctx, PIPIT_ERR_CORRUPT,
                "engine: load state: the KV data holds positions %d..%d, the %d "
                "tokens need 0..%d",
                (int)lo, (int)hi, (int)n_perm, (int)n_perm - 1);
        }
    }
    ctx->n_perm = n_perm;
    ctx->n_eph = 0;
    ctx->n_stale = 0;
    ctx->has_logits = false;
    return PIPIT_OK;
}

size_t pipit_context_kv_bytes(struct pipit_context *ctx) {
    if (ctx == NULL) {
        return 0;
    }
    drop_stale(ctx);
    return llama_state_seq_get_size(ctx->lctx, 0);
}

enum pipit_status pipit_context_commit(struct pipit_context *ctx) {
    if (ctx == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    ctx->n_perm += ctx->n_eph;
    ctx->n_eph = 0;
    return PIPIT_OK;
}

enum pipit_status pipit_context_clear(struct pipit_context *ctx) {
    if (ctx == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    llama_memory_clear(llama_get_memory(ctx->lctx), true);
    ctx->n_perm = 0;
    ctx->n_eph = 0;
    ctx->n_stale = 0;
    ctx->has_logits = false;
    return PIPIT_OK;
}

int32_t pipit_context_n_permanent(const struct pipit_context *ctx) {
    return ctx != NULL ? ctx->n_perm : 0;
}

int32_t pipit_context_n_ephemeral(const struct pipit_context *ctx) {
    return ctx != NULL ? ctx->n_eph : 0;
}

int32_t pipit_context_n_ctx(const struct pipit_context *ctx) {
    return ctx != NULL ? (int32_t)ctx->n_ctx : 0;
}

const int32_t *pipit_context_tokens(const struct pipit_context *ctx, int32_t *n) {
    if (ctx == NULL) {
        if (n != NULL) {
            *n = 0;
        }
        return NULL;
    }
    if (n != NULL) {
        *n = ctx->n_perm + ctx->n_eph;
    }
    return ctx->tokens;
}

const float *pipit_context_logits(struct pipit_context *ctx) {
    if (ctx == NULL || !ctx->has_logits) {
        return NULL;
    }
    return llama_get_logits_ith(ctx->lctx, -1);
}

void pipit_context_cancel(struct pipit_context *ctx) {
    if (ctx != NULL) {
        atomic_store(&ctx->cancel, true);
    }
}

void pipit_context_get_perf(const struct pipit_context *ctx, struct pipit_perf *perf) {
    if (ctx != NULL && perf != NULL) {
        *perf = ctx->perf;
    }
}

void pipit_context_reset_perf(struct pipit_context *ctx) {
    if (ctx != NULL) {
        memset(&ctx->perf, 0, sizeof(ctx->perf));
    }
}

/* ============================================================================
 * llama.cpp's side of a sampler (engine.h; the sampler itself is sampler.c) */

struct engine_draw {
    const struct pipit_model *model;
    struct llama_sampler *chain;   /* selection: greedy or top-k/top-p/temp/dist */
    struct llama_sampler *grammar; /* NULL when unconstrained (or the fast decoder's) */
    llama_token_data *cand;        /* n_vocab candidates, reused at every step */
    int32_t n_vocab;
    /* the chain keeps at most this many of the best candidates (1 greedy, top_k), 0 = no
     * bound: a draw over a large set takes them in one pass instead of running the chain over
     * every token (engine_draw_fast) */
    int32_t keep;
    uint32_t *stamp; /* n_vocab marks of the tokens a draw excludes (stamp == gen), lazily */
    uint32_t gen;
};

int32_t engine_model_n_vocab(const struct pipit_model *model) {
    return model->info.n_vocab;
}

int32_t engine_tokenize(const struct pipit_model *model,
                        const char *text,
                        int32_t len,
                        int32_t *tokens,
                        int32_t n_max,
                        bool add_special,
                        bool parse_special) {
    return llama_tokenize(model->vocab, text, len, tokens, n_max, add_special, parse_special);
}

int32_t
engine_token_to_piece(const struct pipit_model *model, int32_t token, char *buf, int32_t size) {
    return llama_token_to_piece(model->vocab, token, buf, size, 0, true);
}

struct engine_draw *engine_draw_new(const struct pipit_model *model) {
    struct engine_draw *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        return NULL;
    }
    d->model = model;
    d->n_vocab = model->info.n_vocab;
    d->cand = malloc(sizeof(llama_token_data) * (size_t)d->n_vocab);
    struct llama_sampler_chain_params cp = llama_sampler_chain_default_params();
    cp.no_perf = true;
    d->chain = llama_sampler_chain_init(cp);
    if (d->cand == NULL || d->chain == NULL) {
        engine_draw_free(d);
        return NULL;
    }
    return d;
}

bool engine_draw_set_grammar(struct engine_draw *d,
                             const char *gbnf,
                             const char *root,
                             char *why,
                             size_t why_size) {
    last_llama_error[0] = '\0';
    d->grammar = llama_sampler_init_grammar(d->model->vocab, gbnf, root);
    pipit_format(why, why_size, "%s", last_llama_error);
    return d->grammar != NULL;
}

void engine_draw_set_chain(struct engine_draw *d, const struct pipit_sampler_params *p) {
    if (p->temperature <= 0.0f) {
        llama_sampler_chain_add(d->chain, llama_sampler_init_greedy());
        d->keep = 1;
    } else {
        d->keep = p->top_k > 0 ? p->top_k : 0;
        if (p->top_k > 0) {
            llama_sampler_chain_add(d->chain, llama_sampler_init_top_k(p->top_k));
        }
        if (p->top_p > 0.0f && p->top_p < 1.0f) {
            llama_sampler_chain_add(d->chain, llama_sampler_init_top_p(p->top_p, 1));
        }
        llama_sampler_chain_add(d->chain, llama_sampler_init_temp(p->temperature));
        llama_sampler_chain_add(d->chain, llama_sampler_init_dist(p->seed));
    }
}

void engine_draw_free(struct engine_draw *d) {
    if (d == NULL) {
        return;
    }
    if (d->chain != NULL) {
        llama_sampler_free(d->chain);
    }
    if (d->grammar != NULL) {
        llama_sampler_free(d->grammar);
    }
    free(d->cand);
    free(d->stamp);
    free(d);
}

bool engine_draw_has_grammar(const struct engine_draw *d) {
    return d->grammar != NULL;
}

void engine_draw_accept(struct engine_draw *d, int32_t token) {
    llama_sampler_accept(d->chain, token);
}

void engine_draw_reset(struct engine_draw *d) {
    llama_sampler_reset(d->chain);
    if (d->grammar != NULL) {
        llama_sampler_reset(d->grammar);
    }
}

/* All tokens with their logits, unsorted. */
static void
candidates_from_logits(struct engine_draw *s, const float *logits, llama_token_data_array *arr) {
    for (int32_t i = 0; i < s->n_vocab; i++) {
        s->cand[i].id = i;
        s->cand[i].logit = logits[i];
        s->cand[i].p = 0.0f;
    }
    arr->data = s->cand;
    arr->size = (size_t)s->n_vocab;
    arr->selected = -1;
    arr->sorted = false;
}

/* Accept `token` into the grammar only if the grammar allows it (never lets llama.cpp throw). */
static bool grammar_accept_checked(struct llama_sampler *grammar, llama_token token) {
    llama_token_data one = {.id = token, .logit = 0.0f, .p = 0.0f};
    llama_token_data_array arr = {.data = &one, .size = 1, .selected = -1, .sorted = false};
    llama_sampler_apply(grammar, &arr);
    if (isinf(one.logit)) {
        return false;
    }
    llama_sampler_accept(grammar, token);
    return true;
}

bool engine_draw_grammar_accept(struct engine_draw *d, int32_t token) {
    return grammar_accept_checked(d->grammar, token);
}

/* Sift the root of a min-heap of n candidates (by logit) down to its place. */
static void heap_sift_down(llama_token_data *h, int32_t n) {
    int32_t i = 0;
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l].logit < h[m].logit) {
            m = l;
        }
        if (r < n && h[r].logit < h[m].logit) {
            m = r;
        }
        if (m == i) {
            return;
        }
        llama_token_data t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Add one candidate to a min-heap of at most `keep`: kept when it beats the worst kept. */
static void heap_offer(llama_token_data *h, int32_t *n, int32_t keep, int32_t id, float logit) {
    if (*n < keep) {
        int32_t i = (*n)++;
        h[i] = (llama_token_data){.id = id, .logit = logit, .p = 0.0f};
        while (i > 0 && h[(i - 1) / 2].logit > h[i].logit) { /* sift up */
            llama_token_data t = h[i];
            h[i] = h[(i - 1) / 2];
            h[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    } else if (logit > h[0].logit) {
        h[0] = (llama_token_data){.id = id, .logit = logit, .p = 0.0f};
        heap_sift_down(h, *n);
    }
}

/* The chain keeps only the `keep` best candidates (greedy: the best; top-k: k), so a draw from a
 * large set needs only those: one pass over the logits with a small heap, the excluded tokens
 * (rejected, masked) skipped by a stamp, instead of copying every token and running the chain's
 * sort over all of them (2-4 ms a draw at 151,936 tokens). Ties are broken by the lower token
 * id, as the greedy sampler does. Returns the candidates kept, in s->cand. */
static int32_t keep_best(struct engine_draw *s, const float *logits, const struct fg_draw *d) {
    if (s->stamp == NULL) {
        s->stamp = calloc((size_t)s->n_vocab, sizeof(uint32_t));
        if (s->stamp == NULL) {
            return -1;
        }
    }
    if (++s->gen == 0) { /* wrapped: clear the marks */
        memset(s->stamp, 0, sizeof(uint32_t) * (size_t)s->n_vocab);
        s->gen = 1;
    }
    for (int32_t k = 0; k < d->n_rejected; k++) {
        s->stamp[d->rejected[k]] = s->gen;
    }
    for (int32_t k = 0; d->whole_vocab && k < d->n_masked; k++) {
        s->stamp[d->masked[k]] = s->gen;
    }
    int32_t n = 0;
    if (d->whole_vocab) {
        int32_t from = d->ascii_len != NULL ? d->ascii_from : INT32_MAX;
        const bool *rf = d->first_byte != NULL ? d->refused_first : NULL;
        for (int32_t t = 0; t < s->n_vocab; t++) {
            if ((n < s->keep || logits[t] > s->cand[0].logit) && s->stamp[t] != s->gen &&
                (from == INT32_MAX || d->ascii_len[t] < from) &&
                (rf == NULL || !rf[d->first_byte[t]])) {
                heap_offer(s->cand, &n, s->keep, t, logits[t]);
            }
        }
    } else {
        size_t total = (size_t)d->n_list + (size_t)d->n_extra;
        for (size_t i = 0; i < total; i++) {
            int32_t t = i < (size_t)d->n_list ? d->list[i] : d->extra[i - (size_t)d->n_list];
            if ((n < s->keep || logits[t] > s->cand[0].logit) && s->stamp[t] != s->gen) {
                heap_offer(s->cand, &n, s->keep, t, logits[t]);
            }
        }
    }
    return n;
}

/* Draw as `d` says (fg_sampler.h); *drawn false when the one candidate is taken without a draw.
 * Returns the token, -1 when the draw selected nothing (or a masked token), -2 when there was
 * no candidate at all. */
int32_t
engine_draw_fast(struct engine_draw *s, const float *logits, const struct fg_draw *d, bool *drawn) {
    llama_token_data_array arr;
    *drawn = true;
    size_t n_all = d->whole_vocab ? (size_t)s->n_vocab : (size_t)d->n_list + (size_t)d->n_extra;
    if (s->keep > 0 && n_all > 4 * (size_t)s->keep) {
        int32_t n = keep_best(s, logits, d);
        if (n == 0) {
            return -1; /* every candidate excluded */
        }
        if (n > 0) {
            arr = (llama_token_data_array){
                .data = s->cand, .size = (size_t)n, .selected = -1, .sorted = false};
            llama_sampler_apply(s->chain, &arr);
            if (arr.selected < 0 || (size_t)arr.selected >= arr.size) {
                return -1;
            }
            return arr.data[arr.selected].id;
        }
    }
    if (d->whole_vocab) {
        candidates_from_logits(s, logits, &arr);
        for (int32_t k = 0; k < d->n_rejected; k++) {
            s->cand[d->rejected[k]].logit = -INFINITY;
        }
        for (int32_t k = 0; k < d->n_masked; k++) {
            s->cand[d->masked[k]].logit = -INFINITY;
        }
        bool by_len = d->ascii_len != NULL && d->ascii_from != INT32_MAX;
        const bool *rf = d->first_byte != NULL ? d->refused_first : NULL;
        for (int32_t t = 0; (by_len || rf != NULL) && t < s->n_vocab; t++) {
            if ((by_len && d->ascii_len[t] >= d->ascii_from) ||
                (rf != NULL && rf[d->first_byte[t]])) {
                s->cand[t].logit = -INFINITY;
            }
        }
    } else {
        size_t total = (size_t)d->n_list + (size_t)d->n_extra;
        if (total == 0) {
            return -2;
        }
        for (size_t i = 0; i < total; i++) {
            llama_token t = i < (size_t)d->n_list ? d->list[i] : d->extra[i - (size_t)d->n_list];
            s->cand[i] = (llama_token_data){.id = t, .logit = logits[t], .p = 0.0f};
            for (int32_t k = 0; k < d->n_rejected; k++) {
                if (d->rejected[k] == t) {
                    s->cand[i].logit = -INFINITY;
                }
            }
        }
        if (total == 1 && d->exact) {
            *drawn = false; /* forced: no draw */
            return s->cand[0].id;
        }
        arr = (llama_token_data_array){
            .data = s->cand, .size = total, .selected = -1, .sorted = false};
    }
    llama_sampler_apply(s->chain, &arr);
    if (arr.selected < 0 || (size_t)arr.selected >= arr.size ||
        (!d->exact && isinf(arr.data[arr.selected].logit))) {
        return -1;
    }
    return arr.data[arr.selected].id;
}

/* One draw from `logits` with the chain; `constrained`: the grammar sampler's mask applies (the
 * draw is first made without it and kept when the grammar allows it). The token is accepted
 * into the chain (and the grammar). -1 when every token is masked. */
int32_t engine_draw_sample(struct engine_draw *d,
                           const float *logits,
                           bool constrained,
                           struct pipit_perf *perf) {
    llama_token_data_array arr;
    /* Constrained: sample without the grammar first and keep the token when the grammar allows
     * it; mask the whole vocabulary only on rejection. Greedy picks the same token as masking
     * first; temperature sampling keeps the masked distribution (a rejected draw is redrawn
     * from the masked candidates), except that top-k/top-p then act on the unmasked ranking. */
    for (int pass = constrained ? 0 : 1; pass < 2; pass++) {
        candidates_from_logits(d, logits, &arr);
        if (pass == 1 && constrained) {
            double tg = pipit_now_ms();
            llama_sampler_apply(d->grammar, &arr);
            perf->t_constraint_ms += pipit_now_ms() - tg;
        }
        llama_sampler_apply(d->chain, &arr);
        if (pass == 0 && arr.selected >= 0 && (size_t)arr.selected < arr.size) {
            llama_token_data one = arr.data[arr.selected];
            one.logit = 0.0f;
            llama_token_data_array check = {
                .data = &one, .size = 1, .selected = -1, .sorted = false};
            double tg = pipit_now_ms();
            llama_sampler_apply(d->grammar, &check);
            perf->t_constraint_ms += pipit_now_ms() - tg;
            if (!isinf(one.logit)) {
                perf->n_grammar_fast++;
                break; /* allowed: keep the draw */
            }
        }
    }
    int32_t result;
    if (arr.selected < 0 || (size_t)arr.selected >= arr.size ||
        isinf(arr.data[arr.selected].logit)) {
        result = -1;
    } else {
        result = arr.data[arr.selected].id;
        llama_sampler_accept(d->chain, result);
        if (constrained) {
            double tg = pipit_now_ms();
            llama_sampler_accept(d->grammar, result); /* allowed: it survived the mask */
            perf->t_constraint_ms += pipit_now_ms() - tg;
            perf->n_draws++;
        }
    }
    return result;
}

enum pipit_status pipit_gbnf_match(const struct pipit_model *model,
                                   const char *gbnf,
                                   const char *text,
                                   bool *prefix_ok,
                                   bool *complete) {
    if (model == NULL || gbnf == NULL || text == NULL || prefix_ok == NULL || complete == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *prefix_ok = false;
    *complete = false;
    last_llama_error[0] = '\0';
    struct llama_sampler *g = llama_sampler_init_grammar(model->vocab, gbnf, "root");
    if (g == NULL) {
        return PIPIT_ERR_GRAMMAR;
    }
    /* Byte by byte through single-byte tokens: the grammar works on text, and a tokenizer
     * could add a dummy space prefix. */
    bool ok = true;
    for (const unsigned char *c = (const unsigned char *)text; *c != '\0' && ok; c++) {
        int32_t tok = model->byte_token[*c];
        if (tok < 0) {
            llama_sampler_free(g);
            return PIPIT_ERR_TOKENIZE;
        }
        ok = grammar_accept_checked(g, tok);
    }
    *prefix_ok = ok;
    if (ok) {
        llama_token eos = llama_vocab_eos(model->vocab);
        if (eos < 0) {
            eos = llama_vocab_eot(model->vocab);
        }
        if (eos >= 0) {
            llama_token_data one = {.id = eos, .logit = 0.0f, .p = 0.0f};
            llama_token_data_array arr = {.data = &one, .size = 1, .selected = -1, .sorted = false};
            llama_sampler_apply(g, &arr);
            *complete = !isinf(one.logit);
        }
    }
    llama_sampler_free(g);
    return PIPIT_OK;
}
