/*
 * fuzz-grammar.c - the grammar compiler: a tool spec (any bytes) -> pipit_grammar_compile() in
 * both call syntaxes -> every GBNF text it emits (the call, the names of JIT stage 1, each
 * tool's arguments), each then given to llama.cpp's grammar parser (pipit_gbnf_match) and to
 * pipit's fast-grammar compiler (fg_automaton_new, the automaton the fast decoder runs;
 * docs/grammar.md, docs/fastgrammar.md).
 *
 * Both engines need a vocabulary, not a model: the tokenizer-only GGUF
 * ggml-vocab-llama-spm.gguf of the pinned llama.cpp tree is loaded once (vocab_only).
 * Promises checked: every grammar the compiler emits parses in llama.cpp; the fast automaton,
 * when it builds one, agrees with llama.cpp on the call's first bytes (the trigger and a tool
 * name), which both must allow.
 * Seeds: fuzz/corpus/grammar/ (the shipped packs, small specs of every parameter kind).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "fastgrammar.h"
#include "fuzz.h"

#include <stdlib.h>

static struct pipit_model *g_vocab;
static struct pipit_fastgrammar *g_fast;
static const struct fg_index *g_index;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    struct pipit_model_params mp = pipit_model_default_params();
    mp.vocab_only = true;
    struct pipit_error err;
    const char *path = PIPIT_VOCAB_DIR "/ggml-vocab-llama-spm.gguf";
    if (pipit_model_load(path, &mp, &g_vocab, &err) != PIPIT_OK) {
        fuzz_fail("cannot load %s: %s", path, err.text);
    }
    setenv("PIPIT_CACHE", "off", 1); /* the index only, no files */
    if (pipit_fastgrammar_init(g_vocab, &g_fast, &err) != PIPIT_OK) {
        fuzz_fail("cannot index the vocabulary of %s: %s", path, err.text);
    }
    g_index = fg_index_of(g_fast);
    return 0;
}

/* llama.cpp must parse `gbnf`; when the fast compiler builds it too, both must accept each
 * prefix of `text` (NULL: just build). */
static void check(const char *what, const char *gbnf, const char *text) {
    bool prefix = false, complete = false;
    enum pipit_status st =
        pipit_gbnf_match(g_vocab, gbnf, text != NULL ? text : "", &prefix, &complete);
    if (st == PIPIT_ERR_GRAMMAR) {
        fuzz_fail("llama.cpp refuses the compiled %s grammar:\n%s", what, gbnf);
    }
    if (st == PIPIT_OK && text != NULL && !prefix) {
        fuzz_fail("llama.cpp refuses \"%s\" as the start of a call of the %s grammar:\n%s", text,
                  what, gbnf);
    }
    struct fg_automaton *a = NULL;
    char msg[256];
    if (fg_automaton_new(g_index, gbnf, &a, msg, sizeof(msg)) != PIPIT_OK) {
        return; /* outside the fast subset or too large: the sampler falls back to llama.cpp */
    }
    int32_t s = fg_start(a);
    if (text != NULL && s != FG_DEAD) {
        s = fg_step_bytes(a, s, text, strlen(text));
        if (s == FG_DEAD) {
            fuzz_fail("the fast automaton refuses \"%s\", which llama.cpp allows, in the %s "
                      "grammar:\n%s",
                      text, what, gbnf);
        }
        (void)fg_accepting(a, s);
        const int32_t *toks = NULL;
        (void)fg_allowed(a, s, &toks);
    }
    fg_automaton_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_string((const char *)data, size, "fuzz", &ts, &err) != PIPIT_OK) {
        return 0;
    }
    size_t n = pipit_toolset_n_tools(ts);
    for (int syn = 0; syn < 2; syn++) {
        struct pipit_grammar_params gp = pipit_grammar_default_params();
        gp.syntax = (enum pipit_call_syntax)syn;
        /* caps from the input's size: small ones cut schemas' maxLength and maxItems */
        gp.max_string_chars = (uint32_t)(1 + size % 160);
        gp.max_array_items = (uint32_t)(size % 10);
        struct pipit_grammar *g = NULL;
        if (pipit_grammar_compile(ts, &gp, &g, &err) != PIPIT_OK) {
            continue; /* a refusal (e.g. a schema the grammar cannot express) is fine */
        }
        if (pipit_grammar_syntax(g) != gp.syntax) {
            fuzz_fail("the grammar has syntax %d, compiled for %d", (int)pipit_grammar_syntax(g),
                      syn);
        }
        char start[160];
        const char *first = n > 0 ? pipit_toolset_tool_name(ts, 0) : "";
        if (gp.syntax == PIPIT_SYNTAX_PIPIT) {
            snprintf(start, sizeof(start), "%s%s", pipit_call_syntax_trigger(gp.syntax), first);
        } else {
            snprintf(start, sizeof(start), "%s", pipit_call_syntax_trigger(gp.syntax));
        }
        check("call", pipit_grammar_call(g), n > 0 ? start : NULL);
        check("names", pipit_grammar_names(g), n > 0 ? start : NULL);
        for (size_t i = 0; i < n; i++) {
            const char *args = pipit_grammar_args(g, i);
            if (args == NULL) {
                fuzz_fail("no arguments grammar for tool %zu of %zu", i, n);
            }
            check("arguments", args, NULL);
        }
        if (pipit_grammar_args(g, n) != NULL) {
            fuzz_fail("an arguments grammar past the last tool");
        }
        pipit_grammar_free(g);
    }
    pipit_toolset_free(ts);
    return 0;
}
