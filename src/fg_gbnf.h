/*
 * fg_gbnf.h - the GBNF reader of the fast decoder (docs/fastgrammar.md): the subset pipit's
 * grammar compiler emits (literals, code-point classes, groups, alternatives, ?, *, +, {m,n},
 * rule references) parsed into a tree of nodes, which fg_automaton.c compiles to a byte NFA.
 * Code-point classes are normalized (sorted, merged, not negated). Knows nothing of automata
 * or vocabularies.
 */
#ifndef PIPIT_FG_GBNF_H
#define PIPIT_FG_GBNF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FG_MAX_RULES  65536
#define FG_MAX_DEPTH  1024 /* rule-reference and parenthesis nesting */
#define FG_MAX_REPEAT 65536

enum fg_node_kind {
    FG_N_SEQ,   /* a = first kid index in kids, b = count */
    FG_N_ALT,   /* same */
    FG_N_LIT,   /* a = offset in lit bytes, b = length */
    FG_N_CLASS, /* a = offset in ranges (pairs), b = pairs; already normalized, not negated */
    FG_N_REF,   /* a = rule */
    FG_N_REP,   /* a = node, b = min, c = max (-1 = unbounded) */
};

struct fg_node {
    enum fg_node_kind kind;
    int32_t a, b, c;
};

struct fg_rule {
    char name[128];
    int32_t body;     /* node, -1 until defined */
    bool in_progress; /* being inlined (recursion check) */
    /* the rule's NFA fragments built so far: (continuation, start) pairs. A rule referenced
     * again with the same continuation reuses its fragment, so a chain of rules that each
     * reference the next from several places (optional object members) stays linear */
    int32_t *memo;
    size_t n_memo, cap_memo; /* pairs; int32 slots */
};

struct fg_gbnf {
    const char *s;
    size_t pos;
    struct fg_node *nodes;
    size_t n_nodes, cap_nodes;
    int32_t *kids;
    size_t n_kids, cap_kids;
    uint8_t *lit;
    size_t n_lit, cap_lit;
    uint32_t *ranges;
    size_t n_ranges, cap_ranges; /* in uint32 units (2 per range) */
    struct fg_rule *rules;
    size_t n_rules, cap_rules;
    char *msg;
    size_t msg_size;
    bool failed;
};

/* Parse p->s (set .s, .msg and .msg_size, zero the rest) into p's nodes and rules. On an error
 * p->failed is set and p->msg says what and where. */
void fg_gbnf_parse(struct fg_gbnf *p);
/* Mark `p` failed with "fastgrammar: <what> at offset <pos>" (the first failure wins). */
void fg_gbnf_fail(struct fg_gbnf *p, const char *what);
/* Append a node; its index, or -1 (p failed: out of memory). */
int32_t fg_gbnf_node(struct fg_gbnf *p, enum fg_node_kind k, int32_t a, int32_t b, int32_t c);
/* Free what p holds (not p itself). */
void fg_gbnf_free(struct fg_gbnf *p);

#endif /* PIPIT_FG_GBNF_H */
