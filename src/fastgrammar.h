/*
 * fastgrammar.h - pipit's own constrained decoder for the call grammars (internal interface;
 * the public side is "fast constrained decoding" in pipit.h, docs/fastgrammar.md).
 *
 * The fast decoder is a leaf: it gets the vocabulary as data (struct fg_vocab: every token's
 * text, the end-of-generation tokens) and never calls into the engine; the engine drives it.
 * One concept per file pair:
 *   fg_gbnf.*      the GBNF subset reader (text -> tree of nodes)
 *   fg_automaton.* the byte NFA, the lazy DFA and the allowed-token walks of the trie
 *   fg_index.*     the vocabulary index (token texts in a byte trie, token kinds)
 *   fg_cache.*     the on-disk cache of indexes and automata
 *   fg_sampler.*   one sampler's decisions: what to draw from, checking a draw, jump-forward
 *   fastgrammar.*  this handle: the index, the automata by grammar text, the scratch
 */
#ifndef PIPIT_FASTGRAMMAR_H
#define PIPIT_FASTGRAMMAR_H

#include "fg_automaton.h"
#include "fg_index.h"
#include "pipit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The handle of pipit_fastgrammar_init() (fg_vocab.c, which reads the vocabulary of the model
 * `owner` into `v`): takes `v` (see fg_index_read()), indexes it through the on-disk cache when
 * that is on; t_index_ms counts from `t0` (pipit_now_ms(), before the vocabulary was read). */
enum pipit_status fg_decoder_new(struct fg_vocab *v,
                                 const void *owner,
                                 double t0,
                                 struct pipit_fastgrammar **out,
                                 struct pipit_error *err);
/* The automaton of `gbnf` in `fg` (compiled on first use and kept). PIPIT_ERR_GRAMMAR when the
 * text lies outside the subset (remembered: later lookups fail fast), `msg` says why.
 * `transient` (a grammar for one step): kept off the disk cache, and a new transient grammar
 * frees the automata of the earlier ones, which no sampler may still use. */
enum pipit_status fg_lookup(struct pipit_fastgrammar *fg,
                            const char *gbnf,
                            bool transient,
                            struct fg_automaton **out,
                            char *msg,
                            size_t msg_size);
const struct fg_index *fg_index_of(const struct pipit_fastgrammar *fg);
/* The model the handle was made for (its `owner`: a sampler checks it is its own). */
const void *fg_owner_of(const struct pipit_fastgrammar *fg);
/* The decoder's scratch for its samplers (n_vocab entries each, allocated and touched once at
 * init, so a new sampler does not page-fault its way through them): a token buffer, the
 * stamps and their generation. A sampler uses them only within one step. */
void fg_scratch(struct pipit_fastgrammar *fg, int32_t **buf, uint32_t **stamp, uint32_t **gen);

#endif /* PIPIT_FASTGRAMMAR_H */
