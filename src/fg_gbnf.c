/*
 * fg_gbnf.c - the GBNF reader of the fast decoder (fg_gbnf.h, docs/fastgrammar.md).
 */
#define _POSIX_C_SOURCE 200809L
#include "fg_gbnf.h"

#include "fg_grow.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fg_gbnf_fail(struct fg_gbnf *p, const char *what) {
    if (!p->failed) {
        snprintf(p->msg, p->msg_size, "fastgrammar: %s at offset %zu", what, p->pos);
    }
    p->failed = true;
}

int32_t fg_gbnf_node(struct fg_gbnf *p, enum fg_node_kind k, int32_t a, int32_t b, int32_t c) {
    if (!fg_grow((void **)&p->nodes, &p->cap_nodes, p->n_nodes + 1, sizeof(struct fg_node))) {
        fg_gbnf_fail(p, "out of memory");
        return -1;
    }
    p->nodes[p->n_nodes] = (struct fg_node){k, a, b, c};
    return (int32_t)p->n_nodes++;
}

static void skip_space(struct fg_gbnf *p, bool newlines) {
    for (;;) {
        char c = p->s[p->pos];
        if (c == ' ' || c == '\t' || ((c == '\n' || c == '\r') && newlines)) {
            p->pos++;
        } else if (c == '#') {
            while (p->s[p->pos] != '\0' && p->s[p->pos] != '\n') {
                p->pos++;
            }
        } else {
            return;
        }
    }
}

static bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

static int32_t rule_index(struct fg_gbnf *p, const char *name, size_t n) {
    for (size_t i = 0; i < p->n_rules; i++) {
        if (strlen(p->rules[i].name) == n && memcmp(p->rules[i].name, name, n) == 0) {
            return (int32_t)i;
        }
    }
    if (n >= sizeof(p->rules[0].name) || p->n_rules >= FG_MAX_RULES ||
        !fg_grow((void **)&p->rules, &p->cap_rules, p->n_rules + 1, sizeof(struct fg_rule))) {
        fg_gbnf_fail(p, "rule name too long or too many rules");
        return -1;
    }
    struct fg_rule *r = &p->rules[p->n_rules];
    memcpy(r->name, name, n);
    r->name[n] = '\0';
    r->body = -1;
    r->in_progress = false;
    r->memo = NULL;
    r->n_memo = r->cap_memo = 0;
    return (int32_t)p->n_rules++;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* One (possibly escaped) character of a literal or class as a code point. */
static uint32_t parse_char(struct fg_gbnf *p) {
    const unsigned char *s = (const unsigned char *)p->s;
    if (s[p->pos] == '\\') {
        p->pos++;
        char e = (char)s[p->pos++];
        int digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
        if (digits > 0) {
            uint32_t v = 0;
            for (int i = 0; i < digits; i++) {
                int h = hexval((char)s[p->pos]);
                if (h < 0) {
                    fg_gbnf_fail(p, "bad hex escape");
                    return 0;
                }
                v = v * 16 + (uint32_t)h;
                p->pos++;
            }
            return v;
        }
        switch (e) {
            case 'n':
                return '\n';
            case 'r':
                return '\r';
            case 't':
                return '\t';
            case '\\':
            case '"':
            case '[':
            case ']':
            case '-':
            case '^':
                return (uint32_t)(unsigned char)e;
            default:
                fg_gbnf_fail(p, "unknown escape");
                return 0;
        }
    }
    /* a UTF-8 code point */
    unsigned char c = s[p->pos];
    int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t v = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
    p->pos++;
    for (int i = 1; i < n; i++) {
        if ((s[p->pos] & 0xC0) != 0x80) {
            fg_gbnf_fail(p, "malformed UTF-8 in the grammar");
            return 0;
        }
        v = (v << 6) | (s[p->pos++] & 0x3Fu);
    }
    return v;
}

static int cmp_range(const void *x, const void *y) {
    const uint32_t *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

static int32_t parse_alt(struct fg_gbnf *p, int depth);

static int32_t parse_literal(struct fg_gbnf *p) {
    p->pos++; /* '"' */
    size_t start = p->n_lit;
    while (!p->failed && p->s[p->pos] != '"') {
        if (p->s[p->pos] == '\0') {
            fg_gbnf_fail(p, "unterminated literal");
            return -1;
        }
        uint8_t enc[4];
        size_t n = utf8_encode(parse_char(p), enc);
        if (!fg_grow((void **)&p->lit, &p->cap_lit, p->n_lit + n, 1)) {
            fg_gbnf_fail(p, "out of memory");
            return -1;
        }
        memcpy(p->lit + p->n_lit, enc, n);
        p->n_lit += n;
    }
    p->pos++;
    return fg_gbnf_node(p, FG_N_LIT, (int32_t)start, (int32_t)(p->n_lit - start), 0);
}

static int32_t parse_class(struct fg_gbnf *p) {
    p->pos++; /* '[' */
    bool negated = false;
    if (p->s[p->pos] == '^') {
        negated = true;
        p->pos++;
    }
    uint32_t tmp[2 * 256];
    size_t n = 0;
    while (!p->failed && p->s[p->pos] != ']') {
        if (p->s[p->pos] == '\0' || n >= 256) {
            fg_gbnf_fail(p, "unterminated or too long character class");
            return -1;
        }
        uint32_t lo = parse_char(p), hi = lo;
        if (p->s[p->pos] == '-' && p->s[p->pos + 1] != ']' && p->s[p->pos + 1] != '\0') {
            p->pos++;
            hi = parse_char(p);
        }
        if (hi > 0x10FFFF) {
            hi = 0x10FFFF;
        }
        if (lo <= hi) {
            tmp[2 * n] = lo;
            tmp[2 * n + 1] = hi;
            n++;
        }
    }
    p->pos++;
    /* normalize: sort, merge, complement when negated, drop surrogates */
    qsort(tmp, n, 2 * sizeof(uint32_t), cmp_range);
    uint32_t merged[2 * 256];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && tmp[2 * i] <= merged[2 * m - 1] + 1) {
            if (tmp[2 * i + 1] > merged[2 * m - 1]) {
                merged[2 * m - 1] = tmp[2 * i + 1];
            }
        } else {
            merged[2 * m] = tmp[2 * i];
            merged[2 * m + 1] = tmp[2 * i + 1];
            m++;
        }
    }
    uint32_t fin[2 * 260];
    size_t f = 0;
    if (negated) {
        uint32_t next = 0;
        for (size_t i = 0; i < m; i++) {
            if (merged[2 * i] > next) {
                fin[2 * f] = next;
                fin[2 * f + 1] = merged[2 * i] - 1;
                f++;
            }
            next = merged[2 * i + 1] + 1;
        }
        if (next <= 0x10FFFF) {
            fin[2 * f] = next;
            fin[2 * f + 1] = 0x10FFFF;
            f++;
        }
    } else {
        memcpy(fin, merged, sizeof(uint32_t) * 2 * m);
        f = m;
    }
    size_t start = p->n_ranges;
    for (size_t i = 0; i < f; i++) {
        uint32_t lo = fin[2 * i], hi = fin[2 * i + 1];
        uint32_t parts[4];
        size_t np = 0;
        if (lo < 0xD800 && hi >= 0xD800) {
            parts[np++] = lo;
            parts[np++] = 0xD7FF;
            lo = 0xE000;
        } else if (lo >= 0xD800 && lo <= 0xDFFF) {
            lo = 0xE000;
        }
        if (lo <= hi) {
            parts[np++] = lo;
            parts[np++] = hi;
        }
        if (!fg_grow((void **)&p->ranges, &p->cap_ranges, p->n_ranges + np, sizeof(uint32_t))) {
            fg_gbnf_fail(p, "out of memory");
            return -1;
        }
        memcpy(p->ranges + p->n_ranges, parts, np * sizeof(uint32_t));
        p->n_ranges += np;
    }
    return fg_gbnf_node(p, FG_N_CLASS, (int32_t)start, (int32_t)((p->n_ranges - start) / 2), 0);
}

static long parse_uint(struct fg_gbnf *p) {
    long v = 0;
    if (p->s[p->pos] < '0' || p->s[p->pos] > '9') {
        fg_gbnf_fail(p, "expected a number");
        return -1;
    }
    while (p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
        v = v * 10 + (p->s[p->pos++] - '0');
        if (v > FG_MAX_REPEAT) {
            fg_gbnf_fail(p, "repetition count too large");
            return -1;
        }
    }
    return v;
}

static int32_t parse_seq(struct fg_gbnf *p, int depth) {
    int32_t items[512];
    size_t n = 0;
    for (;;) {
        skip_space(p, depth > 0);
        char c = p->s[p->pos];
        int32_t item = -1;
        if (c == '"') {
            item = parse_literal(p);
        } else if (c == '[') {
            item = parse_class(p);
        } else if (c == '(') {
            p->pos++;
            item = parse_alt(p, depth + 1);
            skip_space(p, true);
            if (p->s[p->pos] != ')') {
                fg_gbnf_fail(p, "expected ')'");
                return -1;
            }
            p->pos++;
        } else if (is_name_char(c)) {
            size_t s0 = p->pos;
            while (is_name_char(p->s[p->pos])) {
                p->pos++;
            }
            int32_t r = rule_index(p, p->s + s0, p->pos - s0);
            item = r >= 0 ? fg_gbnf_node(p, FG_N_REF, r, 0, 0) : -1;
        } else if (c == '.') {
            fg_gbnf_fail(p, "'.' is not supported");
            return -1;
        } else {
            break; /* '|', ')', newline, end */
        }
        if (p->failed || item < 0) {
            return -1;
        }
        /* postfix operators */
        for (;;) {
            char o = p->s[p->pos];
            if (o == '?') {
                item = fg_gbnf_node(p, FG_N_REP, item, 0, 1);
                p->pos++;
            } else if (o == '*') {
                item = fg_gbnf_node(p, FG_N_REP, item, 0, -1);
                p->pos++;
            } else if (o == '+') {
                item = fg_gbnf_node(p, FG_N_REP, item, 1, -1);
                p->pos++;
            } else if (o == '{') {
                p->pos++;
                skip_space(p, false);
                long lo = parse_uint(p), hi = lo;
                skip_space(p, false);
                if (p->s[p->pos] == ',') {
                    p->pos++;
                    skip_space(p, false);
                    hi = p->s[p->pos] == '}' ? -1 : parse_uint(p);
                    skip_space(p, false);
                }
                if (p->failed || p->s[p->pos] != '}' || (hi >= 0 && hi < lo)) {
                    fg_gbnf_fail(p, "bad repetition");
                    return -1;
                }
                p->pos++;
                item = fg_gbnf_node(p, FG_N_REP, item, (int32_t)lo, (int32_t)hi);
            } else {
                break;
            }
            if (item < 0) {
                return -1;
            }
        }
        if (n >= sizeof(items) / sizeof(items[0])) {
            fg_gbnf_fail(p, "sequence too long");
            return -1;
        }
        items[n++] = item;
    }
    if (!fg_grow((void **)&p->kids, &p->cap_kids, p->n_kids + n, sizeof(int32_t))) {
        fg_gbnf_fail(p, "out of memory");
        return -1;
    }
    memcpy(p->kids + p->n_kids, items, n * sizeof(int32_t));
    p->n_kids += n;
    return fg_gbnf_node(p, FG_N_SEQ, (int32_t)(p->n_kids - n), (int32_t)n, 0);
}

static int32_t parse_alt(struct fg_gbnf *p, int depth) {
    if (depth > FG_MAX_DEPTH) {
        fg_gbnf_fail(p, "nesting too deep");
        return -1;
    }
    int32_t alts[1024];
    size_t n = 0;
    for (;;) {
        int32_t s = parse_seq(p, depth);
        if (s < 0) {
            return -1;
        }
        if (n >= sizeof(alts) / sizeof(alts[0])) {
            fg_gbnf_fail(p, "too many alternatives");
            return -1;
        }
        alts[n++] = s;
        skip_space(p, depth > 0);
        if (p->s[p->pos] != '|') {
            break;
        }
        p->pos++;
    }
    if (n == 1) {
        return alts[0];
    }
    if (!fg_grow((void **)&p->kids, &p->cap_kids, p->n_kids + n, sizeof(int32_t))) {
        fg_gbnf_fail(p, "out of memory");
        return -1;
    }
    memcpy(p->kids + p->n_kids, alts, n * sizeof(int32_t));
    p->n_kids += n;
    return fg_gbnf_node(p, FG_N_ALT, (int32_t)(p->n_kids - n), (int32_t)n, 0);
}

void fg_gbnf_parse(struct fg_gbnf *p) {
    for (;;) {
        skip_space(p, true);
        if (p->s[p->pos] == '\0' || p->failed) {
            return;
        }
        size_t s0 = p->pos;
        while (is_name_char(p->s[p->pos])) {
            p->pos++;
        }
        if (p->pos == s0) {
            fg_gbnf_fail(p, "expected a rule name");
            return;
        }
        int32_t r = rule_index(p, p->s + s0, p->pos - s0);
        skip_space(p, false);
        if (r < 0 || strncmp(p->s + p->pos, "::=", 3) != 0) {
            fg_gbnf_fail(p, "expected '::='");
            return;
        }
        p->pos += 3;
        int32_t body = parse_alt(p, 0);
        if (body < 0) {
            return;
        }
        if (p->rules[r].body >= 0) {
            fg_gbnf_fail(p, "rule defined twice");
            return;
        }
        p->rules[r].body = body;
    }
}

void fg_gbnf_free(struct fg_gbnf *p) {
    for (size_t i = 0; p->rules != NULL && i < p->n_rules; i++) {
        free(p->rules[i].memo);
    }
    free(p->nodes);
    free(p->kids);
    free(p->lit);
    free(p->ranges);
    free(p->rules);
}
