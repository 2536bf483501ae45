/*
 * fastgrammar.h - pipit's own constrained decoder for the call grammars (internal interface;
 * the public side is "fast constrained decoding" in pipit.h, docs/fastgrammar.md).
 *
 * Two objects:
 *   struct fg_index      one model's vocabulary: every token's text in a byte trie, the
 *                        end-of-generation tokens. Built once per model (read-only afterwards).
 *   struct fg_automaton  one GBNF text of the subset pipit's grammar compiler emits (literals,
 *                        code-point classes, groups, alternatives, ?, *, +, {m,n}, rule
 *                        references without recursion), compiled to a byte NFA and determinized
 *                        lazily. Per DFA state it caches the byte transitions, the one forced
 *                        byte (if any) and the list of tokens the state allows.
 *
 * States are int32 ids >= 0; FG_DEAD (< 0) means "no sentence of the grammar starts like this".
 * The automaton is byte-exact for well-formed UTF-8; it rejects malformed UTF-8 (overlong forms,
 * surrogates, stray continuation bytes) which llama.cpp's grammar engine partly lets through.
 * Not thread-safe: one thread at a time per automaton (lazy construction mutates it).
 */
#ifndef PIPIT_FASTGRAMMAR_H
#define PIPIT_FASTGRAMMAR_H

#include "pipit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FG_DEAD (-1)

/* A state allowing more tokens than this is "large": it keeps no token list; the sampler draws
 * first and checks the draw (string bodies, where almost every token fits). */
#define FG_LARGE_LIMIT 4096
/* A state that lets this many distinct bytes follow is large without walking (string bodies). */
#define FG_WIDE_BYTES  96
/* Tokens kept in exact sets of large states (fg_allowed_exact), per automaton: 4 MB. */
#define FG_EXACT_POOL  (1024 * 1024)

struct fg_index;
struct fg_automaton;

/* Read the vocabulary of `model` (borrowed; must outlive the index). */
enum pipit_status fg_index_new(const struct pipit_model *model, struct fg_index **out);
/* fg_index_new() with the on-disk cache in `cache_dir` (NULL: none): the trie is loaded from
 * there when a valid file for this exact vocabulary exists, else built and written (atomically;
 * a failed write is only logged). *from_cache (may be NULL) says which happened. */
enum pipit_status fg_index_new_cached(const struct pipit_model *model,
                                      const char *cache_dir,
                                      bool *from_cache,
                                      struct fg_index **out);
/* The mask cache directory: $PIPIT_CACHE/masks, else ~/.cache/pipit/masks (created). False
 * when the cache is off: PIPIT_CACHE empty or "off", no HOME, or the directory cannot be
 * created or written (logged at debug level). */
bool fg_cache_dir(char *buf, size_t cap);
void fg_index_free(struct fg_index *ix);
int32_t fg_index_n_vocab(const struct fg_index *ix);
/* The text of `token` (borrowed), *n its length; NULL for tokens without text. */
const char *fg_index_piece(const struct fg_index *ix, int32_t token, int32_t *n);
/* End-of-generation tokens (borrowed). */
const int32_t *fg_index_eog(const struct fg_index *ix, int32_t *n);
/* The tokens whose text holds '"', '\\' or a control byte: in a string body most of them are
 * refused, so a rejected draw there masks the refused ones at once (engine.c). */
const int32_t *fg_index_special(const struct fg_index *ix, int32_t *n);
/* 0, FG_SPECIAL_QUOTE or FG_SPECIAL_HARD. */
int fg_index_special_kind(const struct fg_index *ix, int32_t token);
/* Plain printable ASCII tokens (no quote, no backslash): the length of `token`'s text when it is
 * one, else -1; and all of them with at least `len` bytes. In a string body (fg_wide) such a
 * token stays in the body, so it is refused only for being too long: when one of `len` bytes is
 * refused, so is every longer one. */
int32_t fg_index_ascii_len(const struct fg_index *ix, int32_t token);
const int32_t *fg_index_ascii_from(const struct fg_index *ix, int32_t len, int32_t *n);
/* Whether `state` is a string body: at least FG_WIDE_BYTES distinct bytes may follow. */
bool fg_wide(const struct fg_automaton *a, int32_t state);
/* Bytes the index holds (memory accounting). */
size_t fg_index_bytes(const struct fg_index *ix);

/* Compile `gbnf` (root rule "root"). PIPIT_ERR_GRAMMAR when the text does not parse or lies
 * outside the supported subset (recursion, too many states); `msg` says why. */
enum pipit_status fg_automaton_new(const struct fg_index *ix,
                                   const char *gbnf,
                                   struct fg_automaton **out,
                                   char *msg,
                                   size_t msg_size);
void fg_automaton_free(struct fg_automaton *a);

int32_t fg_start(const struct fg_automaton *a);
bool fg_accepting(const struct fg_automaton *a, int32_t state);
/* The state after `n` bytes, FG_DEAD when they leave the language. */
int32_t fg_step_bytes(struct fg_automaton *a, int32_t state, const char *bytes, size_t n);
/* The state after `token`'s text (EOG and text-less tokens: FG_DEAD). */
int32_t fg_step_token(struct fg_automaton *a, int32_t state, int32_t token);
/* The tokens `state` allows (text tokens only: add the EOG tokens when fg_accepting()):
 * returns the count and *tokens (borrowed until the next call on `a`), or -1 when the state
 * is large (more than FG_LARGE_LIMIT tokens). */
int32_t fg_allowed(struct fg_automaton *a, int32_t state, const int32_t **tokens);
/* Every token `state` allows: the list of a small state, or the exact set of a large one,
 * walked once and then kept (up to FG_EXACT_POOL tokens per automaton; beyond that it is
 * recomputed per call). *tokens is borrowed until the next call on `a`. -1: out of memory. */
int32_t fg_allowed_exact(struct fg_automaton *a, int32_t state, const int32_t **tokens);
/* Special tokens: a quote comes first in the text, or a backslash or control byte does. */
#define FG_SPECIAL_QUOTE 1
#define FG_SPECIAL_HARD  2
/* Longest token text the index reads (longer pieces are left out: they never match). */
#define FG_MAX_PIECE     1024
/* The special tokens (fg_index_special) that `state` allows. When `state` refuses '\\' and every
 * control byte (a string body), a "hard" token is refused too: its text stays in the body (no
 * quote before) up to a byte the body refuses; so only the subtrees of the trie that hold quote
 * tokens are walked, cheap even in a string body. Otherwise every special token is checked.
 * *tokens is borrowed until the next call on `a`. -1: out of memory. */
int32_t fg_allowed_special(struct fg_automaton *a, int32_t state, const int32_t **tokens);
/* A superset of the tokens `state` allows, cheap to find: the trie is walked byte by byte while
 * the automaton is narrow, and where it enters a string body every token below is taken
 * unchecked (the index keeps each subtree's tokens contiguous). For a large state that is not
 * itself a string body (`": "` and then a string): the sampler draws among these and checks the
 * draw. *tokens is borrowed until the next call on `a`; -1 when the index has no subtree
 * ranges or memory ran out. */
int32_t fg_candidates(struct fg_automaton *a, int32_t state, const int32_t **tokens);
/* Every token whose first byte `state` refuses (a whole subtree of the trie's root per byte):
 * in a string body, tokens that start with a UTF-8 continuation byte, a control byte, ...
 * *tokens is borrowed until the next call on `a`; -1 as fg_candidates. */
int32_t fg_refused_first(struct fg_automaton *a, int32_t state, const int32_t **tokens);
/* Whether `state` is a string body that refuses '\\' and every control byte: then it refuses
 * every FG_SPECIAL_HARD token. */
bool fg_refuses_hard(struct fg_automaton *a, int32_t state);
/* Whether the exact set of `state` is kept (a later fg_allowed_exact() costs nothing). */
bool fg_exact_cached(const struct fg_automaton *a, int32_t state);
/* Every token `state` allows, computed without a limit into `out` (capacity n_vocab), kept
 * nowhere (the tests compare it with the cached sets). Returns the count. */
int32_t fg_allowed_all(struct fg_automaton *a, int32_t state, int32_t *out);
/* The text the grammar forces from `state` on (while exactly one byte may follow and the
 * state does not accept), at most `cap` bytes. Returns its length. */
size_t fg_forced_text(struct fg_automaton *a, int32_t state, char *buf, size_t cap);

struct fg_stats {
    int32_t nfa_states;
    int32_t dfa_states;    /* materialized so far */
    int32_t byte_classes;  /* byte equivalence classes of the transition rows */
    int32_t listed_states; /* states with a cached token list */
    int64_t listed_tokens; /* tokens in those lists */
    size_t bytes;          /* memory the automaton holds (not counting the index) */
};
void fg_automaton_stats(const struct fg_automaton *a, struct fg_stats *st);

/* Materialize every DFA state reachable from the start state (and the token lists of its
 * small states) up to `max_states`; returns the states visited. For warm-up and tests. */
int32_t fg_automaton_precompute(struct fg_automaton *a, int32_t max_states);

/* The on-disk cache of one automaton's materialized states (docs/fastgrammar.md). The key
 * (0: the index has no cache key, so no cache) hashes the vocabulary, the NFA and `gbnf`.
 * fg_automaton_load() fills a freshly compiled automaton from `path` and is false, leaving it
 * unchanged, on any problem (no file, another key, a checksum or structural mismatch);
 * fg_automaton_store() writes atomically. fg_automaton_dirty(): states, lists or exact sets
 * were added since the last load or store. */
uint64_t fg_automaton_key(const struct fg_automaton *a, const char *gbnf);
bool fg_automaton_cache_path(char *buf, size_t cap, const char *dir, uint64_t key);
bool fg_automaton_load(struct fg_automaton *a, const char *path, uint64_t key);
bool fg_automaton_store(struct fg_automaton *a, const char *path, uint64_t key);
bool fg_automaton_dirty(const struct fg_automaton *a);
/* The 64-bit word hash behind the cache files' checksums. In an automaton file (96-byte
 * header, then per-state int64 words, transitions, sets, lists, exact sets) the header checksum
 * at byte 72 is fg_hash_words(FILEIO_FNV_OFFSET, header, 72) and the payload checksum at byte
 * 64 chains it over the five arrays in file order. Exposed for the tests that forge files. */
uint64_t fg_hash_words(uint64_t h, const void *data, size_t n);

/* ============================================================================ the public handle */

/* The automaton of `gbnf` in `fg` (compiled on first use and kept). PIPIT_ERR_GRAMMAR when the
 * text lies outside the subset (remembered: later lookups fail fast), `msg` says why. */
enum pipit_status fg_lookup(struct pipit_fastgrammar *fg,
                            const char *gbnf,
                            struct fg_automaton **out,
                            char *msg,
                            size_t msg_size);
const struct fg_index *fg_index_of(const struct pipit_fastgrammar *fg);
/* The decoder's scratch for its samplers (n_vocab entries each, allocated and touched once at
 * init, so a new sampler does not page-fault its way through them): a token buffer, the
 * stamps and their generation. A sampler uses them only within one step. */
void fg_scratch(struct pipit_fastgrammar *fg, int32_t **buf, uint32_t **stamp, uint32_t **gen);
const struct pipit_model *fg_model_of(const struct pipit_fastgrammar *fg);

#endif /* PIPIT_FASTGRAMMAR_H */
