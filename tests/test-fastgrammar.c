/*
 * test-fastgrammar.c - pipit's own constrained decoder (src/fastgrammar.c, src/fg_*.c, driven by
 * src/engine.c's sampler) against llama.cpp's GBNF engine.
 *
 *   test-fastgrammar             model: the automaton accepts exactly what GBNF accepts on a
 *                                corpus per pack and syntax (valid calls and their mutations);
 *                                greedy decodes equal the GBNF sampler's token for token;
 *                                jump-forward changes nothing where the tokens coincide; forced
 *                                tokens are never drawn; an out-of-range number goes through
 *                                both decoders as written and validation refuses it
 *   test-fastgrammar --property  model;slow: 200 constrained decodes per pack and vocabulary
 *                                (32K llama-spm, 151K qwen2) with jump-forward: every call parses
 *                                and validates, or is refused only for a number out of its range
 *                                (the grammar guarantees shape, not ranges; PIPIT_PROPERTY_SEEDS
 *                                overrides the count)
 */
#define _POSIX_C_SOURCE 200809L
#include "fastgrammar.h"
#include "fg_cache.h"
#include "fileio.h"
#include "session.h"
#include "status.h"
#include "strbuf.h"
#include "testutil.h"
#include "toolspec.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *PACKS[] = {PIPIT_SOURCE_DIR "/tools/camera.json",
                              PIPIT_SOURCE_DIR "/tools/phone.json"};

static struct pipit_toolset *load_pack(const char *path) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(path, &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return ts;
}

static struct pipit_grammar *compile(struct pipit_toolset *ts, enum pipit_call_syntax syn, int s) {
    struct pipit_grammar *g = NULL;
    struct pipit_error err;
    struct pipit_grammar_params gp = pipit_grammar_default_params();
    gp.syntax = syn;
    gp.max_string_chars = (uint32_t)s;
    assert_int_equal(pipit_grammar_compile(ts, &gp, &g, &err), PIPIT_OK);
    return g;
}

/* ============================================================================ decoding */

struct decode_stats {
    int64_t tokens, forced, draws, decode_calls;
    double t_constraint_ms;
};

enum {
    MAX_TOKENS = 256
};

/* One constrained decode after the prompt's last token; returns the text (caller frees). */
static char *decode(struct pipit_model *m,
                    struct pipit_context *ctx,
                    const int32_t *last,
                    const struct pipit_sampler_params *sp,
                    bool jump,
                    int32_t *toks,
                    int32_t *n_toks,
                    struct decode_stats *st) {
    struct pipit_sampler *s = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_sampler_init(m, sp, &s, &err), PIPIT_OK);
    assert_int_equal(pipit_context_rewind(ctx), PIPIT_OK);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, last, 1), PIPIT_OK);
    pipit_context_reset_perf(ctx);
    size_t cap = MAX_TOKENS * 64 + 1, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    int32_t n = 0;
    while (n < MAX_TOKENS) {
        if (jump) {
            int32_t forced[64];
            int32_t nf = pipit_sampler_forced(s, ctx, forced, 64);
            if (nf > 0) {
                if (n + nf > MAX_TOKENS) {
                    break;
                }
                assert_int_equal(pipit_context_decode_forced(ctx, forced, nf), PIPIT_OK);
                for (int32_t i = 0; i < nf; i++) {
                    len += (size_t)pipit_token_piece(m, forced[i], text + len, 63);
                    toks[n++] = forced[i];
                }
                continue;
            }
        }
        int32_t tok = pipit_sampler_sample(s, ctx);
        assert_true(tok >= 0);
        if (pipit_model_token_is_eog(m, tok)) {
            break;
        }
        len += (size_t)pipit_token_piece(m, tok, text + len, 63);
        toks[n++] = tok;
        assert_int_equal(pipit_context_decode_token(ctx, tok), PIPIT_OK);
    }
    text[len] = '\0';
    *n_toks = n;
    struct pipit_perf pf;
    pipit_context_get_perf(ctx, &pf);
    if (st != NULL) {
        st->tokens += n;
        st->forced += pf.n_forced_tokens;
        st->draws += pf.n_draws;
        st->decode_calls += pf.n_decode_calls;
        st->t_constraint_ms += pf.t_constraint_ms;
    }
    pipit_sampler_free(s);
    return text;
}

struct rig {
    struct pipit_model *m;
    struct pipit_context *ctx;
    int32_t *prompt;
    int32_t np;
};

static void rig_init(struct rig *r, const char *model, const char *prompt) {
    r->m = test_load_model(model);
    r->ctx = test_new_context(r->m, 1024);
    r->prompt = test_tokens(r->m, prompt, &r->np);
    assert_int_equal(pipit_context_append(r->ctx, PIPIT_REGION_PERMANENT, r->prompt, r->np - 1),
                     PIPIT_OK);
}

/* The same model and context with another prompt (the 151K vocabulary is loaded and indexed
 * once per test, not once per prompt). */
static void rig_prompt(struct rig *r, const char *prompt) {
    pipit_free(r->prompt);
    assert_int_equal(pipit_context_clear(r->ctx), PIPIT_OK);
    r->prompt = test_tokens(r->m, prompt, &r->np);
    assert_int_equal(pipit_context_append(r->ctx, PIPIT_REGION_PERMANENT, r->prompt, r->np - 1),
                     PIPIT_OK);
}

static void rig_free(struct rig *r) {
    pipit_free(r->prompt);
    pipit_context_free(r->ctx);
    pipit_model_free(r->m);
}

static struct pipit_sampler_params
sampling(const char *grammar, struct pipit_fastgrammar *fg, float temp, uint32_t seed) {
    struct pipit_sampler_params sp = pipit_sampler_default_params();
    sp.grammar = grammar;
    sp.fast_grammar = fg;
    sp.temperature = temp;
    sp.top_k = 0;
    sp.top_p = 1.0f;
    sp.seed = seed;
    return sp;
}

/* ============================================================================ differential */

static bool utf8_valid(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p != '\0') {
        int n = *p < 0x80             ? 0
                : (*p & 0xE0) == 0xC0 ? 1
                : (*p & 0xF0) == 0xE0 ? 2
                : (*p & 0xF8) == 0xF0 ? 3
                                      : -1;
        if (n < 0 || (n == 1 && *p < 0xC2)) {
            return false;
        }
        uint32_t cp = n == 0 ? *p : n == 1 ? (*p & 0x1Fu) : n == 2 ? (*p & 0x0Fu) : (*p & 0x07u);
        p++;
        for (int i = 0; i < n; i++, p++) {
            if ((*p & 0xC0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (*p & 0x3Fu);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF)) {
            return false;
        }
    }
    return true;
}

struct diff_stats {
    int checked, accepted, prefixes, rejected;
    int other; /* decoded calls that name a tool the set does not have */
};

static void check_one(struct pipit_model *m,
                      struct pipit_fastgrammar *fg,
                      const char *gbnf,
                      const char *text,
                      struct diff_stats *ds) {
    if (!utf8_valid(text)) {
        return; /* the automaton is deliberately stricter on malformed UTF-8 (separate test) */
    }
    bool gp = false, gc = false, fp = false, fc = false;
    assert_int_equal(pipit_gbnf_match(m, gbnf, text, &gp, &gc), PIPIT_OK);
    assert_int_equal(pipit_fastgrammar_match(fg, gbnf, text, &fp, &fc), PIPIT_OK);
    if (gp != fp || gc != fc) {
        fail_msg("disagreement on \"%s\": gbnf prefix=%d complete=%d, fast prefix=%d "
                 "complete=%d",
                 text, gp, gc, fp, fc);
    }
    ds->checked++;
    ds->accepted += fc;
    ds->prefixes += fp && !fc;
    ds->rejected += !fp;
}

static uint32_t rng_next(uint32_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Replace text[at..at+n) by `with` into out. */
static void splice(char *out, size_t cap, const char *text, size_t at, size_t n, const char *with) {
    snprintf(out, cap, "%.*s%s%s", (int)at, text, with, text + at + n);
}

/* Mutations of a valid call: truncations, byte edits, numbers out of range, extra spaces, key
 * order, wrong enum values, unknown tool. */
static void mutate_and_check(struct pipit_model *m,
                             struct pipit_fastgrammar *fg,
                             const char *gbnf,
                             const char *text,
                             uint32_t *rng,
                             struct diff_stats *ds) {
    size_t n = strlen(text);
    char buf[4096];
    if (n == 0 || n > 3000) {
        return;
    }
    check_one(m, fg, gbnf, text, ds);
    for (int k = 0; k < 3; k++) { /* truncations */
        size_t at = rng_next(rng) % n;
        snprintf(buf, sizeof(buf), "%.*s", (int)at, text);
        check_one(m, fg, gbnf, buf, ds);
    }
    static const char *inserts[] = {" ",  "  ", "x", "0", "9",    "-",  ".",     "\"",       ",",
                                    ", ", "}",  ")", "=", "1234", ".5", ".0001", "\xc3\xa9", "\\"};
    for (int k = 0; k < 4; k++) { /* insertions, deletions, replacements */
        size_t at = rng_next(rng) % n;
        const char *ins = inserts[rng_next(rng) % (sizeof(inserts) / sizeof(inserts[0]))];
        splice(buf, sizeof(buf), text, at, 0, ins);
        check_one(m, fg, gbnf, buf, ds);
        splice(buf, sizeof(buf), text, at, 1, "");
        check_one(m, fg, gbnf, buf, ds);
        splice(buf, sizeof(buf), text, at, 1, ins);
        check_one(m, fg, gbnf, buf, ds);
    }
    /* numbers: replace a digit run with values around the edges of typical ranges */
    static const char *nums[] = {
        "0",      "1",    "-1",   "00", "01", "-0",     "0.5",        "0.499",      "10",
        "10.001", "100",  "101",  "2",  "-2", "-2.001", "1.0",        "1.000",      "1.0000",
        "9.999",  "1440", "1441", "49", "50", "3",      "1000000000", "1000000001", "0."};
    for (size_t i = 0; i < n; i++) {
        if (text[i] >= '0' && text[i] <= '9' &&
            (i == 0 || text[i - 1] == '=' || text[i - 1] == ' ')) {
            size_t j = i;
            while (j < n &&
                   ((text[j] >= '0' && text[j] <= '9') || text[j] == '.' || text[j] == '-')) {
                j++;
            }
            for (size_t q = 0; q < sizeof(nums) / sizeof(nums[0]); q++) {
                splice(buf, sizeof(buf), text, i, j - i, nums[q]);
                check_one(m, fg, gbnf, buf, ds);
            }
            break;
        }
    }
    /* enum values and strings: a letter changed inside the first quoted value */
    const char *q = strchr(text, '"');
    if (q != NULL && q[1] != '\0') {
        size_t at = (size_t)(q - text) + 1;
        char c[2] = {text[at] == 'a' ? 'b' : 'a', '\0'};
        splice(buf, sizeof(buf), text, at, 1, c);
        check_one(m, fg, gbnf, buf, ds);
    }
    /* key order: swap the first two ", "-separated members */
    const char *s1 = strstr(text, ", ");
    const char *open = strpbrk(text, "({");
    if (s1 != NULL && open != NULL && open < s1) {
        const char *a0 = open + 1;
        if (*a0 == '"' && strstr(text, "\"arguments\": {") != NULL) {
            a0 = strstr(text, "\"arguments\": {") + 14;
        }
        const char *sep = strstr(a0, ", ");
        if (sep != NULL) {
            const char *b0 = sep + 2;
            const char *b1 = b0;
            while (*b1 != '\0' && *b1 != ',' && *b1 != ')' && *b1 != '}') {
                b1++;
            }
            snprintf(buf, sizeof(buf), "%.*s%.*s, %.*s%s", (int)(a0 - text), text, (int)(b1 - b0),
                     b0, (int)(sep - a0), a0, b1);
            check_one(m, fg, gbnf, buf, ds);
        }
    }
    /* unknown tool: a letter of the name changed */
    const char *nm = strstr(text, "<call>");
    size_t at = nm != NULL ? (size_t)(nm - text) + 6 : 0;
    if (nm == NULL && (nm = strstr(text, "\"name\": \"")) != NULL) {
        at = (size_t)(nm - text) + 9;
    }
    if (nm != NULL && at < n) {
        splice(buf, sizeof(buf), text, at, 1, "q");
        check_one(m, fg, gbnf, buf, ds);
        splice(buf, sizeof(buf), text, at, 0, "x");
        check_one(m, fg, gbnf, buf, ds);
    }
}

/* Valid calls come from constrained decodes with a random model (temperature 1, the fast
 * decoder), then each is checked with its mutations, against the call grammar and (the part
 * after the tool's head) against that tool's argument grammar. */
static void differential(const char *model_path, enum pipit_call_syntax syn, int n_calls) {
    struct rig r;
    rig_init(&r, model_path, "Tools: camera controls.\nUser: please do something\nAssistant:");
    struct pipit_fastgrammar *fg = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_fastgrammar_init(r.m, &fg, &err), PIPIT_OK);
    for (size_t p = 0; p < 2; p++) {
        struct pipit_toolset *ts = load_pack(PACKS[p]);
        struct pipit_grammar *g = compile(ts, syn, 12);
        const char *call = pipit_grammar_call(g);
        struct diff_stats ds = {0};
        uint32_t rng = 12345u + (uint32_t)p;
        int32_t toks[MAX_TOKENS], nt;
        for (int i = 0; i < n_calls; i++) {
            struct pipit_sampler_params sp = sampling(call, fg, 1.0f, (uint32_t)(i + 1));
            char *text = decode(r.m, r.ctx, r.prompt + r.np - 1, &sp, true, toks, &nt, NULL);
            mutate_and_check(r.m, fg, call, text, &rng, &ds);
            struct pipit_call c;
            assert_int_equal(pipit_call_parse(syn, text, &c, &err), PIPIT_OK);
            size_t ti = 0;
            while (ti < pipit_toolset_n_tools(ts) &&
                   strcmp(pipit_toolset_tool_name(ts, ti), c.name) != 0) {
                ti++;
            }
            pipit_call_clear(&c);
            /* the arguments alone, against the tool's argument grammar (a name the set does
             * not have is the "none of these tools" outcome: no arguments, docs/grammar.md) */
            const char *args = strchr(text, syn == PIPIT_SYNTAX_HERMES ? '{' : '(');
            if (syn == PIPIT_SYNTAX_HERMES) {
                args = strstr(text, "\"arguments\": ") + 13;
            }
            if (ti < pipit_toolset_n_tools(ts)) {
                mutate_and_check(r.m, fg, pipit_grammar_args(g, ti), args, &rng, &ds);
            } else {
                ds.other++; /* the "none of these tools" outcome: none() */
                assert_true(strstr(text, syn == PIPIT_SYNTAX_HERMES ? "\"none\"" : "none(") !=
                            NULL);
                assert_string_equal(args, syn == PIPIT_SYNTAX_HERMES ? "{}}\n</tool_call>" : "()");
            }
            /* the names grammar on the call's prefixes */
            for (size_t k = 0; k <= strlen(text) && k < 80; k += 3) {
                char pre[96];
                snprintf(pre, sizeof(pre), "%.*s", (int)k, text);
                check_one(r.m, fg, pipit_grammar_names(g), pre, &ds);
            }
            free(text);
        }
        /* hand-written edge cases */
        static const char *edge[] = {
            "<call>set_zoom(level=0.5)",
            "<call>set_zoom(level=0.49)",
            "<call>none()", /* "none of these tools" */
            "<call>none(level=2)",
            "<call>make_coffee()",
            "<call>set_zoom(level=10)",
            "<call>set_zoom(level=10.0)",
            "<call>set_zoom(level=10.001)",
            "<call>set_zoom(level=2.25)",
            "<call>set_zoom(level=2.2500)",
            "<call>set_zoom(level= 2)",
            "<call>set_zoom(level=02)",
            "<call>set_exposure(ev=-0)",
            "<call>set_exposure(ev=-2)",
            "<call>set_exposure(ev=-2.0)",
            "<call>set_exposure(ev=-2.1)",
            "<call>set_timer(seconds=3)",
            "<call>set_timer(seconds=4)",
            "<call>set_timer(minutes=1440)",
            "<call>set_timer(minutes=0)",
            "<call>set_alarm(time=\"07:00\")",
            "<call>set_alarm(label=\"x\", time=\"07:00\")",
            "<call>set_alarm(time=\"07:00\", label=\"\xe6\x97\xa5\")",
            "<call>read_messages()",
            "<call>read_messages( )",
            "<call>take_photo()",
            "<call>set_flash(mode=\"on\")",
            "<call>set_flash(mode=\"ON\")",
            "<call>set_flash(mode='on')",
            "<call>tap_to_focus(x=0.5, y=1)",
            "<call>tap_to_focus(y=1, x=0.5)",
            "<call>tap_to_focus(x=0.5,y=1)",
            "<call>send_message(recipient=\"123456789012\", body=\"hi\")",
            "<call>send_message(recipient=\"1234567890123\", body=\"hi\")",
            "<tool_call>\n{\"name\": \"take_photo\", \"arguments\": {}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"set_zoom\", \"arguments\": {\"level\": 3}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"set_zoom\", \"arguments\": {\"level\":3}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"read_messages\", \"arguments\": {}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"set_timer\", \"arguments\": {\"minutes\": "
            "15}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"set_timer\", \"arguments\": {\"minutes\": "
            "15}}\n</tool_call>\n",
            "",
            "<",
            "<call>",
            "<tool_call>\n"};
        for (size_t e = 0; e < sizeof(edge) / sizeof(edge[0]); e++) {
            mutate_and_check(r.m, fg, call, edge[e], &rng, &ds);
        }
        print_message("%s, %s, %s syntax: %d strings agree (%d complete, %d prefixes, %d "
                      "rejected); %d of %d calls were none()\n",
                      model_path, PACKS[p], pipit_call_syntax_str(syn), ds.checked, ds.accepted,
                      ds.prefixes, ds.rejected, ds.other, n_calls);
        assert_true(ds.accepted > 0 && ds.rejected > 0 && ds.prefixes > 0);
        pipit_grammar_free(g);
        pipit_toolset_free(ts);
    }
    pipit_fastgrammar_free(fg);
    rig_free(&r);
}

static void test_differential_pipit(void **state) {
    (void)state;
    differential(TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT, 40);
}

static void test_differential_hermes(void **state) {
    (void)state;
    differential(TEST_MODEL_QWEN, PIPIT_SYNTAX_HERMES, 20);
}

/* The automaton reads well-formed UTF-8 only; llama.cpp's decoder lets some malformed bytes
 * through (a documented, deliberate difference: such output would not parse as JSON anyway). */
static void test_malformed_utf8(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_QWEN);
    struct pipit_fastgrammar *fg = NULL;
    assert_int_equal(pipit_fastgrammar_init(m, &fg, NULL), PIPIT_OK);
    const char *g = "root ::= \"\\\"\" [^\"\\\\\\x00-\\x1f]{0,8} \"\\\"\"\n";
    static const char *bad[] = {"\"\xc0\xa2", "\"\xed\xa0\x80\"", "\"\x80\"",
                                "\"\xf8\x88\x80\x80\x80\"", "\"\xe0\x80\xaf\""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        bool p = true, c = true, gp = false, gc = false;
        assert_int_equal(pipit_fastgrammar_match(fg, g, bad[i], &p, &c), PIPIT_OK);
        assert_false(p);
        assert_int_equal(pipit_gbnf_match(m, g, bad[i], &gp, &gc), PIPIT_OK);
        print_message("malformed UTF-8 case %zu: fast rejects, gbnf prefix=%d complete=%d\n", i, gp,
                      gc);
    }
    bool p = false, c = false;
    assert_int_equal(
        pipit_fastgrammar_match(fg, g, "\"\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\"", &p, &c),
        PIPIT_OK);
    assert_true(p && c);
    /* outside the subset: recursion is refused, and a sampler falls back to llama.cpp's */
    struct pipit_error err;
    assert_int_equal(pipit_fastgrammar_add(fg, "root ::= \"a\" root | \"b\"\n", &err),
                     PIPIT_ERR_GRAMMAR);
    assert_non_null(strstr(err.text, "recursive"));
    struct pipit_sampler_params sp = sampling("root ::= \"a\" root | \"b\"\n", fg, 0.0f, 1);
    struct pipit_sampler *s = NULL;
    assert_int_equal(pipit_sampler_init(m, &sp, &s, &err), PIPIT_OK);
    pipit_sampler_free(s);
    struct pipit_fastgrammar_info info;
    pipit_fastgrammar_get_info(fg, &info);
    assert_int_equal(info.n_unsupported, 1);
    pipit_fastgrammar_free(fg);
    pipit_fastgrammar_free(NULL);
    pipit_model_free(m);
}

/* ============================================================================ decoding */

/* Greedy: the fast decoder picks the same tokens as llama.cpp's grammar sampler; with
 * jump-forward, a replay token by token of the same sequence draws the same sampled tokens
 * (batched forced decoding changes nothing); forced tokens are never drawn. */
static void greedy_equal(const char *model_path, enum pipit_call_syntax syn) {
    static const char *prompts[] = {
        "Tools: camera controls.\nUser: zoom in\nAssistant:",
        "User: send a message to Ann saying hi\nAssistant:",
        "System: call tools.\nUser: set a timer for 10 minutes\nAssistant:",
        "User: take a photo\nAssistant:",
    };
    /* one model, context and automaton index for every pack and prompt */
    struct rig r;
    rig_init(&r, model_path, prompts[0]);
    struct pipit_fastgrammar *fg = NULL;
    assert_int_equal(pipit_fastgrammar_init(r.m, &fg, NULL), PIPIT_OK);
    for (size_t p = 0; p < 2; p++) {
        struct pipit_toolset *ts = load_pack(PACKS[p]);
        struct pipit_grammar *g = compile(ts, syn, 12);
        for (size_t q = 0; q < sizeof(prompts) / sizeof(prompts[0]); q++) {
            rig_prompt(&r, prompts[q]);
            const char *gram = pipit_grammar_call(g);
            int32_t ta[MAX_TOKENS], tb[MAX_TOKENS], tc[MAX_TOKENS], na, nb, nc;
            struct pipit_sampler_params sa = sampling(gram, NULL, 0.0f, 1);
            struct pipit_sampler_params sb = sampling(gram, fg, 0.0f, 1);
            struct decode_stats da = {0}, db = {0}, dc = {0};
            char *xa = decode(r.m, r.ctx, r.prompt + r.np - 1, &sa, false, ta, &na, &da);
            char *xb = decode(r.m, r.ctx, r.prompt + r.np - 1, &sb, false, tb, &nb, &db);
            assert_string_equal(xa, xb);
            assert_int_equal(na, nb);
            assert_memory_equal(ta, tb, sizeof(int32_t) * (size_t)na);
            assert_int_equal(db.draws + db.forced, db.tokens + 1); /* + the final EOG */
            /* jump-forward */
            char *xc = decode(r.m, r.ctx, r.prompt + r.np - 1, &sb, true, tc, &nc, &dc);
            assert_true(dc.forced > 0);
            assert_int_equal(dc.draws + dc.forced, dc.tokens + 1);
            struct pipit_call call;
            struct pipit_error err;
            assert_int_equal(pipit_call_parse(syn, xc, &call, &err), PIPIT_OK);
            pipit_call_clear(&call);
            /* llama.cpp's grammar sampler drawing, pipit's automaton jumping forward (the
             * agent's --gbnf): the same tokens, forced and drawn, as pipit's decoder */
            struct pipit_sampler_params sd = sb;
            sd.gbnf_draws = true;
            int32_t td[MAX_TOKENS], nd;
            struct decode_stats dd = {0};
            char *xd = decode(r.m, r.ctx, r.prompt + r.np - 1, &sd, true, td, &nd, &dd);
            assert_string_equal(xd, xc);
            assert_int_equal(nd, nc);
            assert_memory_equal(td, tc, sizeof(int32_t) * (size_t)nc);
            assert_true(dd.forced > 0); /* (a draw with one token allowed counts as forced in
                                           pipit's decoder, as a draw in llama.cpp's) */
            free(xd);
            /* replay the jump-forward sequence with every forced token decoded on its own
             * (no batch): the same tokens are forced and every drawn token is the same */
            struct pipit_sampler *s = NULL;
            assert_int_equal(pipit_sampler_init(r.m, &sb, &s, NULL), PIPIT_OK);
            assert_int_equal(pipit_context_rewind(r.ctx), PIPIT_OK);
            assert_int_equal(
                pipit_context_append(r.ctx, PIPIT_REGION_EPHEMERAL, r.prompt + r.np - 1, 1),
                PIPIT_OK);
            int same_prefix = 0;
            for (int32_t i = 0; i < nc;) {
                int32_t forced[64];
                int32_t nf = pipit_sampler_forced(s, r.ctx, forced, 64);
                for (int32_t k = 0; k < nf; k++, i++) {
                    assert_true(i < nc);
                    assert_int_equal(forced[k], tc[i]);
                    assert_int_equal(pipit_context_decode_token(r.ctx, forced[k]), PIPIT_OK);
                    same_prefix++;
                }
                if (nf > 0) {
                    continue;
                }
                int32_t tok = pipit_sampler_sample(s, r.ctx);
                assert_int_equal(tok, tc[i]);
                assert_int_equal(pipit_context_decode_token(r.ctx, tok), PIPIT_OK);
                same_prefix++;
                i++;
            }
            pipit_sampler_free(s);
            if (q == 0) {
                print_message("%s, %s, %s: greedy %d tokens equal to GBNF; jump-forward %d "
                              "tokens (%lld forced, %lld drawn), %d equal in replay\n",
                              model_path, PACKS[p], pipit_call_syntax_str(syn), na, nc,
                              (long long)dc.forced, (long long)dc.draws, same_prefix);
            }
            free(xa);
            free(xb);
            free(xc);
        }
        pipit_grammar_free(g);
        pipit_toolset_free(ts);
    }
    pipit_fastgrammar_free(fg);
    rig_free(&r);
}

static void test_greedy_spm(void **state) {
    (void)state;
    greedy_equal(TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT);
}

static void test_greedy_qwen(void **state) {
    (void)state;
    greedy_equal(TEST_MODEL_QWEN, PIPIT_SYNTAX_HERMES);
}

/* ============================================================================ no substitution */

/* For each byte, a token whose text is exactly that byte (-1: none). */
static void byte_tokens(struct pipit_model *m, int32_t out[256]) {
    struct pipit_model_info info;
    pipit_model_get_info(m, &info);
    for (int b = 0; b < 256; b++) {
        out[b] = -1;
    }
    for (int32_t t = 0; t < info.n_vocab; t++) {
        char piece[8];
        if (pipit_token_piece(m, t, piece, sizeof(piece)) == 1 &&
            out[(unsigned char)piece[0]] < 0 && !pipit_model_token_is_eog(m, t)) {
            out[(unsigned char)piece[0]] = t;
        }
    }
}

/* Feed `text` byte by byte into a fresh greedy sampler for `gbnf` (pipit's decoder when `fg`,
 * else llama.cpp's) and into the model. Returns how many bytes the grammar took; *eog_next is
 * set when, after the whole text, the model's next token (sampled under the grammar) ends
 * generation. */
static size_t feed(struct rig *r,
                   struct pipit_fastgrammar *fg,
                   const char *gbnf,
                   const int32_t bytes[256],
                   const char *text,
                   bool *eog_next) {
    struct pipit_sampler_params sp = sampling(gbnf, fg, 0.0f, 1);
    struct pipit_sampler *s = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_sampler_init(r->m, &sp, &s, &err), PIPIT_OK);
    assert_int_equal(pipit_context_rewind(r->ctx), PIPIT_OK);
    assert_int_equal(pipit_context_append(r->ctx, PIPIT_REGION_EPHEMERAL, r->prompt + r->np - 1, 1),
                     PIPIT_OK);
    size_t i = 0;
    for (; text[i] != '\0'; i++) {
        int32_t tok = bytes[(unsigned char)text[i]];
        assert_true(tok >= 0);
        if (pipit_sampler_accept(s, tok) != PIPIT_OK) {
            break;
        }
        assert_int_equal(pipit_context_decode_token(r->ctx, tok), PIPIT_OK);
    }
    *eog_next = false;
    if (text[i] == '\0') {
        int32_t tok = pipit_sampler_sample(s, r->ctx);
        *eog_next = tok >= 0 && pipit_model_token_is_eog(r->m, tok);
    }
    pipit_sampler_free(s);
    return i;
}

/* Refuse, never substitute (docs/grammar.md): with a real model, under the call grammar, both
 * decoders take an out-of-range number exactly as written (the old range-forcing grammar took
 * "5" of "50" and then only ")" or a fraction: the person asked for 50x and got 5x); the call is
 * then complete, parses, and validation refuses it with the limit. A wrong JSON type is still
 * refused by the grammar. */
static void no_substitution(const char *model_path, enum pipit_call_syntax syn) {
    struct rig r;
    rig_init(&r, model_path, "Tools: camera controls.\nUser: zoom 50x\nAssistant:");
    int32_t bytes[256];
    byte_tokens(r.m, bytes);
    struct pipit_fastgrammar *fg = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_fastgrammar_init(r.m, &fg, &err), PIPIT_OK);
    struct pipit_toolset *ts = load_pack(PACKS[0]);
    struct pipit_grammar *g = compile(ts, syn, 12);
    static const char *const cases[][3] = {
        /* tool, arguments, what validation says */
        {"set_zoom", "level=50", "above the maximum 10"},
        {"set_zoom", "level=0.1", "below the minimum 0.5"},
        {"set_exposure", "ev=-3", "below the minimum -2"},
        {"set_timer", "seconds=7", "is not one of"},
        {"set_jpeg_quality", "quality=1000", "above the maximum 100"},
        {"set_zoom", "level=\"50\"", NULL}, /* a string: not a call the grammar allows */
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        char text[256];
        const char *eq = strchr(cases[k][1], '=');
        if (syn == PIPIT_SYNTAX_HERMES) {
            snprintf(text, sizeof(text),
                     "<tool_call>\n{\"name\": \"%s\", \"arguments\": {\"%.*s\": %s}}\n</tool_call>",
                     cases[k][0], (int)(eq - cases[k][1]), cases[k][1], eq + 1);
        } else {
            snprintf(text, sizeof(text), "<call>%s(%s)", cases[k][0], cases[k][1]);
        }
        for (int fast = 0; fast < 2; fast++) {
            bool eog = false;
            size_t took = feed(&r, fast ? fg : NULL, pipit_grammar_call(g), bytes, text, &eog);
            if (cases[k][2] == NULL) {
                if (took == strlen(text)) {
                    fail_msg("%s decoder: the grammar takes %s", fast ? "fast" : "gbnf", text);
                }
                continue;
            }
            if (took != strlen(text) || !eog) {
                fail_msg("%s decoder: %s: the grammar took %zu of %zu bytes (\"%.*s\"), end %d",
                         fast ? "fast" : "gbnf", text, took, strlen(text), (int)took, text, eog);
            }
            struct pipit_call c;
            assert_int_equal(pipit_call_parse(syn, text, &c, &err), PIPIT_OK);
            struct pipit_arg_problem pr[4];
            size_t n_pr = 0;
            assert_int_equal(pipit_toolset_validate_args(ts, c.name, c.args_json,
                                                         strlen(c.args_json), pr, 4, &n_pr),
                             PIPIT_ERR_INVALID_ARGS);
            assert_true(n_pr > 0);
            if (strstr(pr[0].message, cases[k][2]) == NULL) {
                fail_msg("%s: validation says \"%s\", want \"%s\"", text, pr[0].message,
                         cases[k][2]);
            }
            pipit_call_clear(&c);
        }
    }
    pipit_grammar_free(g);
    pipit_toolset_free(ts);
    pipit_fastgrammar_free(fg);
    rig_free(&r);
}

static void test_no_substitution(void **state) {
    (void)state;
    no_substitution(TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT);
    no_substitution(TEST_MODEL_QWEN, PIPIT_SYNTAX_HERMES);
}

/* ============================================================================ agent */

/* A validation problem about a number's range or numeric enum: the grammar guarantees shape,
 * not ranges (docs/grammar.md), so a random model's numbers may be refused for these only. */
static bool range_problem(const char *message) {
    return strstr(message, "is below the minimum") != NULL ||
           strstr(message, "is above the maximum") != NULL ||
           strstr(message, "is not one of") != NULL;
}

/* The agent with the fast decoder (grammar forced, not lazy): every call of a random model
 * executes or is refused by validation for a number out of range (then no handler runs), in one
 * stage and in the two JIT stages, in both syntaxes. With llama.cpp's grammar sampler (`fast`
 * false, the CLI's --gbnf) the model writes the same text turn for turn (`texts` holds the fast
 * decoder's, to compare). */
static void
agent_run(const char *model_path, int syntax, int32_t tools_format, bool fast, char *texts[4]) {
    struct pipit_model *m = test_load_model(model_path);
    struct pipit_toolset *ts = load_pack(PACKS[0]);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.syntax = syntax;
    p.lazy_grammar = false;
    p.turn_budget_ms = 0;
    p.max_tokens = 128;
    p.tools_format = tools_format;
    p.fast_grammar = fast;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    if (test_agent_new(m, ts, &p, &a, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    static const char *utts[] = {"zoom in to 2x", "turn on the flash", "take a photo",
                                 "switch to the front camera"};
    int n_none = 0;
    for (size_t i = 0; i < sizeof(utts) / sizeof(utts[0]); i++) {
        struct pipit_turn *t = NULL;
        assert_int_equal(pipit_agent_turn(a, utts[i], &t), PIPIT_OK);
        assert_int_equal(t->n_calls, 1);
        /* a random model's number may be out of range: validation refuses it and no handler
         * runs; it may choose "none of these tools" (nothing runs, the sentence says so);
         * anything else executes */
        bool refused = t->calls[0].status == PIPIT_ERR_INVALID_ARGS &&
                       range_problem(t->calls[0].message) && !t->calls[0].executed;
        bool none = t->calls[0].status == PIPIT_OK && !t->calls[0].executed &&
                    strcmp(t->calls[0].code, "no_tool") == 0 &&
                    strstr(t->sentence, "none of my tools does that") != NULL;
        n_none += none;
        if (!refused && !none && (t->calls[0].status != PIPIT_OK || !t->calls[0].executed)) {
            fail_msg("turn %zu: %s: %s (%s)", i, pipit_status_str(t->calls[0].status),
                     t->calls[0].message, t->model_text);
        }
        const char *said = t->model_text != NULL ? t->model_text : "";
        if (fast) {
            texts[i] = strdup(said);
            assert_non_null(texts[i]);
        } else {
            assert_string_equal(said, texts[i]);
            free(texts[i]);
            texts[i] = NULL;
        }
        pipit_turn_free(t);
    }
    print_message("%s, format %d, %s: %d of 4 turns chose none()\n", model_path, (int)tools_format,
                  fast ? "pipit's decoder" : "llama.cpp's sampler, the same texts", n_none);
    test_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

static void test_agent_fast(void **state) {
    (void)state;
    struct {
        const char *model;
        int syntax;
        int32_t format;
    } runs[] = {{TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT, PIPIT_TOOLSPEC_COMPACT},
                {TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT, PIPIT_TOOLSPEC_JIT},
                {TEST_MODEL_QWEN, PIPIT_SYNTAX_HERMES, PIPIT_TOOLSPEC_COMPACT}};
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        char *texts[4] = {NULL, NULL, NULL, NULL};
        agent_run(runs[i].model, runs[i].syntax, runs[i].format, true, texts);
        agent_run(runs[i].model, runs[i].syntax, runs[i].format, false, texts);
    }
}

/* ============================================================================ property */

static int property_seeds(void) {
    const char *env = getenv("PIPIT_PROPERTY_SEEDS");
    long v = env != NULL ? strtol(env, NULL, 10) : 200;
    return v > 0 && v < 100000 ? (int)v : 200;
}

static void property(const char *model_path, enum pipit_call_syntax syn, int seeds) {
    struct rig r;
    rig_init(&r, model_path, "Tools: camera controls.\nUser: please do something\nAssistant:");
    struct pipit_fastgrammar *fg = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_fastgrammar_init(r.m, &fg, &err), PIPIT_OK);
    for (size_t p = 0; p < 2; p++) {
        struct pipit_toolset *ts = load_pack(PACKS[p]);
        struct pipit_grammar *g = compile(ts, syn, 12);
        struct decode_stats ds = {0};
        int valid = 0, refused = 0;
        double t0 = pipit_now_ms();
        for (int seed = 1; seed <= seeds; seed++) {
            int32_t toks[MAX_TOKENS], n;
            struct pipit_sampler_params sp =
                sampling(pipit_grammar_call(g), fg, 1.0f, (uint32_t)seed);
            char *text = decode(r.m, r.ctx, r.prompt + r.np - 1, &sp, true, toks, &n, &ds);
            if (n >= MAX_TOKENS) {
                fail_msg("seed %d: no end after %d tokens: %s", seed, n, text);
            }
            struct pipit_call c;
            if (pipit_call_parse(syn, text, &c, &err) != PIPIT_OK) {
                fail_msg("seed %d: %s\n%s", seed, err.text, text);
            }
            struct pipit_arg_problem pr[8];
            size_t n_pr = 0;
            /* none() is the grammar's "none of these tools" outcome, not a tool */
            bool none = pipit_call_is_none(NULL, &c);
            enum pipit_status vst =
                none ? PIPIT_OK
                     : pipit_toolset_validate_args(ts, c.name, c.args_json, strlen(c.args_json), pr,
                                                   8, &n_pr);
            bool range_only = vst == PIPIT_ERR_INVALID_ARGS && n_pr > 0 && n_pr < 8;
            for (size_t k = 0; k < n_pr && range_only; k++) {
                range_only = range_problem(pr[k].message);
            }
            if (vst != PIPIT_OK && !range_only) {
                fail_msg("seed %d: %s(%s): %s: %s", seed, c.name, c.args_json,
                         pipit_status_str(vst), n_pr > 0 ? pr[0].message : "");
            }
            valid += vst == PIPIT_OK;
            refused += range_only;
            pipit_call_clear(&c);
            free(text);
        }
        print_message("%s, %s, %s syntax: %d/%d valid, %d refused by validation for a number "
                      "out of range, %.0f ms; %lld tokens, %.0f%% forced, "
                      "%.1f decode calls per call, constraint %.1f us/token\n",
                      model_path, PACKS[p], pipit_call_syntax_str(syn), valid, seeds, refused,
                      pipit_now_ms() - t0, (long long)ds.tokens,
                      100.0 * (double)ds.forced / (double)(ds.tokens > 0 ? ds.tokens : 1),
                      (double)ds.decode_calls / seeds,
                      1000.0 * ds.t_constraint_ms / (double)(ds.tokens > 0 ? ds.tokens : 1));
        assert_int_equal(valid + refused, seeds);
        pipit_grammar_free(g);
        pipit_toolset_free(ts);
    }
    pipit_fastgrammar_free(fg);
    rig_free(&r);
}

static void test_property_spm(void **state) {
    (void)state;
    property(TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT, property_seeds());
    property(TEST_MODEL_SPM, PIPIT_SYNTAX_HERMES, property_seeds() / 4);
}

static void test_property_qwen2(void **state) {
    (void)state;
    property(TEST_MODEL_QWEN, PIPIT_SYNTAX_PIPIT, property_seeds());
    property(TEST_MODEL_QWEN, PIPIT_SYNTAX_HERMES, property_seeds() / 4);
}

/* ============================================================================ on-disk cache */

static char cache_root[256];

/* A cache file under cache_root whose name ends in `ext` (its path into buf); false when there
 * is none. */
static bool cache_file_ext(char *buf, size_t cap, const char *ext) {
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/masks", cache_root);
    DIR *d = opendir(dir);
    if (d == NULL) {
        return false;
    }
    bool found = false;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ext) == 0) {
            snprintf(buf, cap, "%s/%s", dir, e->d_name);
            found = true;
            break;
        }
    }
    closedir(d);
    return found;
}

/* The vocabulary index's file. */
static bool cache_file(char *buf, size_t cap) {
    return cache_file_ext(buf, cap, ".fgi");
}

static void cache_clear(void) {
    char path[600];
    while (cache_file(path, sizeof(path)) || cache_file_ext(path, sizeof(path), ".fga")) {
        assert_int_equal(unlink(path), 0);
    }
}

static struct pipit_fastgrammar *fg_open(struct pipit_model *m, bool cached, double *ms) {
    struct pipit_fastgrammar *fg = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_fastgrammar_init(m, &fg, &err), PIPIT_OK);
    struct pipit_fastgrammar_info info;
    pipit_fastgrammar_get_info(fg, &info);
    assert_int_equal(info.index_cached, cached);
    if (ms != NULL) {
        *ms = info.t_index_ms;
    }
    return fg;
}

/* Every state of `gram`'s automaton allows the same tokens (listed, all) and leads to the same
 * states in `a` and `b`. */
static void
same_automata(struct pipit_fastgrammar *a, struct pipit_fastgrammar *b, const char *gram) {
    struct fg_automaton *x = NULL, *y = NULL;
    assert_int_equal(fg_lookup(a, gram, false, &x, NULL, 0), PIPIT_OK);
    assert_int_equal(fg_lookup(b, gram, false, &y, NULL, 0), PIPIT_OK);
    int32_t nx = fg_automaton_precompute(x, 100000), ny = fg_automaton_precompute(y, 100000);
    assert_int_equal(nx, ny);
    int32_t nv = fg_index_n_vocab(fg_index_of(a));
    assert_int_equal(nv, fg_index_n_vocab(fg_index_of(b)));
    int32_t *ax = malloc(sizeof(int32_t) * (size_t)nv), *ay = malloc(sizeof(int32_t) * (size_t)nv);
    assert_non_null(ax);
    assert_non_null(ay);
    for (int32_t s = 0; s < nx; s++) {
        const int32_t *lx = NULL, *ly = NULL;
        int32_t cx = fg_allowed(x, s, &lx);
        int32_t cy = fg_allowed(y, s, &ly);
        assert_int_equal(cx, cy);
        if (cx > 0) {
            assert_memory_equal(lx, ly, sizeof(int32_t) * (size_t)cx);
        }
        cx = fg_allowed_all(x, s, ax);
        cy = fg_allowed_all(y, s, ay);
        assert_int_equal(cx, cy);
        if (cx > 0) {
            assert_memory_equal(ax, ay, sizeof(int32_t) * (size_t)cx);
        }
        for (int32_t k = 0; k < cx; k += 97) {
            assert_int_equal(fg_step_token(x, s, ax[k]), fg_step_token(y, s, ax[k]));
        }
    }
    free(ax);
    free(ay);
}

/* A greedy decode with jump-forward gives the same tokens through `a` and through `b`. */
static void same_greedy(struct rig *r,
                        const char *gram,
                        struct pipit_fastgrammar *a,
                        struct pipit_fastgrammar *b) {
    int32_t ta[MAX_TOKENS], tb[MAX_TOKENS], na, nb;
    struct pipit_sampler_params sa = sampling(gram, a, 0.0f, 1);
    struct pipit_sampler_params sb = sampling(gram, b, 0.0f, 1);
    struct decode_stats da = {0}, db = {0};
    char *xa = decode(r->m, r->ctx, r->prompt + r->np - 1, &sa, true, ta, &na, &da);
    char *xb = decode(r->m, r->ctx, r->prompt + r->np - 1, &sb, true, tb, &nb, &db);
    assert_string_equal(xa, xb);
    assert_int_equal(na, nb);
    assert_memory_equal(ta, tb, sizeof(int32_t) * (size_t)na);
    free(xa);
    free(xb);
}

static void mangle(const char *path, long at, bool truncate_it) {
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    if (truncate_it) {
        assert_int_equal(fseek(f, 0, SEEK_END), 0);
        long n = ftell(f);
        fclose(f);
        assert_int_equal(truncate(path, n / 2), 0);
        return;
    }
    assert_int_equal(fseek(f, at, at < 0 ? SEEK_END : SEEK_SET), 0);
    int c = fgetc(f);
    assert_true(c != EOF);
    assert_int_equal(fseek(f, -1, SEEK_CUR), 0);
    fputc(c ^ 0x5a, f);
    fclose(f);
}

/* The second init loads the trie from the cache and behaves exactly like the first (same
 * allowed sets and transitions in every state, same greedy decode); damaged files are ignored
 * and rewritten; a cache that cannot be written leaves everything working. */
static void cache_check(const char *model_path, enum pipit_call_syntax syn) {
    struct rig r;
    rig_init(&r, model_path, "User: take a photo\nAssistant:");
    struct pipit_toolset *ts = load_pack(PACKS[0]);
    struct pipit_grammar *g = compile(ts, syn, 12);
    const char *gram = pipit_grammar_call(g);
    cache_clear();
    double cold = 0, warm = 0;
    struct pipit_fastgrammar *a = fg_open(r.m, false, &cold);
    char path[600];
    assert_true(cache_file(path, sizeof(path)));
    struct pipit_fastgrammar *b = fg_open(r.m, true, &warm);
    for (int i = 0; i < 4; i++) { /* best of 5 for the record */
        double ms = 0;
        pipit_fastgrammar_free(fg_open(r.m, true, &ms));
        warm = ms < warm ? ms : warm;
    }
    same_automata(a, b, gram);
    same_greedy(&r, gram, a, b);
    pipit_fastgrammar_free(b);
    struct pipit_fastgrammar_info info;
    pipit_fastgrammar_get_info(a, &info);
    print_message("%s: vocabulary index %d tokens: cold %.1f ms, warm %.1f ms (cache)\n",
                  model_path, info.n_vocab, cold, warm);

    /* damaged files: truncated, a flipped header byte, payload byte, last byte; each is
     * ignored (rebuilt, identical behaviour) and replaced by a good file */
    const long spots[] = {0, 8, 20, 30, 44, 50, 60, 64, 1000, -1};
    for (size_t i = 0; i <= sizeof(spots) / sizeof(spots[0]); i++) {
        mangle(path, i < sizeof(spots) / sizeof(spots[0]) ? spots[i] : 0,
               i == sizeof(spots) / sizeof(spots[0]));
        struct pipit_fastgrammar *c = fg_open(r.m, false, NULL);
        same_automata(a, c, gram);
        pipit_fastgrammar_free(c);
        pipit_fastgrammar_free(fg_open(r.m, true, NULL));
    }
    /* cache off: PIPIT_CACHE=off, and a PIPIT_CACHE that cannot hold a directory */
    char bad[300];
    snprintf(bad, sizeof(bad), "%s/masks/%s", cache_root, "not-a-dir");
    FILE *f = fopen(bad, "wb");
    assert_non_null(f);
    fclose(f);
    const char *offs[] = {"off", "", bad};
    for (size_t i = 0; i < 3; i++) {
        setenv("PIPIT_CACHE", offs[i], 1);
        struct pipit_fastgrammar *c = fg_open(r.m, false, NULL);
        same_automata(a, c, gram);
        pipit_fastgrammar_free(c);
        pipit_fastgrammar_free(fg_open(r.m, false, NULL));
    }
    unlink(bad);
    setenv("PIPIT_CACHE", cache_root, 1);
    pipit_fastgrammar_free(a);
    pipit_grammar_free(g);
    pipit_toolset_free(ts);
    rig_free(&r);
}

static void test_cache_spm(void **state) {
    (void)state;
    cache_check(TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT);
}

static void test_cache_qwen(void **state) {
    (void)state;
    cache_check(TEST_MODEL_QWEN, PIPIT_SYNTAX_HERMES);
}

static struct pipit_fastgrammar *
fg_with(struct pipit_model *m, const char *gram, struct fg_automaton **a, int32_t *n_cached) {
    struct pipit_fastgrammar *fg = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_fastgrammar_init(m, &fg, &err), PIPIT_OK);
    assert_int_equal(fg_lookup(fg, gram, false, a, NULL, 0), PIPIT_OK);
    struct pipit_fastgrammar_info info;
    pipit_fastgrammar_get_info(fg, &info);
    *n_cached = info.n_grammars_cached;
    return fg;
}

/* The automaton's states on disk: a second start of the same grammar has every state, token
 * list and kept exact set the first one materialized before any walk, and behaves identically
 * (same allowed sets and transitions, same greedy decode with jump-forward); a damaged file is
 * ignored and replaced; another grammar does not pick it up; a save without new states
 * writes nothing. Phone pack (many string bodies). */
static void automaton_cache_check(const char *model_path, enum pipit_call_syntax syn) {
    struct rig r;
    rig_init(&r, model_path, "User: text mom hello\nAssistant:");
    struct pipit_toolset *ts = load_pack(PACKS[1]);
    struct pipit_grammar *g = compile(ts, syn, 12);
    const char *gram = pipit_grammar_call(g);
    cache_clear();
    struct fg_automaton *x = NULL, *y = NULL;
    int32_t cached = -1;
    struct pipit_fastgrammar *a = fg_with(r.m, gram, &x, &cached);
    assert_int_equal(cached, 0);
    int32_t n = fg_automaton_precompute(x, 100000);
    int32_t wide = -1;
    for (int32_t s = 0; s < n && wide < 0; s++) {
        if (fg_wide(x, s)) {
            const int32_t *t = NULL;
            assert_true(fg_allowed_exact(x, s, &t) > 0);
            wide = s;
        }
    }
    assert_true(wide >= 0);
    assert_int_equal(pipit_fastgrammar_save(a), 1);
    assert_int_equal(pipit_fastgrammar_save(a), 0); /* nothing new */
    char path[600];
    assert_true(cache_file_ext(path, sizeof(path), ".fga"));
    struct fg_stats sx, sy;
    fg_automaton_stats(x, &sx);

    struct pipit_fastgrammar *b = fg_with(r.m, gram, &y, &cached);
    assert_int_equal(cached, 1);
    fg_automaton_stats(y, &sy);
    assert_int_equal(sy.dfa_states, sx.dfa_states);
    assert_int_equal(sy.listed_states, sx.listed_states);
    assert_int_equal(sy.listed_tokens, sx.listed_tokens);
    assert_true(fg_exact_cached(y, wide));
    same_automata(a, b, gram);
    same_greedy(&r, gram, a, b);
    assert_int_equal(pipit_fastgrammar_save(b), 0); /* loaded, nothing new */
    /* another grammar of the same pack: its own key, no file yet */
    struct fg_automaton *z = NULL;
    assert_int_equal(fg_lookup(b, pipit_grammar_names(g), false, &z, NULL, 0), PIPIT_OK);
    struct pipit_fastgrammar_info info;
    pipit_fastgrammar_get_info(b, &info);
    assert_int_equal(info.n_grammars, 2);
    assert_int_equal(info.n_grammars_cached, 1);
    pipit_fastgrammar_free(b);

    /* damaged: flipped bytes in the header (magic, key, counts, checksums, padding), in the
     * payload and at the end, and a truncated file; each is ignored and rewritten on free */
    struct stat sb0;
    assert_int_equal(stat(path, &sb0), 0);
    const long spots[] = {0, 9, 17, 25, 33, 41, 57, 66, 75, 88, 96, 100, sb0.st_size / 2, -1};
    size_t n_spots = sizeof(spots) / sizeof(spots[0]);
    for (size_t i = 0; i <= n_spots; i++) {
        mangle(path, i < n_spots ? spots[i] : 0, i == n_spots);
        struct pipit_fastgrammar *c = fg_with(r.m, gram, &y, &cached);
        assert_int_equal(cached, 0);
        if (i == 0) { /* a fresh automaton, as without the file (once: a full walk is slow) */
            same_automata(a, c, gram);
        } else {
            assert_int_equal(fg_automaton_precompute(y, 100000), n);
        }
        pipit_fastgrammar_free(c); /* rewrites the file */
        c = fg_with(r.m, gram, &y, &cached);
        assert_int_equal(cached, 1);
        pipit_fastgrammar_free(c);
    }
    pipit_fastgrammar_free(a);
    pipit_grammar_free(g);
    pipit_toolset_free(ts);
    rig_free(&r);
}

/* Rewrite the automaton file at `path` with `mutate` applied to its payload and both
 * checksums made right again: what is left to reject it is the structural check. */
struct fga_view {
    int64_t *words; /* 6 per state: set_off, set_n, list_n, list_off, exact_n, exact_off */
    int32_t *trans, *sets, *lists, *exact;
    uint64_t n_dfa, n_cls, n_sets, n_lists, n_exact;
};

static bool forge(const char *path, bool (*mutate)(struct fga_view *v)) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    rewind(f);
    uint8_t *buf = malloc((size_t)size);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    struct fga_view v;
    memcpy(&v.n_dfa, buf + 24, 8);
    memcpy(&v.n_cls, buf + 32, 8);
    memcpy(&v.n_sets, buf + 40, 8);
    memcpy(&v.n_lists, buf + 48, 8);
    memcpy(&v.n_exact, buf + 56, 8);
    uint8_t *p = buf + 96;
    v.words = (int64_t *)(void *)p;
    p += v.n_dfa * 6 * sizeof(int64_t);
    v.trans = (int32_t *)(void *)p;
    p += v.n_dfa * v.n_cls * sizeof(int32_t);
    v.sets = (int32_t *)(void *)p;
    p += v.n_sets * sizeof(int32_t);
    v.lists = (int32_t *)(void *)p;
    p += v.n_lists * sizeof(int32_t);
    v.exact = (int32_t *)(void *)p;
    p += v.n_exact * sizeof(int32_t);
    assert_int_equal(p - buf, size);
    bool applies = mutate(&v);
    if (applies) {
        uint64_t h = FILEIO_FNV_OFFSET;
        h = fg_hash_words(h, v.words, v.n_dfa * 6 * sizeof(int64_t));
        h = fg_hash_words(h, v.trans, v.n_dfa * v.n_cls * sizeof(int32_t));
        h = fg_hash_words(h, v.sets, v.n_sets * sizeof(int32_t));
        h = fg_hash_words(h, v.lists, v.n_lists * sizeof(int32_t));
        h = fg_hash_words(h, v.exact, v.n_exact * sizeof(int32_t));
        memcpy(buf + 64, &h, 8);
        h = fg_hash_words(FILEIO_FNV_OFFSET, buf, 72);
        memcpy(buf + 72, &h, 8);
        f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(buf, 1, (size_t)size, f), (size_t)size);
        fclose(f);
    }
    free(buf);
    return applies;
}

static bool no_change(struct fga_view *v) {
    (void)v;
    return true;
}
static bool trans_out_of_range(struct fga_view *v) {
    v->trans[v->n_cls] = (int32_t)v->n_dfa + 5;
    return true;
}
static bool list_token_out_of_range(struct fga_view *v) {
    if (v->n_lists == 0) {
        return false;
    }
    v->lists[v->n_lists / 2] = INT32_MAX;
    return true;
}
static bool set_entry_out_of_range(struct fga_view *v) {
    v->sets[v->n_sets - 1] = INT32_MAX;
    return true;
}
static bool set_unsorted(struct fga_view *v) {
    for (uint64_t d = 0; d < v->n_dfa; d++) {
        int64_t *w = v->words + d * 6;
        if (w[1] >= 2) {
            int32_t t = v->sets[w[0]];
            v->sets[w[0]] = v->sets[w[0] + 1];
            v->sets[w[0] + 1] = t;
            return true;
        }
    }
    return false;
}
static bool duplicate_state(struct fga_view *v) {
    v->words[6 * 2 + 0] = v->words[6 * 1 + 0];
    v->words[6 * 2 + 1] = v->words[6 * 1 + 1];
    return true;
}
static bool start_swapped(struct fga_view *v) {
    for (int k = 0; k < 2; k++) {
        int64_t t = v->words[k];
        v->words[k] = v->words[6 + k];
        v->words[6 + k] = t;
    }
    return true;
}
static bool list_too_long(struct fga_view *v) {
    v->words[6 * 1 + 2] = FG_LARGE_LIMIT + 1;
    return true;
}
static bool list_past_pool(struct fga_view *v) {
    for (uint64_t d = 0; d < v->n_dfa; d++) {
        int64_t *w = v->words + d * 6;
        if (w[2] > 0) {
            w[3] = (int64_t)v->n_lists;
            return true;
        }
    }
    return false;
}
static bool exact_past_pool(struct fga_view *v) {
    v->words[6 * 1 + 4] = 1;
    v->words[6 * 1 + 5] = (int64_t)v->n_exact;
    return true;
}
static bool empty_set(struct fga_view *v) {
    v->words[6 * 1 + 1] = 0;
    return true;
}

/* Files with right checksums and a wrong structure are refused by the structural check, and
 * the decoder works on from the fresh automaton. */
static void test_automaton_forged(void **state) {
    (void)state;
    struct rig r;
    rig_init(&r, TEST_MODEL_SPM, "User: text mom hello\nAssistant:");
    struct pipit_toolset *ts = load_pack(PACKS[1]);
    struct pipit_grammar *g = compile(ts, PIPIT_SYNTAX_PIPIT, 12);
    const char *gram = pipit_grammar_call(g);
    cache_clear();
    struct fg_automaton *x = NULL;
    int32_t cached = -1;
    struct pipit_fastgrammar *a = fg_with(r.m, gram, &x, &cached);
    int32_t n = fg_automaton_precompute(x, 100000);
    pipit_fastgrammar_free(a);
    char path[600];
    assert_true(cache_file_ext(path, sizeof(path), ".fga"));
    bool (*const bad[])(struct fga_view *) = {
        trans_out_of_range, list_token_out_of_range, set_entry_out_of_range,
        set_unsorted,       duplicate_state,         start_swapped,
        list_too_long,      list_past_pool,          exact_past_pool,
        empty_set,
    };
    /* the forger itself keeps a file valid */
    assert_true(forge(path, no_change));
    a = fg_with(r.m, gram, &x, &cached);
    assert_int_equal(cached, 1);
    pipit_fastgrammar_free(a);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_true(forge(path, bad[i]));
        a = fg_with(r.m, gram, &x, &cached);
        if (cached != 0) {
            fail_msg("forged file %zu was accepted", i);
        }
        assert_int_equal(fg_automaton_precompute(x, 100000), n);
        pipit_fastgrammar_free(a); /* rewrites a good file */
        a = fg_with(r.m, gram, &x, &cached);
        assert_int_equal(cached, 1);
        pipit_fastgrammar_free(a);
    }
    pipit_grammar_free(g);
    pipit_toolset_free(ts);
    rig_free(&r);
}

static void test_automaton_cache_spm(void **state) {
    (void)state;
    automaton_cache_check(TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT);
}

static void test_automaton_cache_qwen(void **state) {
    (void)state;
    automaton_cache_check(TEST_MODEL_QWEN, PIPIT_SYNTAX_HERMES);
}

/* The shortcuts a rejected draw in a large state takes are exact, checked against walking every
 * token: the special tokens fg_allowed_special() returns are exactly the allowed ones; a state
 * that fg_refuses_hard() refuses every FG_SPECIAL_HARD token; fg_refused_first() lists only
 * refused tokens; fg_candidates() of a state that is no string body holds every allowed one; in a
 * string body (fg_wide) a refused plain ASCII token means every longer one is refused; the kept
 * exact set of a large state equals a fresh walk. Phone pack (many strings), both syntaxes,
 * 12-character strings. */
static void shortcuts_check(const char *model_path, enum pipit_call_syntax syn) {
    struct rig r;
    rig_init(&r, model_path, "User: hi\nAssistant:");
    struct pipit_toolset *ts = load_pack(PACKS[1]);
    struct pipit_grammar *g = compile(ts, syn, 12);
    struct pipit_fastgrammar *fg = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_fastgrammar_init(r.m, &fg, &err), PIPIT_OK);
    struct fg_automaton *a = NULL;
    assert_int_equal(fg_lookup(fg, pipit_grammar_call(g), false, &a, NULL, 0), PIPIT_OK);
    int32_t n_states = fg_automaton_precompute(a, 100000);
    const struct fg_index *ix = fg_index_of(fg);
    int32_t nv = fg_index_n_vocab(ix), n_sp = 0, n_ascii = 0;
    const int32_t *sp = fg_index_special(ix, &n_sp);
    const int32_t *ascii = fg_index_ascii_from(ix, 1, &n_ascii);
    assert_true(n_sp > 0 && n_ascii > 0);
    int32_t *all = malloc(sizeof(int32_t) * (size_t)nv);
    char *mark = calloc((size_t)nv, 1);
    assert_non_null(all);
    assert_non_null(mark);
    int wide = 0, hard = 0;
    for (int32_t st = 0; st < n_states; st++) {
        const int32_t *ok = NULL;
        int32_t n_ok = fg_allowed_special(a, st, &ok);
        assert_true(n_ok >= 0);
        memset(mark, 0, (size_t)nv);
        for (int32_t k = 0; k < n_ok; k++) {
            mark[ok[k]] = 1;
        }
        for (int32_t k = 0; k < n_sp; k++) {
            assert_int_equal(mark[sp[k]], fg_step_token(a, st, sp[k]) >= 0);
        }
        if (fg_refuses_hard(a, st)) {
            hard++;
            for (int32_t k = 0; k < n_sp; k++) {
                if (fg_index_special_kind(ix, sp[k]) == FG_SPECIAL_HARD) {
                    assert_true(fg_step_token(a, st, sp[k]) < 0);
                }
            }
        }
        const int32_t *rf = NULL;
        int32_t n_rf = fg_refused_first(a, st, &rf);
        assert_true(n_rf >= 0);
        for (int32_t k = 0; k < n_rf; k++) {
            assert_true(fg_step_token(a, st, rf[k]) < 0);
        }
        if (!fg_wide(a, st)) {
            /* the candidates of a state that is no string body hold every allowed token */
            const int32_t *cd = NULL;
            int32_t n_cd = fg_candidates(a, st, &cd);
            assert_true(n_cd >= 0);
            memset(mark, 0, (size_t)nv);
            for (int32_t k = 0; k < n_cd; k++) {
                mark[cd[k]] = 1;
            }
            int32_t n_all = fg_allowed_all(a, st, all);
            for (int32_t k = 0; k < n_all; k++) {
                assert_true(mark[all[k]]);
            }
            continue;
        }
        wide++;
        int32_t shortest_refused = INT32_MAX; /* ascii is sorted by length */
        for (int32_t k = 0; k < n_ascii; k++) {
            int32_t len = fg_index_ascii_len(ix, ascii[k]);
            bool allowed = fg_step_token(a, st, ascii[k]) >= 0;
            if (!allowed && len < shortest_refused) {
                shortest_refused = len;
            }
            assert_false(allowed && len >= shortest_refused);
        }
        const int32_t *ex = NULL;
        int32_t n_ex = fg_allowed_exact(a, st, &ex);
        assert_int_equal(n_ex, fg_allowed_all(a, st, all));
        assert_memory_equal(ex, all, sizeof(int32_t) * (size_t)n_ex);
    }
    print_message("%s: %d states, %d string bodies, %d refuse escapes; %d special tokens, %d "
                  "plain ASCII\n",
                  model_path, n_states, wide, hard, n_sp, n_ascii);
    assert_true(wide > 10 && hard > 10);
    free(all);
    free(mark);
    pipit_fastgrammar_free(fg);
    pipit_grammar_free(g);
    pipit_toolset_free(ts);
    rig_free(&r);
}

static void test_shortcuts_spm(void **state) {
    (void)state;
    shortcuts_check(TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT);
}

static void test_shortcuts_qwen(void **state) {
    (void)state;
    shortcuts_check(TEST_MODEL_QWEN, PIPIT_SYNTAX_HERMES);
}

/* Every test runs against a private cache directory (removed at the end). */
static int cache_setup(void **state) {
    (void)state;
    snprintf(cache_root, sizeof(cache_root), "/tmp/pipit-fgcache-XXXXXX");
    if (mkdtemp(cache_root) == NULL) {
        return -1;
    }
    return setenv("PIPIT_CACHE", cache_root, 1);
}

static int cache_teardown(void **state) {
    (void)state;
    cache_clear();
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/masks", cache_root);
    rmdir(dir);
    rmdir(cache_root);
    return 0;
}

/* ============================================================================ optional members */

/* One tool whose parameters are `n` optional properties of `type` (the first `n_req` required). */
static struct pipit_toolset *wide_toolset(const char *type, int n, int n_req) {
    struct strbuf_like {
        char *t;
        size_t len, cap;
    } b = {malloc(65536), 0, 65536};
    assert_non_null(b.t);
    b.len += (size_t)snprintf(
        b.t + b.len, b.cap - b.len,
        "[{\"type\": \"function\", \"function\": {\"name\": \"wide\", "
        "\"description\": \"d\", \"parameters\": {\"type\": \"object\", \"properties\": {");
    for (int i = 0; i < n; i++) {
        b.len += (size_t)snprintf(b.t + b.len, b.cap - b.len, "%s\"p%d\": {\"type\": \"%s\"}",
                                  i > 0 ? ", " : "", i, type);
    }
    b.len += (size_t)snprintf(b.t + b.len, b.cap - b.len, "}, \"required\": [");
    for (int i = 0; i < n_req; i++) {
        b.len += (size_t)snprintf(b.t + b.len, b.cap - b.len, "%s\"p%d\"", i > 0 ? ", " : "", i);
    }
    snprintf(b.t + b.len, b.cap - b.len, "]}}}]");
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_string(b.t, strlen(b.t), "wide", &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    free(b.t);
    return ts;
}

static int warnings;
static void count_warnings(enum pipit_log_level level, const char *text, void *user_data) {
    (void)user_data;
    if (level == PIPIT_LOG_WARN && strstr(text, "falls back to llama.cpp") != NULL) {
        warnings++;
    }
}

/* Objects with many optional members: the automaton grows linearly with the members (each rule
 * of the member chain is built once per continuation), compiles in the fast path, and accepts
 * exactly what llama.cpp's GBNF engine and the validator accept: any subset in schema order. */
static void test_optional_members(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_fastgrammar *fg = NULL;
    assert_int_equal(pipit_fastgrammar_init(m, &fg, NULL), PIPIT_OK);
    static const char *types[3] = {"string", "number", "boolean"};
    static const char *values[3] = {"\"ab\"", "-1.5", "true"};
    uint64_t rng = 7;
    int checked = 0;
    for (int t = 0; t < 3; t++) {
        int32_t nfa[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            int n = k == 0 ? 40 : 80;
            struct pipit_toolset *ts = wide_toolset(types[t], n, t == 2 ? 3 : 0);
            for (int syn = 0; syn < 2; syn++) {
                struct pipit_grammar *g = compile(ts, (enum pipit_call_syntax)syn, 12);
                const char *gbnf = pipit_grammar_call(g);
                struct pipit_error err;
                if (pipit_fastgrammar_check(gbnf, &nfa[k], &err) != PIPIT_OK) {
                    fail_msg("%s x%d: %s", types[t], n, err.text);
                }
                double t0 = pipit_now_ms();
                assert_int_equal(pipit_fastgrammar_add(fg, gbnf, &err), PIPIT_OK);
                double ms = pipit_now_ms() - t0;
                /* milliseconds; the bound only catches an exponential blow-up (100-300 ms at
                 * 14 members before) on a busy machine */
                if (ms > 1000.0) {
                    fail_msg("%s x%d: compiled in %.1f ms", types[t], n, ms);
                }
                for (int trial = 0; trial < 60; trial++) {
                    char text[4096];
                    char args[4096];
                    size_t len = 0, alen = 0;
                    bool hermes = syn == PIPIT_SYNTAX_HERMES;
                    len += (size_t)snprintf(text, sizeof(text), "%s",
                                            hermes ? "<tool_call>\n{\"name\": \"wide\", "
                                                     "\"arguments\": {"
                                                   : "<call>wide(");
                    alen += (size_t)snprintf(args, sizeof(args), "{");
                    int written = 0;
                    /* mutation: 0 none, 1 a leading separator, 2 swapped order, 3 a
                     * doubled member, 4 a missing required member */
                    int mutation = trial % 5;
                    int prev = -1;
                    for (int i = 0; i < n; i++) {
                        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                        bool take = (rng >> 33) % 7 == 0 || (t == 2 && i < 3);
                        if (mutation == 4 && t == 2 && i == 1) {
                            take = false;
                        }
                        if (!take) {
                            continue;
                        }
                        const char *sep =
                            written > 0 || (mutation == 1 && written == 0) ? ", " : "";
                        int idx = i;
                        if (mutation == 2 && written == 1 && prev >= 0) {
                            idx = prev; /* the same member again, out of order */
                        }
                        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                                hermes ? "%s\"p%d\": %s" : "%sp%d=%s", sep, idx,
                                                values[t]);
                        alen += (size_t)snprintf(args + alen, sizeof(args) - alen, "%s\"p%d\": %s",
                                                 written > 0 ? ", " : "", i, values[t]);
                        if (mutation == 3 && written == 0) {
                            len += (size_t)snprintf(text + len, sizeof(text) - len,
                                                    hermes ? ", \"p%d\": %s" : ", p%d=%s", idx,
                                                    values[t]);
                        }
                        prev = i;
                        written++;
                    }
                    snprintf(text + len, sizeof(text) - len, "%s",
                             hermes ? "}}\n</tool_call>" : ")");
                    snprintf(args + alen, sizeof(args) - alen, "}");
                    bool p1 = false, c1 = false, p2 = false, c2 = false;
                    assert_int_equal(pipit_gbnf_match(m, gbnf, text, &p1, &c1), PIPIT_OK);
                    assert_int_equal(pipit_fastgrammar_match(fg, gbnf, text, &p2, &c2), PIPIT_OK);
                    if (c1 != c2 || p1 != p2) {
                        fail_msg("%s: GBNF %d/%d, automaton %d/%d", text, p1, c1, p2, c2);
                    }
                    /* an unmutated call is complete and valid; a mutated one is refused
                     * (when the mutation applied: a doubled or swapped member needs one) */
                    bool mutated = (mutation == 1 && written > 0) ||
                                   (mutation == 2 && written > 1) ||
                                   (mutation == 3 && written > 0) || (mutation == 4 && t == 2);
                    if (c1 == mutated) {
                        fail_msg("%s: complete %d, mutated %d", text, c1, mutated);
                    }
                    if (!mutated) {
                        assert_int_equal(pipit_toolset_validate_args(ts, "wide", args, strlen(args),
                                                                     NULL, 0, NULL),
                                         PIPIT_OK);
                    }
                    checked++;
                }
                pipit_grammar_free(g);
            }
            pipit_toolset_free(ts);
        }
        /* twice the members, about twice the automaton: linear, not exponential */
        if (nfa[1] > 3 * nfa[0]) {
            fail_msg("%s: %d NFA states for 40 members, %d for 80", types[t], nfa[0], nfa[1]);
        }
        print_message("%s: %d NFA states for 40 optional members, %d for 80\n", types[t], nfa[0],
                      nfa[1]);
    }
    /* a grammar outside the subset is not taken silently: the fast decoder logs a warning */
    warnings = 0;
    pipit_log_set(count_warnings, NULL, PIPIT_LOG_DEBUG);
    struct pipit_error err;
    const char *recursive = "root ::= \"(\" root? \")\"\n";
    assert_int_equal(pipit_fastgrammar_check(recursive, NULL, &err), PIPIT_ERR_GRAMMAR);
    assert_non_null(strstr(err.text, "recursive"));
    assert_int_equal(pipit_fastgrammar_add(fg, recursive, &err), PIPIT_ERR_GRAMMAR);
    assert_int_equal(pipit_fastgrammar_add(fg, recursive, &err), PIPIT_ERR_GRAMMAR);
    pipit_log_set(NULL, NULL, PIPIT_LOG_INFO);
    assert_int_equal(warnings, 1); /* once per grammar */
    print_message("%d calls agree between GBNF, the automaton and the validator\n", checked);
    pipit_fastgrammar_free(fg);
    pipit_model_free(m);
}

/* The fast decoder is a leaf: a vocabulary given as data, no model at all, is indexed, an
 * automaton runs over it, and the sampler side names exactly the allowed tokens (EOG only where
 * the grammar accepts). A vocabulary that breaks the rules of struct fg_vocab is refused. */
static struct fg_vocab vocab_of(const char *const *texts, int32_t n, int32_t eog) {
    struct fg_vocab v = {.n_vocab = n};
    size_t len = 0;
    for (int32_t t = 0; t < n; t++) {
        len += strlen(texts[t]);
    }
    v.text = malloc(len > 0 ? len : 1);
    v.off = malloc(sizeof(int64_t) * (size_t)(n + 1));
    v.eog = malloc(sizeof(int32_t));
    assert_non_null(v.text);
    assert_non_null(v.off);
    assert_non_null(v.eog);
    len = 0;
    for (int32_t t = 0; t < n; t++) {
        v.off[t] = (int64_t)len;
        memcpy(v.text + len, texts[t], strlen(texts[t]));
        len += strlen(texts[t]);
    }
    v.off[n] = (int64_t)len;
    v.eog[0] = eog;
    v.n_eog = 1;
    return v;
}

static void test_index_from_data(void **state) {
    (void)state;
    const char *texts[] = {"a", "b", "ab", "\"", "", "ba"}; /* token 4: end of generation */
    struct fg_vocab v = vocab_of(texts, 6, 4);
    struct fg_index *ix = NULL;
    assert_int_equal(fg_index_new(&v, &ix), PIPIT_OK);
    assert_null(v.text); /* taken */
    assert_int_equal(fg_index_n_vocab(ix), 6);
    assert_true(fg_index_is_eog(ix, 4));
    assert_false(fg_index_is_eog(ix, 0));
    assert_int_equal(fg_index_special_kind(ix, 3), FG_SPECIAL_QUOTE);
    struct fg_automaton *a = NULL;
    char msg[200];
    assert_int_equal(fg_automaton_new(ix, "root ::= \"a\" \"b\"?", &a, msg, sizeof(msg)), PIPIT_OK);
    const int32_t *toks = NULL;
    int32_t n = fg_allowed(a, fg_start(a), &toks);
    assert_int_equal(n, 2); /* "a" and "ab" */
    assert_true((toks[0] == 0 && toks[1] == 2) || (toks[0] == 2 && toks[1] == 0));
    int32_t s = fg_step_token(a, fg_start(a), 0);
    assert_true(fg_accepting(a, s));
    assert_int_equal(fg_allowed(a, s, &toks), 1); /* "b" (EOG added by the sampler) */
    assert_int_equal(toks[0], 1);
    assert_int_equal(fg_step_token(a, fg_start(a), 4), FG_DEAD); /* EOG has no text */
    assert_int_equal(fg_step_token(a, fg_start(a), 5), FG_DEAD);
    fg_automaton_free(a);
    fg_index_free(ix);

    /* refused: an EOG token with text, offsets going back, an EOG id out of range */
    v = vocab_of(texts, 6, 0);
    assert_int_equal(fg_index_new(&v, &ix), PIPIT_ERR_INVALID_ARG);
    assert_null(v.off); /* freed all the same */
    v = vocab_of(texts, 6, 4);
    v.off[2] = v.off[1] - 1;
    assert_int_equal(fg_index_new(&v, &ix), PIPIT_ERR_INVALID_ARG);
    v = vocab_of(texts, 6, 4);
    v.eog[0] = 6;
    assert_int_equal(fg_index_new(&v, &ix), PIPIT_ERR_INVALID_ARG);
}

/* Copied strings (docs/grammar.md): whatever a random model chooses, every free-text
 * argument it writes is a span of something the person said (the memory holds nothing else
 * here: no device), in both syntaxes and both decoders. */
static const char COPY_TOOLS[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"send\", \"description\": \"Send a "
    "text\", \"parameters\": {\"type\": \"object\", \"properties\": {\"to\": {\"type\": "
    "\"string\"}, \"body\": {\"type\": \"string\"}}, \"required\": [\"to\", \"body\"]}}}]";

static void agent_copies(const char *model_path, enum pipit_call_syntax syntax, bool fast) {
    struct pipit_model *m = test_load_model(model_path);
    struct pipit_toolset *ts = test_tools_from(COPY_TOOLS, "copy");
    struct pipit_error err;
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.syntax = syntax;
    p.lazy_grammar = false;
    p.turn_budget_ms = 0;
    p.max_tokens = 96;
    p.fast_grammar = fast;
    p.copy_strings = PIPIT_COPY_ON;
    struct pipit_agent *a = NULL;
    if (test_agent_new(m, ts, &p, &a, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    static const char *utts[] = {
        "text Zorblax that the quokka is late", "send Mirelle a note: pick up the kumquats",
        "tell Brunhilde \"hi there\"",          "message Oskar about the zeppelin",
        "ping Yusuf: meet at the blue door",    "let Ingrid know the ferry left",
        "write to Pavlo saying thanks a lot",   "text Quentin ok",
        "send Ama the address 42 Larch Road",   "shoot Teodor a message, running late",
        "tell Grandma I'm coming over at noon", "message Rosalind: the cake is in the oven"};
    struct strbuf said = {0};
    int n_checked = 0;
    for (size_t i = 0; i < sizeof(utts) / sizeof(utts[0]); i++) {
        strbuf_printf(&said, "%s\n", utts[i]);
        struct pipit_turn *t = NULL;
        assert_int_equal(pipit_agent_turn(a, utts[i], &t), PIPIT_OK);
        for (size_t c = 0; c < t->n_calls; c++) {
            if (strcmp(t->calls[c].tool, "send") != 0) {
                continue;
            }
            json_t *args = json_loads(t->calls[c].args_json, 0, NULL);
            assert_non_null(args);
            const char *names[] = {"to", "body"};
            for (int k = 0; k < 2; k++) {
                const char *v = json_string_value(json_object_get(args, names[k]));
                assert_non_null(v);
                if (v[0] == '\0' || strstr(said.data, v) == NULL) {
                    fail_msg("%s: %s=\"%s\" is not in what was said (%s)", model_path, names[k], v,
                             t->model_text);
                }
                n_checked++;
            }
            json_decref(args);
        }
        pipit_turn_free(t);
    }
    print_message("%s: %d copied values checked\n", model_path, n_checked);
    assert_true(n_checked > 0);
    strbuf_free(&said);
    test_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

static void test_agent_copies(void **state) {
    (void)state;
    agent_copies(TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT, true);
    agent_copies(TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT, false);
    agent_copies(TEST_MODEL_QWEN, PIPIT_SYNTAX_HERMES, true);
}

/* A transient grammar (one step's, as the agent's copied strings make) never reaches the disk
 * cache, and the next transient grammar frees it; a kept grammar stays. */
static void test_transient_grammars(void **state) {
    (void)state;
    cache_clear();
    struct pipit_model *m = test_load_vocab(TEST_MODEL_SPM);
    struct pipit_error err;
    struct pipit_fastgrammar *fg = NULL;
    assert_int_equal(pipit_fastgrammar_init(m, &fg, &err), PIPIT_OK);
    const char *kept = "root ::= \"kept\" [a-z]{1,4}\n";
    const char *one = "root ::= \"one\" [a-z]{1,4}\n";
    const char *two = "root ::= \"two\" [a-z]{1,4}\n";
    struct fg_automaton *a = NULL;
    struct pipit_fastgrammar_info info;
    bool prefix = false, complete = false;
    assert_int_equal(fg_lookup(fg, kept, false, &a, NULL, 0), PIPIT_OK);
    assert_int_equal(pipit_fastgrammar_match(fg, kept, "keptab", &prefix, &complete), PIPIT_OK);
    assert_int_equal(fg_lookup(fg, one, true, &a, NULL, 0), PIPIT_OK);
    assert_int_equal(fg_automaton_precompute(a, 1000) > 0, true);
    pipit_fastgrammar_get_info(fg, &info);
    assert_int_equal(info.n_grammars, 2);
    assert_int_equal(fg_lookup(fg, two, true, &a, NULL, 0), PIPIT_OK);
    pipit_fastgrammar_get_info(fg, &info);
    assert_int_equal(info.n_grammars, 2); /* "one" is gone, "kept" stays */
    assert_int_equal(fg_lookup(fg, two, true, &a, NULL, 0), PIPIT_OK); /* met again: kept */
    pipit_fastgrammar_get_info(fg, &info);
    assert_int_equal(info.n_grammars, 2);
    assert_int_equal(fg_automaton_precompute(a, 1000) > 0, true);
    /* only the kept grammar is written */
    assert_int_equal(pipit_fastgrammar_save(fg), 1);
    pipit_fastgrammar_free(fg);
    pipit_model_free(m);
    cache_clear();
}

int main(int argc, char **argv) {
    const struct CMUnitTest model[] = {
        cmocka_unit_test(test_malformed_utf8),       cmocka_unit_test(test_differential_pipit),
        cmocka_unit_test(test_differential_hermes),  cmocka_unit_test(test_greedy_spm),
        cmocka_unit_test(test_greedy_qwen),          cmocka_unit_test(test_agent_fast),
        cmocka_unit_test(test_no_substitution),      cmocka_unit_test(test_cache_spm),
        cmocka_unit_test(test_cache_qwen),           cmocka_unit_test(test_automaton_cache_spm),
        cmocka_unit_test(test_automaton_cache_qwen), cmocka_unit_test(test_automaton_forged),
        cmocka_unit_test(test_shortcuts_spm),        cmocka_unit_test(test_shortcuts_qwen),
        cmocka_unit_test(test_optional_members),     cmocka_unit_test(test_index_from_data),
        cmocka_unit_test(test_transient_grammars),   cmocka_unit_test(test_agent_copies),
    };
    const struct CMUnitTest prop[] = {
        cmocka_unit_test(test_property_spm),
        cmocka_unit_test(test_property_qwen2),
    };
    if (getenv("PIPIT_TEST_FILTER") != NULL) { /* one case while working on it */
        cmocka_set_test_filter(getenv("PIPIT_TEST_FILTER"));
    }
    if (argc > 1 && strcmp(argv[1], "--property") == 0) {
        return cmocka_run_group_tests(prop, cache_setup, cache_teardown);
    }
    return cmocka_run_group_tests(model, cache_setup, cache_teardown);
}
