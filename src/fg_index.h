/*
 * fg_index.h - the fast decoder's vocabulary index (docs/fastgrammar.md): one model's
 * vocabulary as data (every token's text, the end-of-generation tokens), its texts in a byte
 * trie, and the token kinds the sampler masks in bulk. Built once per model, read-only
 * afterwards. It knows no model: the engine reads the vocabulary and hands it over
 * (struct fg_vocab), so the fast decoder never calls back into the engine.
 */
#ifndef PIPIT_FG_INDEX_H
#define PIPIT_FG_INDEX_H

#include "pipit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest token text the index takes (the engine leaves longer pieces out: they never match). */
#define FG_MAX_PIECE     1024
/* Special tokens: a quote comes first in the text, or a backslash or control byte does. */
#define FG_SPECIAL_QUOTE 1
#define FG_SPECIAL_HARD  2

/* A vocabulary as data (every array malloc'd; fg_index_read() takes them). Token t's text is
 * text[off[t]..off[t+1]) as llama.cpp's grammar sampler sees it (special tokens rendered),
 * empty for end-of-generation tokens and tokens without text, at most FG_MAX_PIECE bytes. */
struct fg_vocab {
    int32_t n_vocab;
    char *text;   /* every token's text, back to back */
    int64_t *off; /* n_vocab + 1 offsets into text, off[0] = 0 */
    int32_t *eog; /* the end-of-generation tokens */
    int32_t n_eog;
};

struct fg_index {
    int32_t n_vocab;
    char *blob;   /* every piece, back to back */
    int64_t *off; /* n_vocab + 1 offsets into blob */
    int32_t *eog; /* end-of-generation tokens */
    int32_t n_eog;
    int32_t *special; /* tokens with a byte that ends or escapes a string ('"', '\\', < 0x20) */
    int32_t n_special;
    uint8_t *tok_special; /* per token: 0 not special, FG_SPECIAL_QUOTE or FG_SPECIAL_HARD */
    uint8_t *sub_special; /* per trie node: 1 when a FG_SPECIAL_QUOTE token ends in its subtree */
    int32_t *ascii;       /* plain printable ASCII tokens (no '"', '\\'), by text length */
    int32_t *ascii_start; /* FG_MAX_PIECE + 2 offsets: ascii[ascii_start[L]..] are >= L bytes */
    int16_t *ascii_len;   /* per token: its length when in `ascii`, else -1 */
    uint8_t *first_byte;  /* per token: its first byte, 0 for the special and empty ones */
    int32_t *sub_end;     /* per node: its subtree is nodes [node, sub_end) (preorder) */
    int32_t *node_tok_start; /* n_nodes + 1: tok_by_node[node_tok_start[x]..] end at x.. */
    int32_t *tok_by_node;    /* tokens ordered by the node their text ends at */
    /* trie: node 0 is the root (empty text) */
    int32_t n_nodes;
    uint8_t *byte;     /* the byte that leads into the node */
    int32_t *child;    /* first child (children in increasing byte order), -1 none */
    int32_t *sibling;  /* next sibling, -1 none */
    int32_t *tok;      /* first token whose text ends here, -1 none */
    int32_t *tok_next; /* per token: the next token with the same text, -1 none */
    uint64_t key;      /* index_key(), when the on-disk cache is in use (else 0) */
};

/* Take `v` (its arrays belong to the index, or are freed, either way; *v is zeroed) and build the
 * index: fg_index_read(), fg_index_build_trie(), fg_index_finish(). PIPIT_ERR_INVALID_ARG when
 * `v` is not a vocabulary as described above. */
enum pipit_status fg_index_new(struct fg_vocab *v, struct fg_index **out);
/* The steps, for the on-disk cache (fg_cache.c), which replaces the trie build by a load:
 * phase 1 takes the pieces and sorts out the plain ASCII and special tokens; phase 2 builds the
 * trie (false: out of memory); phase 3 derives the subtree ranges and quote marks of a trie,
 * built or loaded (false: out of memory). */
enum pipit_status fg_index_read(struct fg_vocab *v, struct fg_index **out);
bool fg_index_build_trie(struct fg_index *ix);
bool fg_index_finish(struct fg_index *ix);
void fg_index_free(struct fg_index *ix);

int32_t fg_index_n_vocab(const struct fg_index *ix);
/* The text of `token` (borrowed), *n its length; NULL for tokens without text. */
const char *fg_index_piece(const struct fg_index *ix, int32_t token, int32_t *n);
/* End-of-generation tokens (borrowed), and whether `token` is one. */
const int32_t *fg_index_eog(const struct fg_index *ix, int32_t *n);
bool fg_index_is_eog(const struct fg_index *ix, int32_t token);
/* The tokens whose text holds '"', '\\' or a control byte: in a string body most of them are
 * refused, so a rejected draw there masks the refused ones at once (fg_sampler.c). */
const int32_t *fg_index_special(const struct fg_index *ix, int32_t *n);
/* 0, FG_SPECIAL_QUOTE or FG_SPECIAL_HARD. */
int fg_index_special_kind(const struct fg_index *ix, int32_t token);
/* Plain printable ASCII tokens (no quote, no backslash): the length of `token`'s text when it is
 * one, else -1; and all of them with at least `len` bytes. In a string body such a token stays
 * in the body, so it is refused only for being too long: when one of `len` bytes is refused, so
 * is every longer one. */
int32_t fg_index_ascii_len(const struct fg_index *ix, int32_t token);
const int32_t *fg_index_ascii_from(const struct fg_index *ix, int32_t len, int32_t *n);
/* Bytes the index holds (memory accounting). */
size_t fg_index_bytes(const struct fg_index *ix);

#endif /* PIPIT_FG_INDEX_H */
