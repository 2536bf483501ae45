/*
 * pattern.c - JSON Schema "pattern" regular expressions (pipit's subset, see pattern.h):
 * parse into a small syntax tree, match with a Thompson NFA over code points, and write the
 * same tree as a GBNF expression for the grammar compiler.
 *
 * Invariants: character sets are sorted, merged, non-negated ranges of code points; every
 * tree node index is below its parent's (children are built first); the NFA is rebuilt per
 * call (patterns are short and checked once per generated call).
 */
#include "pattern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAT_MAX_NODES  1024
#define PAT_MAX_RANGES 4096
#define PAT_MAX_CP     0x10FFFFu

enum pn_kind {
    PN_SET,
    PN_CAT,
    PN_ALT,
    PN_REP,
    PN_EMPTY
};

struct pn {
    enum pn_kind kind;
    int a, b;     /* children (CAT, ALT: a b; REP: a) */
    int min, max; /* REP: max -1 = unbounded */
    int r0, nr;   /* SET: ranges[r0 .. r0+nr) */
};

struct prange {
    uint32_t lo, hi;
};

struct pat {
    const char *re;
    size_t pos, len;
    struct pn node[PAT_MAX_NODES];
    int n_nodes;
    struct prange range[PAT_MAX_RANGES];
    int n_ranges;
    bool anchor_start, anchor_end;
    int root;
    const char *err;
};

/* ============================================================================ UTF-8 */

/* Decode one code point at s[*i] (valid UTF-8 assumed, jansson checks it); advance *i. */
static uint32_t utf8_next(const char *s, size_t len, size_t *i) {
    unsigned char c = (unsigned char)s[*i];
    int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
    size_t k = 1;
    for (; k < (size_t)n && *i + k < len; k++) {
        cp = (cp << 6) | ((unsigned char)s[*i + k] & 0x3Fu);
    }
    *i += k;
    return cp;
}

/* ============================================================================ parsing */

static int new_node(struct pat *p, enum pn_kind kind) {
    if (p->n_nodes >= PAT_MAX_NODES) {
        p->err = "the pattern is too long";
        return -1;
    }
    struct pn *n = &p->node[p->n_nodes];
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    return p->n_nodes++;
}

static bool add_range(struct pat *p, uint32_t lo, uint32_t hi) {
    if (p->n_ranges >= PAT_MAX_RANGES) {
        p->err = "the pattern's character classes are too large";
        return false;
    }
    p->range[p->n_ranges++] = (struct prange){lo, hi};
    return true;
}

static int cmp_range(const void *a, const void *b) {
    const struct prange *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sort and merge ranges[r0..end); negate when asked. Returns the new count. */
static int normalize(struct pat *p, int r0, bool negate) {
    int n = p->n_ranges - r0;
    qsort(&p->range[r0], (size_t)n, sizeof(struct prange), cmp_range);
    int k = 0;
    for (int i = 0; i < n; i++) {
        struct prange r = p->range[r0 + i];
        if (k > 0 && r.lo <= p->range[r0 + k - 1].hi + 1) {
            if (r.hi > p->range[r0 + k - 1].hi) {
                p->range[r0 + k - 1].hi = r.hi;
            }
        } else {
            p->range[r0 + k++] = r;
        }
    }
    p->n_ranges = r0 + k;
    if (!negate) {
        return k;
    }
    struct prange tmp[PAT_MAX_RANGES];
    int m = 0;
    uint32_t next = 0;
    for (int i = 0; i < k; i++) {
        if (p->range[r0 + i].lo > next) {
            tmp[m++] = (struct prange){next, p->range[r0 + i].lo - 1};
        }
        next = p->range[r0 + i].hi + 1;
    }
    if (next <= PAT_MAX_CP) {
        tmp[m++] = (struct prange){next, PAT_MAX_CP};
    }
    p->n_ranges = r0;
    for (int i = 0; i < m; i++) {
        if (!add_range(p, tmp[i].lo, tmp[i].hi)) {
            return -1;
        }
    }
    return m;
}

static bool add_class_escape(struct pat *p, char e) {
    switch (e) {
        case 'd':
            return add_range(p, '0', '9');
        case 'w':
            return add_range(p, '0', '9') && add_range(p, 'A', 'Z') && add_range(p, '_', '_') &&
                   add_range(p, 'a', 'z');
        case 's':
            return add_range(p, '\t', '\r') && add_range(p, ' ', ' ') && add_range(p, 0xA0, 0xA0) &&
                   add_range(p, 0x1680, 0x1680) && add_range(p, 0x2000, 0x200A) &&
                   add_range(p, 0x2028, 0x2029) && add_range(p, 0x202F, 0x202F) &&
                   add_range(p, 0x205F, 0x205F) && add_range(p, 0x3000, 0x3000) &&
                   add_range(p, 0xFEFF, 0xFEFF);
        default:
            return false;
    }
}

static int hex_digit(char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* An escape after '\\' at p->pos: a single code point (*cp), or a class (*cls: 'd', 'D', ...).
 * False (p->err set) when outside the subset. */
static bool parse_escape(struct pat *p, uint32_t *cp, char *cls, bool in_class) {
    if (p->pos >= p->len) {
        p->err = "the pattern ends with a lone backslash";
        return false;
    }
    char e = p->re[p->pos++];
    *cls = 0;
    switch (e) {
        case 'd':
        case 'D':
        case 'w':
        case 'W':
        case 's':
        case 'S':
            *cls = e;
            return true;
        case 't':
            *cp = '\t';
            return true;
        case 'n':
            *cp = '\n';
            return true;
        case 'r':
            *cp = '\r';
            return true;
        case 'f':
            *cp = '\f';
            return true;
        case 'v':
            *cp = '\v';
            return true;
        case '0':
            *cp = 0;
            return true;
        case 'b':
            if (in_class) {
                *cp = '\b';
                return true;
            }
            p->err = "word boundaries (\\b) are not supported";
            return false;
        case 'x':
        case 'u': {
            int n = e == 'x' ? 2 : 4;
            uint32_t v = 0;
            for (int i = 0; i < n; i++) {
                int h = p->pos < p->len ? hex_digit(p->re[p->pos]) : -1;
                if (h < 0) {
                    p->err = "\\x needs 2 and \\u 4 hex digits";
                    return false;
                }
                v = v * 16 + (uint32_t)h;
                p->pos++;
            }
            *cp = v;
            return true;
        }
        default:
            break;
    }
    if (e >= '1' && e <= '9') {
        p->err = "backreferences are not supported";
        return false;
    }
    if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) {
        p->err = e == 'p' || e == 'P' ? "Unicode property escapes are not supported"
                                      : "unknown escape (only \\d \\D \\w \\W \\s \\S \\t \\n "
                                        "\\r \\f \\v \\xHH \\uHHHH and escaped punctuation)";
        return false;
    }
    size_t i = p->pos - 1;
    *cp = utf8_next(p->re, p->len, &i);
    p->pos = i;
    return true;
}

/* A SET node of the class escape `cls` ('d', 'D', ...). */
static int class_node(struct pat *p, char cls) {
    int n = new_node(p, PN_SET);
    if (n < 0) {
        return -1;
    }
    int r0 = p->n_ranges;
    char lower = (char)(cls | 0x20);
    if (!add_class_escape(p, lower)) {
        return -1;
    }
    int k = normalize(p, r0, cls != lower);
    if (k < 0) {
        return -1;
    }
    p->node[n].r0 = r0;
    p->node[n].nr = k;
    return n;
}

static int char_node(struct pat *p, uint32_t lo, uint32_t hi) {
    int n = new_node(p, PN_SET);
    if (n < 0 || !add_range(p, lo, hi)) {
        return -1;
    }
    p->node[n].r0 = p->n_ranges - 1;
    p->node[n].nr = 1;
    return n;
}

static int parse_class(struct pat *p) {
    bool negate = p->pos < p->len && p->re[p->pos] == '^';
    p->pos += negate;
    int n = new_node(p, PN_SET);
    if (n < 0) {
        return -1;
    }
    int r0 = p->n_ranges;
    bool first = true;
    for (;;) {
        if (p->pos >= p->len) {
            p->err = "unterminated character class";
            return -1;
        }
        if (p->re[p->pos] == ']' && !first) {
            p->pos++;
            break;
        }
        first = false;
        uint32_t lo = 0;
        char cls = 0;
        if (p->re[p->pos] == '\\') {
            p->pos++;
            if (!parse_escape(p, &lo, &cls, true)) {
                return -1;
            }
        } else if (p->re[p->pos] == '[' && p->pos + 1 < p->len &&
                   (p->re[p->pos + 1] == ':' || p->re[p->pos + 1] == '=' ||
                    p->re[p->pos + 1] == '.')) {
            p->err = "POSIX classes ([:alpha:]) are not supported";
            return -1;
        } else {
            lo = utf8_next(p->re, p->len, &p->pos);
        }
        if (cls != 0) {
            char lower = (char)(cls | 0x20);
            if (cls != lower) {
                int s0 = p->n_ranges;
                if (!add_class_escape(p, lower) || normalize(p, s0, true) < 0) {
                    return -1;
                }
            } else if (!add_class_escape(p, lower)) {
                return -1;
            }
            continue;
        }
        uint32_t hi = lo;
        if (p->pos + 1 < p->len && p->re[p->pos] == '-' && p->re[p->pos + 1] != ']') {
            p->pos++;
            if (p->re[p->pos] == '\\') {
                p->pos++;
                if (!parse_escape(p, &hi, &cls, true)) {
                    return -1;
                }
                if (cls != 0) {
                    p->err = "a class escape cannot end a range";
                    return -1;
                }
            } else {
                hi = utf8_next(p->re, p->len, &p->pos);
            }
            if (hi < lo) {
                p->err = "a range in a character class is out of order";
                return -1;
            }
        }
        if (!add_range(p, lo, hi)) {
            return -1;
        }
    }
    int k = normalize(p, r0, negate);
    if (k < 0) {
        return -1;
    }
    p->node[n].r0 = r0;
    p->node[n].nr = k;
    return n;
}

static int parse_alt(struct pat *p, int depth);

static int parse_atom(struct pat *p, int depth) {
    char c = p->re[p->pos];
    if (c == '(') {
        p->pos++;
        if (p->pos < p->len && p->re[p->pos] == '?') {
            if (p->pos + 1 < p->len && p->re[p->pos + 1] == ':') {
                p->pos += 2;
            } else {
                p->err = "lookaround and named groups are not supported";
                return -1;
            }
        }
        int n = parse_alt(p, depth + 1);
        if (n < 0) {
            return -1;
        }
        if (p->pos >= p->len || p->re[p->pos] != ')') {
            p->err = "unbalanced parenthesis";
            return -1;
        }
        p->pos++;
        return n;
    }
    if (c == '[') {
        p->pos++;
        return parse_class(p);
    }
    if (c == '.') {
        p->pos++;
        int n = new_node(p, PN_SET);
        int r0 = p->n_ranges;
        if (n < 0 || !add_range(p, '\n', '\n') || !add_range(p, '\r', '\r') ||
            !add_range(p, 0x2028, 0x2029)) {
            return -1;
        }
        int k = normalize(p, r0, true);
        if (k < 0) {
            return -1;
        }
        p->node[n].r0 = r0;
        p->node[n].nr = k;
        return n;
    }
    if (c == '\\') {
        p->pos++;
        uint32_t cp = 0;
        char cls = 0;
        if (!parse_escape(p, &cp, &cls, false)) {
            return -1;
        }
        return cls != 0 ? class_node(p, cls) : char_node(p, cp, cp);
    }
    if (c == '^' || c == '$') {
        p->err = "\"^\" and \"$\" are supported only at the start and the end of the pattern";
        return -1;
    }
    if (c == '*' || c == '+' || c == '?') {
        p->err = "a quantifier with nothing to repeat";
        return -1;
    }
    if (c == ')') {
        p->err = "unbalanced parenthesis";
        return -1;
    }
    uint32_t cp = utf8_next(p->re, p->len, &p->pos);
    return char_node(p, cp, cp);
}

/* {n}, {n,}, {n,m} at p->pos (at '{'): true and the counts when it is one. */
static bool parse_braces(struct pat *p, int *min, int *max) {
    size_t i = p->pos + 1;
    long a = -1, b = -1;
    char *end = NULL;
    if (i >= p->len || p->re[i] < '0' || p->re[i] > '9') {
        return false;
    }
    a = strtol(p->re + i, &end, 10);
    i = (size_t)(end - p->re);
    if (i < p->len && p->re[i] == '}') {
        b = a;
    } else if (i < p->len && p->re[i] == ',') {
        i++;
        if (i < p->len && p->re[i] == '}') {
            b = -1;
        } else if (i < p->len && p->re[i] >= '0' && p->re[i] <= '9') {
            b = strtol(p->re + i, &end, 10);
            i = (size_t)(end - p->re);
            if (i >= p->len || p->re[i] != '}') {
                return false;
            }
        } else {
            return false;
        }
    } else {
        return false;
    }
    *min = (int)(a > PATTERN_MAX_REPEAT + 1 ? PATTERN_MAX_REPEAT + 1 : a);
    *max = b < 0 ? -1 : (int)(b > PATTERN_MAX_REPEAT + 1 ? PATTERN_MAX_REPEAT + 1 : b);
    p->pos = i + 1;
    return true;
}

static int parse_repeat(struct pat *p, int depth) {
    int n = parse_atom(p, depth);
    while (n >= 0 && p->pos < p->len) {
        char c = p->re[p->pos];
        int min = 0, max = 0;
        if (c == '*') {
            min = 0, max = -1;
            p->pos++;
        } else if (c == '+') {
            min = 1, max = -1;
            p->pos++;
        } else if (c == '?') {
            min = 0, max = 1;
            p->pos++;
        } else if (c != '{' || !parse_braces(p, &min, &max)) {
            break;
        }
        if (min > PATTERN_MAX_REPEAT || max > PATTERN_MAX_REPEAT) {
            p->err = "a repetition count is above the limit";
            return -1;
        }
        if (max >= 0 && max < min) {
            p->err = "a repetition {n,m} has m below n";
            return -1;
        }
        if (p->pos < p->len && p->re[p->pos] == '?') {
            p->pos++; /* lazy: the same strings match */
        } else if (p->pos < p->len && p->re[p->pos] == '+') {
            p->err = "possessive quantifiers are not supported";
            return -1;
        }
        int r = new_node(p, PN_REP);
        if (r < 0) {
            return -1;
        }
        p->node[r].a = n;
        p->node[r].min = min;
        p->node[r].max = max;
        n = r;
        if (p->pos < p->len &&
            (p->re[p->pos] == '*' || p->re[p->pos] == '+' || p->re[p->pos] == '?')) {
            p->err = "a quantifier with nothing to repeat";
            return -1;
        }
    }
    return n;
}

static int parse_cat(struct pat *p, int depth) {
    int n = -1;
    while (p->pos < p->len && p->re[p->pos] != '|' && p->re[p->pos] != ')') {
        int m = parse_repeat(p, depth);
        if (m < 0) {
            return -1;
        }
        if (n < 0) {
            n = m;
        } else {
            int c = new_node(p, PN_CAT);
            if (c < 0) {
                return -1;
            }
            p->node[c].a = n;
            p->node[c].b = m;
            n = c;
        }
    }
    return n >= 0 ? n : new_node(p, PN_EMPTY);
}

static int parse_alt(struct pat *p, int depth) {
    if (depth > 32) {
        p->err = "groups nested too deeply";
        return -1;
    }
    int n = parse_cat(p, depth);
    while (n >= 0 && p->pos < p->len && p->re[p->pos] == '|') {
        p->pos++;
        int m = parse_cat(p, depth);
        if (m < 0) {
            return -1;
        }
        int a = new_node(p, PN_ALT);
        if (a < 0) {
            return -1;
        }
        p->node[a].a = n;
        p->node[a].b = m;
        n = a;
    }
    return n;
}

/* Parse `re` into *p (heap: the struct is large). NULL with *err set when outside the
 * subset. */
static struct pat *pat_parse(const char *re, const char **err) {
    struct pat *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        *err = "out of memory";
        return NULL;
    }
    p->re = re;
    p->len = strlen(re);
    if (p->len > 0 && re[0] == '^') {
        p->anchor_start = true;
        p->pos = 1;
    }
    if (p->len > p->pos && re[p->len - 1] == '$') {
        size_t bs = 0; /* an escaped "\$" is a literal */
        for (size_t i = p->len - 1; i > 0 && re[i - 1] == '\\'; i--) {
            bs++;
        }
        if (bs % 2 == 0) {
            p->anchor_end = true;
            p->len--;
        }
    }
    p->root = parse_alt(p, 0);
    if (p->root >= 0 && p->pos < p->len) {
        p->err = "unbalanced parenthesis";
    }
    if (p->root < 0 || p->err != NULL) {
        *err = p->err != NULL ? p->err : "cannot parse the pattern";
        free(p);
        return NULL;
    }
    return p;
}

/* ============================================================================ the NFA */

enum ns_kind {
    NS_EPS,
    NS_SET,
    NS_MATCH
};

struct nstate {
    enum ns_kind kind;
    int out1, out2; /* -1 none */
    int set;        /* NS_SET: the tree node holding the ranges */
};

struct nfa {
    struct nstate *st;
    int n, cap;
    bool overflow;
};

static int ns_new(struct nfa *a, enum ns_kind kind) {
    if (a->n >= PATTERN_MAX_STATES) {
        a->overflow = true;
        return -1;
    }
    if (a->n == a->cap) {
        int cap = a->cap > 0 ? a->cap * 2 : 64;
        struct nstate *s = realloc(a->st, (size_t)cap * sizeof(*s));
        if (s == NULL) {
            a->overflow = true;
            return -1;
        }
        a->st = s;
        a->cap = cap;
    }
    a->st[a->n] = (struct nstate){kind, -1, -1, -1};
    return a->n++;
}

/* Build node `x` as a fragment: *start, *end (an EPS state whose out1 is free). */
static bool build(const struct pat *p, struct nfa *a, int x, int *start, int *end) {
    const struct pn *n = &p->node[x];
    switch (n->kind) {
        case PN_EMPTY: {
            int s = ns_new(a, NS_EPS);
            *start = *end = s;
            return s >= 0;
        }
        case PN_SET: {
            int s = ns_new(a, NS_SET), e = ns_new(a, NS_EPS);
            if (s < 0 || e < 0) {
                return false;
            }
            a->st[s].set = x;
            a->st[s].out1 = e;
            *start = s;
            *end = e;
            return true;
        }
        case PN_CAT: {
            int s1, e1, s2, e2;
            if (!build(p, a, n->a, &s1, &e1) || !build(p, a, n->b, &s2, &e2)) {
                return false;
            }
            a->st[e1].out1 = s2;
            *start = s1;
            *end = e2;
            return true;
        }
        case PN_ALT: {
            int s = ns_new(a, NS_EPS), e = ns_new(a, NS_EPS), s1, e1, s2, e2;
            if (s < 0 || e < 0 || !build(p, a, n->a, &s1, &e1) || !build(p, a, n->b, &s2, &e2)) {
                return false;
            }
            a->st[s].out1 = s1;
            a->st[s].out2 = s2;
            a->st[e1].out1 = e;
            a->st[e2].out1 = e;
            *start = s;
            *end = e;
            return true;
        }
        case PN_REP: {
            int s = ns_new(a, NS_EPS);
            if (s < 0) {
                return false;
            }
            int cur = s; /* EPS whose out1 is free */
            for (int i = 0; i < n->min; i++) {
                int s1, e1;
                if (!build(p, a, n->a, &s1, &e1)) {
                    return false;
                }
                a->st[cur].out1 = s1;
                cur = e1;
            }
            int e = ns_new(a, NS_EPS);
            if (e < 0) {
                return false;
            }
            if (n->max < 0) {
                int loop = ns_new(a, NS_EPS), s1, e1;
                if (loop < 0 || !build(p, a, n->a, &s1, &e1)) {
                    return false;
                }
                a->st[cur].out1 = loop;
                a->st[loop].out1 = s1;
                a->st[loop].out2 = e;
                a->st[e1].out1 = loop;
            } else {
                for (int i = n->min; i < n->max; i++) {
                    int s1, e1;
                    if (!build(p, a, n->a, &s1, &e1)) {
                        return false;
                    }
                    int split = ns_new(a, NS_EPS);
                    if (split < 0) {
                        return false;
                    }
                    a->st[cur].out1 = split;
                    a->st[split].out1 = s1;
                    a->st[split].out2 = e;
                    cur = e1;
                }
                a->st[cur].out1 = e;
            }
            *start = s;
            *end = e;
            return true;
        }
    }
    return false;
}

static bool set_has(const struct pat *p, int x, uint32_t cp) {
    const struct pn *n = &p->node[x];
    for (int i = 0; i < n->nr; i++) {
        if (cp >= p->range[n->r0 + i].lo && cp <= p->range[n->r0 + i].hi) {
            return true;
        }
    }
    return false;
}

/* Add the epsilon closure of `s` to the list (mark[] == gen: already in). */
static void
closure(const struct nfa *a, int s, int *list, int *n, unsigned *mark, unsigned gen, int *stack) {
    int top = 0;
    stack[top++] = s;
    while (top > 0) {
        int x = stack[--top];
        if (x < 0 || mark[x] == gen) {
            continue;
        }
        mark[x] = gen;
        if (a->st[x].kind == NS_EPS) {
            stack[top++] = a->st[x].out2;
            stack[top++] = a->st[x].out1;
        } else {
            list[(*n)++] = x;
        }
    }
}

static bool nfa_build(const struct pat *p, struct nfa *a, int *start) {
    int s, e;
    if (!build(p, a, p->root, &s, &e)) {
        return false;
    }
    int m = ns_new(a, NS_MATCH);
    if (m < 0) {
        return false;
    }
    a->st[e].out1 = m;
    *start = s;
    return true;
}

bool pattern_supported(const char *re, char *why, size_t cap) {
    const char *err = NULL;
    struct pat *p = pat_parse(re, &err);
    if (p == NULL) {
        snprintf(why, cap, "%s", err);
        return false;
    }
    struct nfa a = {0};
    int start = 0;
    bool ok = nfa_build(p, &a, &start);
    free(a.st);
    if (!ok) {
        snprintf(why, cap, "it expands to more than %d states", PATTERN_MAX_STATES);
        free(p);
        return false;
    }
    struct strbuf b = {0};
    ok = pattern_gbnf(re, 8, &b);
    strbuf_free(&b);
    free(p);
    if (!ok) {
        snprintf(why, cap,
                 "it needs a character pipit's strings cannot hold (a quote, a "
                 "backslash or a control character)");
    }
    return ok;
}

bool pattern_match(const char *re, const char *s, size_t len) {
    const char *err = NULL;
    struct pat *p = pat_parse(re, &err);
    if (p == NULL) {
        return false;
    }
    struct nfa a = {0};
    int start = 0;
    bool matched = false;
    if (nfa_build(p, &a, &start)) {
        size_t n = (size_t)a.n;
        int *cur = malloc(n * sizeof(int)), *next = malloc(n * sizeof(int));
        int *stack = malloc(2 * n * sizeof(int) + 2 * sizeof(int));
        unsigned *mark = calloc(n, sizeof(unsigned));
        if (cur != NULL && next != NULL && stack != NULL && mark != NULL) {
            unsigned gen = 1;
            int nc = 0;
            closure(&a, start, cur, &nc, mark, gen, stack);
            size_t i = 0;
            for (;;) {
                bool at_end = i >= len;
                for (int k = 0; k < nc && !matched; k++) {
                    matched = a.st[cur[k]].kind == NS_MATCH && (!p->anchor_end || at_end);
                }
                if (matched || at_end) {
                    break;
                }
                uint32_t cp = utf8_next(s, len, &i);
                gen++;
                int nn = 0;
                for (int k = 0; k < nc; k++) {
                    const struct nstate *x = &a.st[cur[k]];
                    if (x->kind == NS_SET && set_has(p, x->set, cp)) {
                        closure(&a, x->out1, next, &nn, mark, gen, stack);
                    }
                }
                if (!p->anchor_start) {
                    closure(&a, start, next, &nn, mark, gen, stack);
                }
                int *t = cur;
                cur = next;
                next = t;
                nc = nn;
                if (nc == 0) {
                    break;
                }
            }
        }
        free(cur);
        free(next);
        free(stack);
        free(mark);
    }
    free(a.st);
    free(p);
    return matched;
}

/* ============================================================================ GBNF */

static void gbnf_cp(struct strbuf *b, uint32_t cp) {
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9')) {
        char c = (char)cp;
        strbuf_add(b, &c, 1);
    } else if (cp < 0x80) {
        strbuf_printf(b, "\\x%02X", (unsigned)cp);
    } else if (cp <= 0xFFFF) {
        strbuf_printf(b, "\\u%04X", (unsigned)cp);
    } else {
        strbuf_printf(b, "\\U%08X", (unsigned)cp);
    }
}

/* The set of node `x` without what a grammar string cannot hold ('"', '\\', controls,
 * surrogates); false when nothing is left. */
static bool gbnf_set(const struct pat *p, int x, struct strbuf *b) {
    static const struct prange forbidden[] = {
        {0x00, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}, {0xD800, 0xDFFF}};
    const struct pn *n = &p->node[x];
    bool any = false;
    strbuf_str(b, "[");
    for (int i = 0; i < n->nr; i++) {
        uint32_t lo = p->range[n->r0 + i].lo, hi = p->range[n->r0 + i].hi;
        /* cut the forbidden ranges (sorted) out of [lo, hi] */
        uint32_t at = lo;
        for (size_t f = 0; f < sizeof(forbidden) / sizeof(forbidden[0]) && at <= hi; f++) {
            if (forbidden[f].hi < at || forbidden[f].lo > hi) {
                continue;
            }
            if (forbidden[f].lo > at) {
                gbnf_cp(b, at);
                if (forbidden[f].lo - 1 > at) {
                    strbuf_str(b, "-");
                    gbnf_cp(b, forbidden[f].lo - 1);
                }
                any = true;
            }
            at = forbidden[f].hi + 1;
        }
        if (at <= hi) {
            gbnf_cp(b, at);
            if (hi > at) {
                strbuf_str(b, "-");
                gbnf_cp(b, hi);
            }
            any = true;
        }
    }
    strbuf_str(b, "]");
    return any;
}

static bool gbnf_node(const struct pat *p, int x, int64_t cap, struct strbuf *b) {
    const struct pn *n = &p->node[x];
    switch (n->kind) {
        case PN_EMPTY:
            strbuf_str(b, "\"\"");
            return true;
        case PN_SET:
            return gbnf_set(p, x, b);
        case PN_CAT:
            strbuf_str(b, "(");
            if (!gbnf_node(p, n->a, cap, b)) {
                return false;
            }
            strbuf_str(b, " ");
            if (!gbnf_node(p, n->b, cap, b)) {
                return false;
            }
            strbuf_str(b, ")");
            return true;
        case PN_ALT: {
            /* an alternative the grammar cannot write is left out (the other still can) */
            struct strbuf l = {0}, r = {0};
            bool okl = gbnf_node(p, n->a, cap, &l), okr = gbnf_node(p, n->b, cap, &r);
            if (okl && okr) {
                strbuf_printf(b, "(%s | %s)", l.data, r.data);
            } else if (okl || okr) {
                strbuf_str(b, okl ? l.data : r.data);
            }
            strbuf_free(&l);
            strbuf_free(&r);
            return okl || okr;
        }
        case PN_REP: {
            struct strbuf in = {0};
            bool ok = gbnf_node(p, n->a, cap, &in);
            if (!ok) {
                strbuf_free(&in);
                if (n->min == 0) {
                    strbuf_str(b, "\"\"");
                    return true;
                }
                return false;
            }
            long long max = n->max >= 0 ? n->max : (n->min > cap ? n->min : cap);
            strbuf_printf(b, "(%s){%d,%lld}", in.data, n->min, max);
            strbuf_free(&in);
            return true;
        }
    }
    return false;
}

bool pattern_gbnf(const char *re, int64_t cap, struct strbuf *b) {
    const char *err = NULL;
    struct pat *p = pat_parse(re, &err);
    if (p == NULL) {
        return false;
    }
    static const char *const ANY = "[^\"\\\\\\x00-\\x1F\\x7F]";
    struct strbuf body = {0};
    bool ok = gbnf_node(p, p->root, cap, &body);
    if (ok) {
        strbuf_str(b, "(");
        if (!p->anchor_start) {
            strbuf_printf(b, "%s{0,%lld} ", ANY, (long long)cap);
        }
        strbuf_add(b, body.data, body.len);
        if (!p->anchor_end) {
            strbuf_printf(b, " %s{0,%lld}", ANY, (long long)cap);
        }
        strbuf_str(b, ")");
    }
    strbuf_free(&body);
    free(p);
    return ok && !b->failed;
}

/* The leaves of the concatenation at `x`, in order (at most `cap`); -1 when too many. */
static int cat_items(const struct pat *p, int x, int *items, int n, int cap) {
    if (p->node[x].kind == PN_CAT) {
        n = cat_items(p, p->node[x].a, items, n, cap);
        return n < 0 ? -1 : cat_items(p, p->node[x].b, items, n, cap);
    }
    if (n >= cap) {
        return -1;
    }
    items[n] = x;
    return n + 1;
}

bool pattern_gbnf_lengths(const char *re,
                          int64_t cap,
                          int64_t min_len,
                          int64_t max_len,
                          struct strbuf *b) {
    const char *err = NULL;
    struct pat *p = pat_parse(re, &err);
    if (p == NULL) {
        return false;
    }
    int items[64];
    int n = cat_items(p, p->root, items, 0, 64);
    int64_t lo[64], hi[64];
    int unbounded = -1;
    bool ok = n > 0;
    for (int i = 0; ok && i < n; i++) {
        const struct pn *x = &p->node[items[i]];
        if (x->kind == PN_SET) {
            lo[i] = hi[i] = 1;
        } else if (x->kind == PN_REP && p->node[x->a].kind == PN_SET) {
            lo[i] = x->min;
            hi[i] = x->max;
            if (x->max < 0) {
                ok = unbounded < 0; /* one unbounded item at most */
                unbounded = i;
            }
        } else {
            ok = false;
        }
    }
    int64_t other_lo = 0, other_hi = 0;
    for (int i = 0; ok && i < n; i++) {
        if (i != unbounded) {
            other_lo += lo[i];
            other_hi += hi[i];
        }
    }
    int64_t umin = 0, umax = 0;
    if (ok && unbounded >= 0) {
        umin = lo[unbounded] > min_len - other_lo ? lo[unbounded] : min_len - other_lo;
        umax = max_len >= 0 ? max_len - other_hi : (umin > cap ? umin : cap);
        ok = umax >= umin;
    } else if (ok) {
        ok = other_lo >= min_len && (max_len < 0 || other_hi <= max_len);
    }
    struct strbuf body = {0};
    for (int i = 0; ok && i < n; i++) {
        strbuf_str(&body, i > 0 ? " " : "(");
        const struct pn *x = &p->node[items[i]];
        if (x->kind == PN_SET) {
            ok = gbnf_set(p, items[i], &body);
            continue;
        }
        struct strbuf in = {0};
        ok = gbnf_set(p, x->a, &in);
        if (ok) {
            strbuf_printf(&body, "%s{%lld,%lld}", in.data,
                          (long long)(i == unbounded ? umin : lo[i]),
                          (long long)(i == unbounded ? umax : hi[i]));
        }
        strbuf_free(&in);
    }
    if (ok) {
        strbuf_str(&body, ")");
        strbuf_add(b, body.data, body.len);
    }
    strbuf_free(&body);
    free(p);
    return ok && !b->failed;
}
