/*
 * fg_automaton.h - the fast decoder's automaton (docs/fastgrammar.md): one GBNF text of the
 * subset pipit's grammar compiler emits (fg_gbnf.h), compiled to a byte NFA and determinized
 * lazily. Per DFA state it caches the byte transitions, the one forced byte (if any) and the list
 * of tokens the state allows, found by walking the vocabulary trie (fg_index.h) in lockstep.
 *
 * States are int32 ids >= 0; FG_DEAD (< 0) means "no sentence of the grammar starts like this".
 * The automaton is byte-exact for well-formed UTF-8; it rejects malformed UTF-8 (overlong forms,
 * surrogates, stray continuation bytes) which llama.cpp's grammar engine partly lets through.
 * Not thread-safe: one thread at a time per automaton (lazy construction mutates it).
 */
#ifndef PIPIT_FG_AUTOMATON_H
#define PIPIT_FG_AUTOMATON_H

#include "fg_index.h"
#include "pipit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FG_DEAD (-1)

/* A state allowing more tokens than this is "large": it keeps no token list; the sampler draws
 * first and checks the draw (string bodies, where almost every token fits). */
#define FG_LARGE_LIMIT    4096
/* A state that lets this many distinct bytes follow is large without walking (string bodies). */
#define FG_WIDE_BYTES     96
/* Tokens kept in exact sets of large states (fg_allowed_exact), per automaton: 4 MB. */
#define FG_EXACT_POOL     (1024 * 1024)
#define FG_MAX_DFA_STATES (1024 * 1024)
#define FG_UNKNOWN        (-2)

/* The automaton's internals, shared with its on-disk cache (fg_cache.c) only. */
struct fg_nstate {
    int32_t out, out2; /* byte state: out = next; epsilon state: up to two successors */
    uint8_t lo, hi;
    uint8_t is_byte;
};

struct fg_dstate {
    int32_t set_off, set_n; /* important NFA states, sorted, in set pool */
    bool accept;
    int16_t forced;    /* FG_UNKNOWN, -1 none, or the one byte that may follow */
    int32_t list_n;    /* FG_UNKNOWN, -1 large, or the number of allowed tokens */
    int64_t list_off;  /* into lists */
    int32_t exact_n;   /* large states: FG_UNKNOWN, or the cached exact allowed set's size */
    int64_t exact_off; /* into exact */
};

struct fg_automaton {
    const struct fg_index *ix;
    struct fg_nstate *nfa;
    size_t n_nfa, cap_nfa;
    uint8_t cls[256];
    int32_t n_cls;
    /* DFA */
    struct fg_dstate *dfa;
    size_t n_dfa, cap_dfa;
    int32_t *trans; /* n_dfa * n_cls */
    size_t cap_trans;
    int32_t *sets;
    size_t n_sets, cap_sets;
    int32_t *hash; /* open addressing: DFA ids, -1 empty */
    size_t hash_cap;
    int32_t *lists;
    size_t n_lists, cap_lists;
    int32_t *exact; /* exact allowed sets of large states met on a rejected draw */
    size_t n_exact, cap_exact;
    int32_t start;
    /* on-disk cache (fg_automaton_load/store): what the file held or was written with */
    size_t disk_dfa, disk_lists, disk_exact;
    /* scratch */
    int32_t *mark; /* per NFA state: generation stamp */
    int32_t gen;
    int32_t *stack, *found;
    int32_t *walk_buf;
    size_t walk_cap;
};

/* Compile `gbnf` (root rule "root") over the index `ix` (borrowed; NULL: an automaton that can
 * only be measured, pipit_fastgrammar_check()). PIPIT_ERR_GRAMMAR when the text does not parse or
 * lies outside the supported subset (recursion, too many states); `msg` says why. */
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
/* Whether `state` is a string body: at least FG_WIDE_BYTES distinct bytes may follow. */
bool fg_wide(const struct fg_automaton *a, int32_t state);

/* The tokens `state` allows (text tokens only: add the EOG tokens when fg_accepting()):
 * returns the count and *tokens (borrowed until the next call on `a`), or -1 when the state
 * is large (more than FG_LARGE_LIMIT tokens). */
int32_t fg_allowed(struct fg_automaton *a, int32_t state, const int32_t **tokens);
/* Every token `state` allows: the list of a small state, or the exact set of a large one,
 * walked once and then kept (up to FG_EXACT_POOL tokens per automaton; beyond that it is
 * recomputed per call). *tokens is borrowed until the next call on `a`. -1: out of memory. */
int32_t fg_allowed_exact(struct fg_automaton *a, int32_t state, const int32_t **tokens);
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

/* The hash of a sorted set of NFA states (the DFA's intern table; fg_cache.c rebuilds it). */
uint64_t fg_hash_set(const int32_t *s, int32_t n);

#endif /* PIPIT_FG_AUTOMATON_H */
