/*
 * grammar.c - tool set -> GBNF grammars for the two call syntaxes.
 *
 * A compiled grammar set holds, for one tool set and one syntax:
 *   call   "exactly one call to one of these tools", starting with the syntax's trigger text
 *          (so the same grammar serves the lazy mode: unconstrained until the trigger);
 *   names  "the trigger and the name of one tool" (just-in-time stage 1);
 *   args   per tool, "the arguments of this one tool" (just-in-time stage 2).
 *
 * The grammar guarantees a call's shape, not its numeric ranges: a constrained call always
 * parses and names a tool, its arguments and their JSON types exactly, and validation (which
 * always runs before a handler) refuses a number outside its range. So:
 * - string enums are alternatives of the exact values;
 * - integers and numbers are any JSON number of that type, with as many integer and fractional
 *   digits as their bounds need (at least GRAMMAR_INT_DIGITS and GRAMMAR_FRACTION_DIGITS),
 *   whatever their minimum, maximum or numeric enum (see "numbers" below for why), unless
 *   exact_values compiles those in too;
 * - strings are JSON strings without escapes or control characters, at most maxLength (default
 *   GRAMMAR_DEFAULT_MAX_STRING, the params' cap) characters;
 * - arrays hold at most maxItems (default GRAMMAR_DEFAULT_MAX_ITEMS) items;
 * - whitespace is fixed: ", " between members, ": " after JSON keys.
 * Object members appear in schema order; optional members may be left out.
 *
 * Rule names are derived from tool and property indexes (tool names may hold '_', which GBNF
 * rule names may not).
 */
#include "grammar.h"

#include "pattern.h"
#include "status.h"
#include "strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRAMMAR_FRACTION_DIGITS    3
#define GRAMMAR_INT_DIGITS         12
#define GRAMMAR_DEFAULT_MAX_STRING 128
#define GRAMMAR_DEFAULT_MAX_ITEMS  8
#define GRAMMAR_HARD_MAX_STRING    4096

struct pipit_grammar {
    enum pipit_call_syntax syntax;
    char *call;  /* GBNF, root: trigger + one call */
    char *names; /* GBNF, root: trigger + one tool name */
    char **args; /* per tool: GBNF, root: the arguments */
    size_t n_tools;
};

/* ============================================================================ text helpers */

/* Append `s` as the body of a GBNF string literal. */
static void gbnf_escape(struct strbuf *b, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            strbuf_add(b, esc, 2);
        } else if (*p == '\n') {
            strbuf_str(b, "\\n");
        } else if (*p < 0x20 || *p == 0x7f) {
            strbuf_printf(b, "\\x%02x", *p);
        } else {
            strbuf_add(b, (const char *)p, 1);
        }
    }
}

/* Append a GBNF literal for `s`. */
static void gbnf_lit(struct strbuf *b, const char *s) {
    strbuf_str(b, "\"");
    gbnf_escape(b, s);
    strbuf_str(b, "\"");
}

/* Append a GBNF literal for the JSON string "s" (with its quotes). */
static void gbnf_json_string_lit(struct strbuf *b, const char *s) {
    char *q = NULL;
    json_t *j = json_string(s);
    if (j != NULL) {
        q = json_dumps(j, JSON_ENCODE_ANY);
        json_decref(j);
    }
    if (q == NULL) {
        b->failed = true;
        return;
    }
    gbnf_lit(b, q);
    free(q);
}

/* ============================================================================ numbers */

/*
 * Numbers have their JSON shape, not their schema's range: a person who asks for "zoom 50x" must
 * be told that the zoom stops at 10x, not be given 5x. The grammar therefore lets every number of
 * the right type through (bounded in length, so a decode always ends) and validation refuses the
 * ones outside `minimum`/`maximum` or a numeric `enum` before any handler runs.
 *
 *   integer  "0" or an optional "-" and 1..I digits without a leading zero
 *   number   the same integer part ("-0" only with a fraction), then optionally "." and 1..F
 *            digits
 *
 * I and F are GRAMMAR_INT_DIGITS and GRAMMAR_FRACTION_DIGITS, or more when the schema's bounds
 * or enum values need more to be written (minimum 1e-10: F = 10; minimum 1500000000000000: I =
 * 16), at most GRAMMAR_MAX_INT_DIGITS (18: jansson reads integers up to 2^63) and
 * GRAMMAR_MAX_DIGITS (40) fraction digits: every value of the range can be written to the
 * precision of its bounds. An integer is also at most 2^53 in magnitude (the validator's
 * integers are exact doubles).
 *
 * With pipit_grammar_params.exact_values, ranges and numeric enums are compiled in too: the
 * grammar then admits exactly the numbers of that shape whose decimal value lies in [minimum,
 * maximum] (bounds read as the shortest decimal that round-trips, rounded inwards to F digits)
 * and, for an enum, exactly its values written as their shortest decimals ("0.1", "2"). Every
 * such text parses (strtod) to a double the validator accepts: parsing is monotonic and the
 * bounds' decimals parse back to the bounds.
 */
#define GRAMMAR_MAX_DIGITS     40                 /* fraction digits */
#define GRAMMAR_MAX_INT_DIGITS 18                 /* integer digits: jansson reads up to 2^63 */
#define GRAMMAR_MAX_SAFE       9007199254740992LL /* 2^53 */

/* |v| as decimal digit strings: integer part without leading zeros ("0" for none), fraction
 * without trailing zeros ("" for none); the shortest decimal that reads back as v. False when
 * it needs more than GRAMMAR_MAX_DIGITS digits on either side (or v is not finite). */
static bool decimal_parts(double v, char *ip, char *fp) {
    if (!isfinite(v)) {
        return false;
    }
    v = fabs(v);
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
        if (strtod(buf, NULL) == v) {
            break;
        }
    }
    /* buf: d[.ddd]e[+-]XX */
    char digits[32];
    size_t nd = 0;
    const char *p = buf;
    for (; *p != 'e' && *p != '\0'; p++) {
        if (*p >= '0' && *p <= '9' && nd + 1 < sizeof(digits)) {
            digits[nd++] = *p;
        }
    }
    digits[nd] = '\0';
    int exp = *p == 'e' ? atoi(p + 1) : 0;
    if (v == 0.0) {
        strcpy(ip, "0");
        fp[0] = '\0';
        return true;
    }
    /* value = 0.digits * 10^(exp + 1) */
    int point = exp + 1; /* digits before the decimal point */
    if (point > GRAMMAR_MAX_INT_DIGITS || (int)nd - point > GRAMMAR_MAX_DIGITS) {
        return false;
    }
    size_t ni = 0, nf = 0;
    for (int i = 0; i < point; i++) {
        ip[ni++] = i < (int)nd ? digits[i] : '0';
    }
    if (ni == 0) {
        ip[ni++] = '0';
    }
    ip[ni] = '\0';
    for (int i = point < 0 ? point : 0; i < 0; i++) {
        fp[nf++] = '0';
    }
    for (int i = point > 0 ? point : 0; i < (int)nd; i++) {
        fp[nf++] = digits[i];
    }
    while (nf > 0 && fp[nf - 1] == '0') {
        nf--;
    }
    fp[nf] = '\0';
    return true;
}

/* Integer and fraction digits the grammar allows for numeric schema `s` (see above). */
static void number_digits(const struct pipit_schema *s, int *int_digits, int *frac_digits) {
    int I = GRAMMAR_INT_DIGITS, F = GRAMMAR_FRACTION_DIGITS;
    double v[5 + PIPIT_TOOLSPEC_MAX_ENUM];
    size_t n = 0;
    if (s->has_min) {
        v[n++] = s->min;
    }
    if (s->has_max) {
        v[n++] = s->max;
    }
    if (s->has_xmin) {
        v[n++] = s->xmin;
    }
    if (s->has_xmax) {
        v[n++] = s->xmax;
    }
    if (s->multiple_of > 0) {
        v[n++] = s->multiple_of;
    }
    for (size_t i = 0; i < s->n_enum && n < sizeof(v) / sizeof(v[0]); i++) {
        v[n++] = s->enum_num[i];
    }
    for (size_t i = 0; i < n; i++) {
        char ip[GRAMMAR_MAX_DIGITS + 2], fp[GRAMMAR_MAX_DIGITS + 2];
        if (!decimal_parts(v[i], ip, fp)) {
            /* beyond the cap: a huge bound is as good as none, a tiny one needs every digit */
            if (fabs(v[i]) < 1.0) {
                F = GRAMMAR_MAX_DIGITS;
            }
            continue;
        }
        int ni = ip[0] == '0' ? 1 : (int)strlen(ip), nf = (int)strlen(fp);
        I = ni > I ? ni : I;
        F = nf > F ? nf : F;
    }
    if (s->type == PIPIT_SCHEMA_INTEGER) {
        F = 0;
        I = I > 16 ? 16 : I;
    }
    *int_digits = I;
    *frac_digits = F;
}

/*
 * Digit strings between two bounds of the same length, as a GBNF expression.
 * `lo` and `hi` are digit strings of length `len`; the expression matches digit strings d of
 * length len - pos with lo[pos..] <= d <= hi[pos..] where a bound is only active while its
 * prefix matched exactly (tight). With `padded`, shorter strings (at least one digit) are
 * allowed too and compare as if right-padded with zeros (fractions: "5" means 500).
 */
static void digits_between(struct strbuf *b,
                           const char *lo,
                           const char *hi,
                           size_t len,
                           size_t pos,
                           bool lo_tight,
                           bool hi_tight,
                           bool padded) {
    if (pos == len) {
        strbuf_str(b, "\"\"");
        return;
    }
    if (!lo_tight && !hi_tight) {
        if (padded) {
            strbuf_printf(b, "[0-9]{%d,%zu}", pos > 0 ? 0 : 1, len - pos);
        } else {
            strbuf_printf(b, "[0-9]{%zu}", len - pos);
        }
        return;
    }
    strbuf_str(b, "(");
    bool first = true;
    if (padded && pos > 0) {
        /* stopping here means zeros follow: allowed when zeros satisfy the lower bound (a
         * fraction has at least one digit, so never at pos 0) */
        bool zeros_ok = true;
        for (size_t i = pos; lo_tight && i < len; i++) {
            zeros_ok = zeros_ok && lo[i] == '0';
        }
        if (zeros_ok) {
            strbuf_str(b, "\"\"");
            first = false;
        }
    }
    int dlo = lo_tight ? lo[pos] - '0' : 0;
    int dhi = hi_tight ? hi[pos] - '0' : 9;
    if (dlo <= dhi) {
        /* the digits strictly inside are free for the rest */
        int free_lo = lo_tight ? dlo + 1 : dlo;
        int free_hi = hi_tight ? dhi - 1 : dhi;
        if (free_lo <= free_hi) {
            strbuf_str(b, first ? "" : " | ");
            first = false;
            strbuf_printf(b, "[%d-%d] ", free_lo, free_hi);
            digits_between(b, lo, hi, len, pos + 1, false, false, padded);
        }
        if (lo_tight) {
            strbuf_str(b, first ? "" : " | ");
            first = false;
            strbuf_printf(b, "\"%d\" ", dlo);
            digits_between(b, lo, hi, len, pos + 1, true, hi_tight && dlo == dhi, padded);
        }
        if (hi_tight && !(lo_tight && dlo == dhi)) {
            strbuf_str(b, first ? "" : " | ");
            first = false;
            strbuf_printf(b, "\"%d\" ", dhi);
            digits_between(b, lo, hi, len, pos + 1, false, true, padded);
        }
    }
    if (first) {
        b->failed = true; /* cannot happen for lo <= hi */
    }
    strbuf_str(b, ")");
}

/* A digit string's value plus one / minus one (no leading zeros kept; "0" - 1 is not asked). */
static void digits_add(char *d, int delta) {
    size_t n = strlen(d);
    for (size_t i = n; i-- > 0;) {
        int x = d[i] - '0' + delta;
        if (x >= 0 && x <= 9) {
            d[i] = (char)('0' + x);
            break;
        }
        d[i] = delta > 0 ? '0' : '9';
        if (i == 0 && delta > 0) {
            memmove(d + 1, d, n + 1);
            d[0] = '1';
        }
    }
    n = strlen(d);
    size_t z = 0;
    while (z + 1 < n && d[z] == '0') {
        z++;
    }
    memmove(d, d + z, n - z + 1);
}

/* -1, 0, 1 as digit strings without leading zeros compare. */
static int digits_cmp(const char *a, const char *b) {
    size_t na = strlen(a), nb = strlen(b);
    if (na != nb) {
        return na < nb ? -1 : 1;
    }
    int c = strcmp(a, b);
    return (c > 0) - (c < 0);
}

/* Non-negative integers in [lo, hi] (digit strings, lo <= hi) without leading zeros. */
static void uint_range(struct strbuf *b, const char *lo, const char *hi) {
    size_t nlo = strlen(lo), nhi = strlen(hi);
    char a[GRAMMAR_MAX_DIGITS + 2], z[GRAMMAR_MAX_DIGITS + 2];
    strbuf_str(b, "(");
    for (size_t len = nlo; len <= nhi; len++) {
        if (len == nlo) {
            snprintf(a, sizeof(a), "%s", lo);
        } else {
            memset(a, '0', len);
            a[0] = '1';
            a[len] = '\0';
        }
        if (len == nhi) {
            snprintf(z, sizeof(z), "%s", hi);
        } else {
            memset(z, '9', len);
            z[len] = '\0';
        }
        strbuf_str(b, len > nlo ? " | " : "");
        digits_between(b, a, z, len, 0, true, true, false);
    }
    strbuf_str(b, ")");
}

/* A decimal magnitude: integer digits (no leading zeros) and exactly F fraction digits. */
struct decimal {
    char ip[GRAMMAR_MAX_DIGITS + 2];
    char fp[GRAMMAR_MAX_DIGITS + 2];
};

/* Non-negative numbers in [lo, hi] (lo <= hi) with F fraction digits at most: "int[.frac]". */
static void
ufixed_range(struct strbuf *b, const struct decimal *lo, const struct decimal *hi, int F) {
    bool lo_zero_frac = strspn(lo->fp, "0") == (size_t)F;
    strbuf_str(b, "(");
    if (F == 0) {
        uint_range(b, lo->ip, hi->ip);
    } else if (strcmp(lo->ip, hi->ip) == 0) {
        uint_range(b, lo->ip, lo->ip);
        strbuf_str(b, lo_zero_frac ? " (\".\" " : " \".\" ");
        digits_between(b, lo->fp, hi->fp, (size_t)F, 0, true, true, true);
        strbuf_str(b, lo_zero_frac ? ")?" : "");
    } else {
        /* the lowest integer part: fraction >= lo's */
        uint_range(b, lo->ip, lo->ip);
        strbuf_str(b, lo_zero_frac ? " (\".\" " : " \".\" ");
        digits_between(b, lo->fp, hi->fp, (size_t)F, 0, true, false, true);
        strbuf_str(b, lo_zero_frac ? ")?" : "");
        /* integer parts strictly inside: any fraction */
        char a[GRAMMAR_MAX_DIGITS + 3], z[GRAMMAR_MAX_DIGITS + 3];
        snprintf(a, sizeof(a), "%s", lo->ip);
        snprintf(z, sizeof(z), "%s", hi->ip);
        digits_add(a, 1);
        digits_add(z, -1);
        if (digits_cmp(a, z) <= 0) {
            strbuf_str(b, " | ");
            uint_range(b, a, z);
            strbuf_printf(b, " (\".\" [0-9]{1,%d})?", F);
        }
        /* the highest integer part: fraction <= hi's */
        strbuf_str(b, " | ");
        uint_range(b, hi->ip, hi->ip);
        strbuf_str(b, " (\".\" ");
        digits_between(b, lo->fp, hi->fp, (size_t)F, 0, false, true, true);
        strbuf_str(b, ")?");
    }
    strbuf_str(b, ")");
}

/* `v` rounded to F fraction digits towards zero (up = false) or away from it (up = true), as a
 * magnitude; false when it needs more than GRAMMAR_MAX_INT_DIGITS integer digits. */
static bool to_decimal(double v, int F, bool up, struct decimal *d) {
    char ip[GRAMMAR_MAX_DIGITS + 2], fp[GRAMMAR_MAX_DIGITS + 2];
    if (!decimal_parts(v, ip, fp)) {
        if (fabs(v) >= 1.0) {
            return false;
        }
        /* more than GRAMMAR_MAX_DIGITS fraction digits: below the smallest step */
        snprintf(ip, sizeof(ip), "0");
        snprintf(fp, sizeof(fp), "%s", v != 0.0 ? "1" : "");
        memmove(fp + GRAMMAR_MAX_DIGITS, fp, 2);
        memset(fp, '0', GRAMMAR_MAX_DIGITS);
    }
    snprintf(d->ip, sizeof(d->ip), "%s", ip);
    size_t nf = strlen(fp);
    bool cut = nf > (size_t)F && strspn(fp + F, "0") < nf - (size_t)F;
    for (int i = 0; i < F; i++) {
        d->fp[i] = (size_t)i < nf ? fp[i] : '0';
    }
    d->fp[F] = '\0';
    if (cut && up) {
        /* add one unit of the last place */
        int i = F - 1;
        for (; i >= 0 && d->fp[i] == '9'; i--) {
            d->fp[i] = '0';
        }
        if (i >= 0) {
            d->fp[i]++;
        } else {
            digits_add(d->ip, 1);
        }
    }
    return strlen(d->ip) <= GRAMMAR_MAX_INT_DIGITS;
}

/* The largest magnitude with I integer and F fraction digits. */
static void decimal_max(struct decimal *d, int I, int F) {
    memset(d->ip, '9', (size_t)I);
    d->ip[I] = '\0';
    memset(d->fp, '9', (size_t)F);
    d->fp[F] = '\0';
}

static int decimal_cmp(const struct decimal *a, const struct decimal *b) {
    int c = digits_cmp(a->ip, b->ip);
    if (c != 0) {
        return c;
    }
    c = strcmp(a->fp, b->fp);
    return (c > 0) - (c < 0);
}

/* Numbers of `s`'s shape in [lo, hi] (either sign; has_lo/has_hi false: unbounded within the
 * shape). False when none can be written. */
static bool signed_range(struct strbuf *b,
                         const struct pipit_schema *s,
                         bool has_lo,
                         double lo,
                         bool has_hi,
                         double hi) {
    int I, F;
    number_digits(s, &I, &F);
    struct decimal top, a, z;
    decimal_max(&top, I, F);
    bool integer = s->type == PIPIT_SCHEMA_INTEGER;
    if (integer) {
        double cap = (double)GRAMMAR_MAX_SAFE;
        double t = pow(10.0, I) - 1.0;
        cap = t < cap ? t : cap;
        lo = has_lo ? ceil(lo) : -cap;
        hi = has_hi ? floor(hi) : cap;
        lo = lo < -cap ? -cap : lo;
        hi = hi > cap ? cap : hi;
        has_lo = has_hi = true;
        if (lo > hi) {
            return false;
        }
    }
    bool any = false;
    strbuf_str(b, "(");
    /* non-negative part: [max(lo, 0), min(hi, top)] */
    if (!has_hi || hi >= 0) {
        bool ok = true;
        if (!has_lo || lo <= 0) {
            snprintf(a.ip, sizeof(a.ip), "0");
            memset(a.fp, '0', (size_t)F);
            a.fp[F] = '\0';
        } else {
            ok = to_decimal(lo, F, true, &a); /* false: beyond any text of the shape */
        }
        if (!has_hi || !to_decimal(hi, F, false, &z) || decimal_cmp(&z, &top) > 0) {
            z = top;
        }
        if (ok && decimal_cmp(&a, &z) <= 0) {
            ufixed_range(b, &a, &z, F);
            any = true;
        }
    }
    /* negative part: magnitudes in [max(-hi, one unit), min(-lo, top)], never "-0" */
    if (!has_lo || lo < 0) {
        bool ok = true;
        if (has_hi && hi < 0) {
            ok = to_decimal(-hi, F, true, &a);
        } else {
            snprintf(a.ip, sizeof(a.ip), "%s", F > 0 ? "0" : "1");
            memset(a.fp, '0', (size_t)F);
            a.fp[F] = '\0';
            if (F > 0) {
                a.fp[F - 1] = '1';
            }
        }
        if (!has_lo || !to_decimal(-lo, F, false, &z) || decimal_cmp(&z, &top) > 0) {
            z = top;
        }
        if (ok && decimal_cmp(&a, &z) <= 0) {
            strbuf_str(b, any ? " | \"-\" " : "\"-\" ");
            ufixed_range(b, &a, &z, F);
            any = true;
        }
    }
    strbuf_str(b, ")");
    return any;
}

static void integer_expr(struct strbuf *b, int I) {
    strbuf_printf(b, "(\"0\" | \"-\"? [1-9] [0-9]{0,%d})", I - 1);
}

static void number_expr(struct strbuf *b, int I, int F) {
    strbuf_printf(b,
                  "(\"0\" (\".\" [0-9]{1,%d})? | \"-0.\" [0-9]{1,%d} | "
                  "\"-\"? [1-9] [0-9]{0,%d} (\".\" [0-9]{1,%d})?)",
                  F, F, I - 1, F);
}

/* The grammar of a number or integer schema; false (and nothing appended) when no value of
 * the grammar's shape satisfies it in exact mode. */
/* The inclusive bounds exact mode compiles: minimum/maximum, the exclusive bounds moved to the
 * next double inwards (every decimal at or beyond it parses to a double strictly inside), and
 * format int32's range. */
static void
exact_bounds(const struct pipit_schema *s, bool *has_lo, double *lo, bool *has_hi, double *hi) {
    *has_lo = s->has_min;
    *lo = s->min;
    *has_hi = s->has_max;
    *hi = s->max;
    if (s->has_xmin) {
        double x = nextafter(s->xmin, INFINITY);
        *lo = *has_lo && *lo > x ? *lo : x;
        *has_lo = true;
    }
    if (s->has_xmax) {
        double x = nextafter(s->xmax, -INFINITY);
        *hi = *has_hi && *hi < x ? *hi : x;
        *has_hi = true;
    }
    if (s->format == PIPIT_FORMAT_INT32) {
        *lo = *has_lo && *lo > -2147483648.0 ? *lo : -2147483648.0;
        *hi = *has_hi && *hi < 2147483647.0 ? *hi : 2147483647.0;
        *has_lo = *has_hi = true;
    }
}

/* Alternatives of the values v[0..n) written as their shortest decimals (and trailing zeros
 * up to F fraction digits); false when none can be written. */
static bool
values_alt(struct strbuf *b, const struct pipit_schema *s, const double *v, size_t n, int F) {
    struct strbuf e = {0};
    size_t k = 0;
    strbuf_str(&e, "(");
    for (size_t i = 0; i < n; i++) {
        char ip[GRAMMAR_MAX_DIGITS + 2], fp[GRAMMAR_MAX_DIGITS + 2];
        if (!decimal_parts(v[i], ip, fp) ||
            (s->type == PIPIT_SCHEMA_INTEGER &&
             (fp[0] != '\0' || fabs(v[i]) > (double)GRAMMAR_MAX_SAFE))) {
            continue;
        }
        strbuf_printf(&e, "%s(\"%s%s%s%s\"", k > 0 ? " | " : "", v[i] < 0 ? "-" : "", ip,
                      fp[0] != '\0' ? "." : "", fp);
        /* the same value with trailing zeros, as far as the shape goes */
        int nf = (int)strlen(fp);
        if (fp[0] != '\0' && F > nf) {
            strbuf_printf(&e, " \"0\"{0,%d}", F - nf);
        } else if (fp[0] == '\0' && F > 0) {
            strbuf_printf(&e, " (\".\" \"0\"{1,%d})?", F);
        }
        strbuf_str(&e, ")");
        k++;
    }
    strbuf_str(&e, ")");
    bool ok = k > 0 && !e.failed;
    if (ok) {
        strbuf_add(b, e.data, e.len);
    }
    strbuf_free(&e);
    return ok;
}

#define GRAMMAR_MAX_MULTIPLES 256

/* The grammar of a number or integer schema; false (and nothing appended) when no value of
 * the grammar's shape satisfies it in exact mode. */
static bool number_value(struct strbuf *b, const struct pipit_schema *s, bool exact) {
    int I, F;
    number_digits(s, &I, &F);
    bool has_lo = false, has_hi = false;
    double lo = 0, hi = 0;
    if (exact) {
        exact_bounds(s, &has_lo, &lo, &has_hi, &hi);
    }
    if (exact && s->n_enum > 0) {
        double v[PIPIT_TOOLSPEC_MAX_ENUM];
        size_t n = 0;
        for (size_t i = 0; i < s->n_enum && n < PIPIT_TOOLSPEC_MAX_ENUM; i++) {
            if ((!has_lo || s->enum_num[i] >= lo) && (!has_hi || s->enum_num[i] <= hi)) {
                v[n++] = s->enum_num[i];
            }
        }
        return values_alt(b, s, v, n, F);
    }
    if (exact && s->multiple_of > 0) {
        /* multipleOf: the multiples themselves, at most GRAMMAR_MAX_MULTIPLES of them; with
         * more in range (or no bound), the 256 nearest to 0 within it: every call validates,
         * and a person's far-off multiple is refused by validation like any value the exact
         * grammar leaves out */
        double top = pow(10.0, I) - 1.0;
        double wlo = has_lo ? lo : -top, whi = has_hi ? hi : top;
        double k0 = ceil(wlo / s->multiple_of), k1 = floor(whi / s->multiple_of);
        if (k1 - k0 >= GRAMMAR_MAX_MULTIPLES) {
            if (k0 > 0) {
                k1 = k0 + GRAMMAR_MAX_MULTIPLES - 1;
            } else if (k1 < 0) {
                k0 = k1 - (GRAMMAR_MAX_MULTIPLES - 1);
            } else {
                k0 = fmax(k0, -(double)(GRAMMAR_MAX_MULTIPLES / 2 - 1));
                k1 = k0 + GRAMMAR_MAX_MULTIPLES - 1;
            }
        }
        double v[GRAMMAR_MAX_MULTIPLES];
        size_t n = 0;
        for (double k = k0; k <= k1 && n < GRAMMAR_MAX_MULTIPLES; k++) {
            /* k * m to F fraction digits (0.1 * 3 is 0.30000000000000004; 0.3 is as much a
             * multiple for the validator, which allows 1e-9 relative) */
            char t[400];
            snprintf(t, sizeof(t), "%.*f", F, k * s->multiple_of);
            double x = strtod(t, NULL), q = x / s->multiple_of;
            if (x >= wlo && x <= whi && fabs(q - nearbyint(q)) <= 1e-9 * fmax(1.0, fabs(q))) {
                v[n++] = x == 0.0 ? 0.0 : x; /* no negative zero */
            }
        }
        return values_alt(b, s, v, n, F);
    }
    bool ranged = exact && (has_lo || has_hi);
    if (!ranged && s->type == PIPIT_SCHEMA_NUMBER) {
        number_expr(b, I, F);
        return true;
    }
    if (!ranged && I <= 15) { /* 15 digits stay below 2^53 */
        integer_expr(b, I);
        return true;
    }
    struct strbuf r = {0};
    bool ok = signed_range(&r, s, ranged && has_lo, lo, ranged && has_hi, hi);
    if (ok && !r.failed) {
        strbuf_add(b, r.data, r.len);
    } else {
        ok = false;
    }
    strbuf_free(&r);
    return ok;
}

/* ============================================================================ values */

struct gctx {
    struct strbuf *rules; /* extra rule definitions */
    enum pipit_call_syntax syntax;
    int64_t max_string;    /* characters */
    int64_t max_items;     /* for arrays without maxItems */
    struct strbuf *report; /* NULL, or where grammar_describe() writes what is enforced where */
    bool exact;            /* ranges and numeric enums compiled in (exact_values) */
    char *bad;             /* first value no call can write (its path and why), owned */
};

/* One line of the enforcement report: `path: type (grammar: ...; validated: ...)`. */
static void report_line(struct gctx *g,
                        const char *path,
                        const char *what,
                        const char *grammar,
                        const char *validated) {
    if (g->report == NULL) {
        return;
    }
    strbuf_printf(g->report, "  %s: %s", path, what);
    if (grammar[0] != '\0') {
        strbuf_printf(g->report, "; grammar: %s", grammar);
    }
    if (validated[0] != '\0') {
        strbuf_printf(g->report, "; validated: %s", validated);
    }
    strbuf_str(g->report, "\n");
}

static void value_expr(struct gctx *g,
                       struct strbuf *b,
                       const struct pipit_schema *s,
                       const char *prefix,
                       const char *path);

/* `base.name`, or `base["name"]` when the name is not an identifier (as validation writes). */
static void member_path(char *out, size_t cap, const char *base, const char *name) {
    bool ident = name[0] != '\0' && !(name[0] >= '0' && name[0] <= '9');
    for (const char *p = name; *p != '\0' && ident; p++) {
        ident = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                *p == '_';
    }
    snprintf(out, cap, ident ? "%s.%s" : "%s[\"%s\"]", base, name);
}

/* A JSON string in the grammar's alphabet: no escapes, no control characters. */
#define STRING_CHAR "[^\"\\\\\\x00-\\x1f]"

/* Append the key of member `name`: `name=` (pipit syntax, top level: bare when an identifier,
 * else the JSON string) or `"name": ` (JSON). */
static void key_expr(struct strbuf *kv, const char *name, bool top_level_pipit) {
    bool ident = name[0] != '\0' && !(name[0] >= '0' && name[0] <= '9');
    for (const char *p = name; *p != '\0' && ident; p++) {
        ident = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                *p == '_';
    }
    if (top_level_pipit && ident) {
        strbuf_str(kv, "\"");
        gbnf_escape(kv, name);
        strbuf_str(kv, "=\" ");
        return;
    }
    gbnf_json_string_lit(kv, name);
    strbuf_str(kv, top_level_pipit ? " \"=\" " : " \": \" ");
}

/* Members of an object schema, in order, optional ones skippable, then (additionalProperties)
 * up to max_items extra members with any key. Emits rules <prefix>-m<i>-f (first member
 * position) and -n (later), <prefix>-x-f/-n for the extra members. */
static void members_expr(struct gctx *g,
                         struct strbuf *b,
                         const struct pipit_schema *s,
                         const char *prefix,
                         bool top_level_pipit,
                         const char *path) {
    size_t n = s->n_props;
    /* what follows the last member: nothing, or the extra members */
    char tail_f[200] = "\"\"", tail_n[200] = "\"\"";
    if (s->additional != NULL) {
        char vprefix[160], xpath[600];
        snprintf(vprefix, sizeof(vprefix), "%s-xv", prefix);
        snprintf(xpath, sizeof(xpath), "%s.*", path);
        struct strbuf val = {0};
        value_expr(g, &val, s->additional, vprefix, xpath);
        strbuf_printf(g->rules, "%s-xk ::= \"\\\"\" " STRING_CHAR "{1,%d} \"\\\"\" %s %s\n", prefix,
                      PIPIT_TOOLSPEC_MAX_PROP_NAME, top_level_pipit ? "\"=\"" : "\": \"",
                      val.data != NULL ? val.data : "\"\"");
        if (val.failed) {
            g->rules->failed = true;
        }
        strbuf_free(&val);
        int64_t max = g->max_items > 0 ? g->max_items : 1;
        strbuf_printf(g->rules, "%s-x-f ::= (%s-xk (\", \" %s-xk){0,%lld})?\n", prefix, prefix,
                      prefix, (long long)(max - 1));
        strbuf_printf(g->rules, "%s-x-n ::= (\", \" %s-xk){0,%lld}\n", prefix, prefix,
                      (long long)max);
        snprintf(tail_f, sizeof(tail_f), "%s-x-f", prefix);
        snprintf(tail_n, sizeof(tail_n), "%s-x-n", prefix);
    }
    if (n == 0) {
        strbuf_str(b, tail_f);
        return;
    }
    /* rules r(i, first): members from i on; "first" = no member written yet */
    for (size_t i = n; i-- > 0;) {
        struct strbuf val = {0};
        char vprefix[160], vpath[600];
        snprintf(vprefix, sizeof(vprefix), "%s-p%zu", prefix, i);
        member_path(vpath, sizeof(vpath), path, s->props[i].name);
        value_expr(g, &val, s->props[i].schema, vprefix, vpath);
        for (int first = 0; first < 2; first++) {
            struct strbuf kv = {0};
            if (!first) {
                strbuf_str(&kv, "\", \" ");
            }
            key_expr(&kv, s->props[i].name, top_level_pipit);
            strbuf_add(&kv, val.data != NULL ? val.data : "", val.len);
            if (val.failed) {
                kv.failed = true;
            }
            if (i + 1 < n) {
                strbuf_printf(&kv, " %s-m%zu-n", prefix, i + 1);
            } else if (s->additional != NULL) {
                strbuf_printf(&kv, " %s", tail_n);
            }
            strbuf_printf(g->rules, "%s-m%zu-%s ::= ", prefix, i, first ? "f" : "n");
            if (s->props[i].required) {
                strbuf_add(g->rules, kv.data != NULL ? kv.data : "", kv.len);
            } else {
                strbuf_str(g->rules, "(");
                strbuf_add(g->rules, kv.data != NULL ? kv.data : "", kv.len);
                strbuf_str(g->rules, ")");
                if (i + 1 < n) {
                    strbuf_printf(g->rules, " | %s-m%zu-%s", prefix, i + 1, first ? "f" : "n");
                } else {
                    strbuf_printf(g->rules, " | %s", first ? tail_f : tail_n);
                }
            }
            strbuf_str(g->rules, "\n");
            if (kv.failed) {
                g->rules->failed = true;
            }
            strbuf_free(&kv);
        }
        strbuf_free(&val);
    }
    strbuf_printf(b, "%s-m0-f", prefix);
}

/* The literal alternatives of an enum, each value as compact JSON. */
static void enum_expr(struct strbuf *b, const struct pipit_schema *s) {
    strbuf_str(b, "(");
    for (size_t i = 0; i < s->n_enum; i++) {
        if (i > 0) {
            strbuf_str(b, " | ");
        }
        char *q = json_dumps(s->enum_json[i], JSON_ENCODE_ANY | JSON_COMPACT);
        if (q == NULL) {
            b->failed = true;
            return;
        }
        gbnf_lit(b, q);
        free(q);
    }
    strbuf_str(b, ")");
}

/* Any JSON value, nested at most two levels (rules <prefix>-j0..2). The grammar offers a
 * subset of what the schema allows ("any value"); validation accepts every value. */
static void any_expr(struct gctx *g, struct strbuf *b, const char *prefix) {
    strbuf_printf(g->rules, "%s-j0 ::= (\"\\\"\" " STRING_CHAR "{0,%lld} \"\\\"\") | ", prefix,
                  (long long)g->max_string);
    number_expr(g->rules, GRAMMAR_INT_DIGITS, GRAMMAR_FRACTION_DIGITS);
    strbuf_str(g->rules, " | \"true\" | \"false\" | \"null\"\n");
    for (int d = 1; d <= 2; d++) {
        strbuf_printf(
            g->rules,
            "%s-j%d ::= %s-j0 | \"[\" (%s-j%d (\", \" %s-j%d){0,7})? \"]\" | \"{\" "
            "(\"\\\"\" " STRING_CHAR "{1,64} \"\\\": \" %s-j%d (\", \" \"\\\"\" " STRING_CHAR
            "{1,64} \"\\\": \" %s-j%d){0,7})? \"}\"\n",
            prefix, d, prefix, prefix, d - 1, prefix, d - 1, prefix, d - 1, prefix, d - 1);
    }
    strbuf_printf(b, "%s-j2", prefix);
}

/* The grammar of a string "format" (its shape; validation checks the calendar, the ranges). */
static bool format_expr(struct strbuf *b, enum pipit_schema_format f) {
    static const char *const TIME =
        "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] (\".\" [0-9]{1,6})? "
        "(\"Z\" | [+-] ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9])";
    /* a real calendar date: 31-day months, 30-day months, February to the 28th, and the 29th
     * in leap years (the last two digits a multiple of 4 but not 00, or 00 after a multiple
     * of 4) */
    static const char *const DATE =
        "([0-9]{4} \"-\" ((\"0\" [13578] | \"1\" [02]) \"-\" (\"0\" [1-9] | [12] [0-9] | \"3\" "
        "[01]) | (\"0\" [469] | \"11\") \"-\" (\"0\" [1-9] | [12] [0-9] | \"30\") | \"02-\" (\"0\" "
        "[1-9] | \"1\" [0-9] | \"2\" [0-8])) | ([0-9] [0-9] (\"0\" [48] | [2468] [048] | [13579] "
        "[26]) | ([02468] [048] | [13579] [26]) \"00\") \"-02-29\")";
    static const char *const HEX = "[0-9a-f]";
    switch (f) {
        case PIPIT_FORMAT_DATE:
            strbuf_printf(b, "(\"\\\"\" %s \"\\\"\")", DATE);
            return true;
        case PIPIT_FORMAT_TIME:
            strbuf_printf(b, "(\"\\\"\" %s \"\\\"\")", TIME);
            return true;
        case PIPIT_FORMAT_DATE_TIME:
            strbuf_printf(b, "(\"\\\"\" %s \"T\" %s \"\\\"\")", DATE, TIME);
            return true;
        case PIPIT_FORMAT_UUID:
            strbuf_printf(
                b, "(\"\\\"\" %s{8} \"-\" %s{4} \"-\" %s{4} \"-\" %s{4} \"-\" %s{12} \"\\\"\")",
                HEX, HEX, HEX, HEX, HEX);
            return true;
        case PIPIT_FORMAT_EMAIL:
            strbuf_str(b, "(\"\\\"\" [a-zA-Z0-9._%+-]{1,64} \"@\" [a-zA-Z0-9-]{1,60} (\".\" "
                          "[a-zA-Z0-9-]{1,60}){1,3} \"\\\"\")");
            return true;
        case PIPIT_FORMAT_URI:
            strbuf_str(b, "(\"\\\"\" [a-zA-Z] [a-zA-Z0-9+.-]{0,15} \":\" "
                          "[a-zA-Z0-9._~:/?#@!$&'()*+,;=%-]{1,200} \"\\\"\")");
            return true;
        default:
            return false;
    }
}

static void add_word(char *buf, size_t cap, const char *word) {
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%s", n > 0 ? ", " : "", word);
}

/* The string of `s`'s pattern with its length range folded in, when pattern.c can. */
static bool pattern_with_lengths(struct gctx *g, struct strbuf *b, const struct pipit_schema *s) {
    struct strbuf pat = {0};
    bool ok = pattern_gbnf_lengths(s->pattern, g->max_string, s->min_length, s->max_length, &pat);
    if (ok) {
        strbuf_printf(b, "(\"\\\"\" %s \"\\\"\")", pat.data);
    }
    strbuf_free(&pat);
    return ok;
}

static void
string_expr(struct gctx *g, struct strbuf *b, const struct pipit_schema *s, const char *path) {
    char gr[256] = "type", va[256] = "";
    char what[96];
    if (s->n_enum > 0) {
        enum_expr(b, s);
        add_word(gr, sizeof(gr), "enum");
        if (s->format != PIPIT_FORMAT_NONE) {
            add_word(va, sizeof(va), "format");
        }
        report_line(g, path, "string", gr, va);
        return;
    }
    bool lengths_in_grammar = false;
    if (format_expr(b, s->format)) {
        add_word(gr, sizeof(gr), "format");
        if (s->pattern != NULL) {
            add_word(va, sizeof(va), "pattern");
        }
    } else if (s->pattern != NULL && (s->min_length > 0 || s->max_length >= 0) &&
               pattern_with_lengths(g, b, s)) {
        add_word(gr, sizeof(gr), "pattern");
        lengths_in_grammar = true;
    } else if (s->pattern != NULL) {
        struct strbuf pat = {0};
        if (pattern_gbnf(s->pattern, g->max_string, &pat)) {
            strbuf_printf(b, "(\"\\\"\" %s \"\\\"\")", pat.data);
            add_word(gr, sizeof(gr), "pattern");
        } else {
            strbuf_printf(b, "(\"\\\"\" " STRING_CHAR "{0,%lld} \"\\\"\")",
                          (long long)g->max_string);
            add_word(va, sizeof(va), "pattern");
        }
        strbuf_free(&pat);
    } else {
        int64_t max =
            s->max_length >= 0 && s->max_length < g->max_string ? s->max_length : g->max_string;
        if (max < s->min_length) {
            max = s->min_length;
        }
        strbuf_printf(b, "(\"\\\"\" " STRING_CHAR "{%lld,%lld} \"\\\"\")", (long long)s->min_length,
                      (long long)max);
        lengths_in_grammar = true;
    }
    if (s->format == PIPIT_FORMAT_OTHER) {
        snprintf(what, sizeof(what), "format %.40s (annotation, not checked)", s->format_name);
        add_word(va, sizeof(va), what);
    }
    if (s->min_length > 0) {
        add_word(lengths_in_grammar ? gr : va, lengths_in_grammar ? sizeof(gr) : sizeof(va),
                 "minLength");
    }
    if (s->max_length >= 0) {
        add_word(lengths_in_grammar ? gr : va, lengths_in_grammar ? sizeof(gr) : sizeof(va),
                 "maxLength");
    }
    report_line(g, path, "string", gr, va);
}

static void value_expr(struct gctx *g,
                       struct strbuf *b,
                       const struct pipit_schema *s,
                       const char *prefix,
                       const char *path) {
    char gr[256] = "type", va[256] = "";
    switch (s->type) {
        case PIPIT_SCHEMA_BOOLEAN:
            if (s->n_enum > 0) {
                enum_expr(b, s);
                add_word(gr, sizeof(gr), "enum");
            } else {
                strbuf_str(b, "(\"true\" | \"false\")");
            }
            report_line(g, path, "boolean", gr, va);
            return;
        case PIPIT_SCHEMA_NULL:
            strbuf_str(b, "\"null\"");
            report_line(g, path, "null", gr, va);
            return;
        case PIPIT_SCHEMA_STRING:
            string_expr(g, b, s, path);
            return;
        case PIPIT_SCHEMA_INTEGER:
        case PIPIT_SCHEMA_NUMBER:
            /* without exact_values, a numeric enum is not forced either: "timer 7 seconds" is
             * refused, not bent */
            if (!number_value(b, s, g->exact)) {
                if (g->bad == NULL) {
                    struct strbuf msg = {0};
                    strbuf_printf(&msg,
                                  "%s: no %s that a call can write (at most %d integer and "
                                  "%d fraction digits) satisfies the schema",
                                  path, pipit_schema_type_name(s->type), GRAMMAR_MAX_INT_DIGITS,
                                  GRAMMAR_MAX_DIGITS);
                    g->bad = strbuf_take(&msg);
                }
                strbuf_str(b, "\"\"");
            }
            {
                /* exact_values: in the grammar (and validated again); else validated only */
                char *lim = g->exact ? gr : va;
                size_t lim_size = g->exact ? sizeof(gr) : sizeof(va);
                if (s->n_enum > 0) {
                    add_word(lim, lim_size, "enum");
                }
                if (s->has_min) {
                    add_word(lim, lim_size, "minimum");
                }
                if (s->has_max) {
                    add_word(lim, lim_size, "maximum");
                }
            }
            if (s->has_xmin) {
                add_word(g->exact ? gr : va, g->exact ? sizeof(gr) : sizeof(va),
                         "exclusiveMinimum");
            }
            if (s->has_xmax) {
                add_word(g->exact ? gr : va, g->exact ? sizeof(gr) : sizeof(va),
                         "exclusiveMaximum");
            }
            if (s->multiple_of > 0) {
                add_word(va, sizeof(va), "multipleOf");
            }
            if (s->format == PIPIT_FORMAT_INT32) {
                add_word(va, sizeof(va), "format int32");
            } else if (s->format == PIPIT_FORMAT_OTHER) {
                char what[96];
                snprintf(what, sizeof(what), "format %.40s (annotation)", s->format_name);
                add_word(va, sizeof(va), what);
            }
            report_line(g, path, pipit_schema_type_name(s->type), gr, va);
            return;
        case PIPIT_SCHEMA_ANY:
            if (s->n_enum > 0) {
                enum_expr(b, s);
                report_line(g, path, "any", "enum", "");
            } else {
                any_expr(g, b, prefix);
                report_line(g, path, "any", "JSON value (nested at most 2 levels)", "");
            }
            return;
        case PIPIT_SCHEMA_UNION: {
            /* built last to first, like object members, so the report reads in order */
            struct strbuf alt[PIPIT_TOOLSPEC_MAX_ALTS];
            memset(alt, 0, sizeof(alt));
            for (size_t i = s->n_alts; i-- > 0;) {
                char aprefix[160], apath[600];
                snprintf(aprefix, sizeof(aprefix), "%s-u%zu", prefix, i);
                snprintf(apath, sizeof(apath), "%s (alternative %zu)", path, i + 1);
                value_expr(g, &alt[i], s->alts[i], aprefix, apath);
            }
            strbuf_str(b, "(");
            for (size_t i = 0; i < s->n_alts; i++) {
                if (i > 0) {
                    strbuf_str(b, " | ");
                }
                strbuf_add(b, alt[i].data != NULL ? alt[i].data : "", alt[i].len);
                if (alt[i].failed) {
                    b->failed = true;
                }
                strbuf_free(&alt[i]);
            }
            strbuf_str(b, ")");
            report_line(g, path, s->one_of ? "oneOf" : "anyOf", "one of the alternatives",
                        s->one_of ? "exactly one matches" : "");
            return;
        }
        case PIPIT_SCHEMA_ARRAY: {
            if (s->n_enum > 0) {
                enum_expr(b, s);
                report_line(g, path, "array", "enum", "");
                return;
            }
            char iprefix[160], ipath[600];
            snprintf(iprefix, sizeof(iprefix), "%s-i", prefix);
            snprintf(ipath, sizeof(ipath), "%s[]", path);
            struct strbuf item = {0};
            value_expr(g, &item, s->items, iprefix, ipath);
            strbuf_printf(g->rules, "%s ::= %s\n", iprefix, item.data != NULL ? item.data : "");
            if (item.failed) {
                g->rules->failed = true;
            }
            strbuf_free(&item);
            int64_t max = s->max_items >= 0 ? s->max_items : g->max_items;
            if (max < s->min_items) {
                max = s->min_items;
            }
            if (max == 0) {
                strbuf_str(b, "\"[]\"");
            } else if (s->min_items == 0 && max == 1) {
                strbuf_printf(b, "(\"[\" %s? \"]\")", iprefix);
            } else if (s->min_items == 0) {
                strbuf_printf(b, "(\"[\" (%s (\", \" %s){0,%lld})? \"]\")", iprefix, iprefix,
                              (long long)(max - 1));
            } else {
                strbuf_printf(b, "(\"[\" %s (\", \" %s){%lld,%lld} \"]\")", iprefix, iprefix,
                              (long long)(s->min_items - 1), (long long)(max - 1));
            }
            if (s->min_items > 0) {
                add_word(gr, sizeof(gr), "minItems");
            }
            if (s->max_items >= 0) {
                add_word(gr, sizeof(gr), "maxItems");
            }
            if (s->unique_items) {
                add_word(va, sizeof(va), "uniqueItems");
            }
            report_line(g, path, "array", gr, va);
            return;
        }
        case PIPIT_SCHEMA_OBJECT: {
            if (s->n_enum > 0) {
                enum_expr(b, s);
                report_line(g, path, "object", "enum", "");
                return;
            }
            strbuf_str(b, "(\"{\" ");
            members_expr(g, b, s, prefix, false, path);
            strbuf_str(b, " \"}\")");
            char ov[128] = "";
            if (s->additional != NULL) {
                add_word(ov, sizeof(ov), "no duplicate keys");
            }
            if (s->min_props > 0) {
                add_word(ov, sizeof(ov), "minProperties");
            }
            if (s->max_props >= 0) {
                add_word(ov, sizeof(ov), "maxProperties");
            }
            report_line(g, path, "object", "keys, required", ov);
            return;
        }
    }
}

/* ============================================================================ compile */

const char *pipit_call_syntax_trigger(enum pipit_call_syntax syntax) {
    return syntax == PIPIT_SYNTAX_HERMES ? "<tool_call>" : "<call>";
}

const char *pipit_call_syntax_str(enum pipit_call_syntax syntax) {
    switch (syntax) {
        case PIPIT_SYNTAX_PIPIT:
            return "pipit";
        case PIPIT_SYNTAX_HERMES:
            return "hermes";
    }
    return "unknown";
}

/* The text that opens a call of tool `name`, up to where its arguments begin. */
void grammar_call_head(enum pipit_call_syntax syntax, const char *name, struct strbuf *b) {
    if (syntax == PIPIT_SYNTAX_HERMES) {
        strbuf_printf(b, "<tool_call>\n{\"name\": \"%s\", \"arguments\": ", name);
    } else {
        strbuf_printf(b, "<call>%s", name);
    }
}

/* The text that closes a call after its arguments. */
const char *grammar_call_tail(enum pipit_call_syntax syntax) {
    return syntax == PIPIT_SYNTAX_HERMES ? "}\n</tool_call>" : "";
}

/* Append "the arguments of tool t" as a rule named <prefix>-args. */
static void args_rule(struct gctx *g, const struct pipit_tool *t, const char *prefix) {
    struct strbuf body = {0};
    if (g->syntax == PIPIT_SYNTAX_HERMES) {
        strbuf_str(&body, "\"{\" ");
        members_expr(g, &body, t->params, prefix, false, "args");
        strbuf_str(&body, " \"}\"");
    } else {
        strbuf_str(&body, "\"(\" ");
        members_expr(g, &body, t->params, prefix, true, "args");
        strbuf_str(&body, " \")\"");
    }
    strbuf_printf(g->rules, "%s-args ::= %s\n", prefix, body.data != NULL ? body.data : "");
    if (body.failed) {
        g->rules->failed = true;
    }
    strbuf_free(&body);
}

/* The first unwritable value a compile met goes back to `base` (which owns it). */
static void keep_bad(struct gctx *base, struct gctx *g) {
    if (base->bad == NULL) {
        base->bad = g->bad;
    } else {
        free(g->bad);
    }
    g->bad = NULL;
}

/* ----------------------------------------------------------------------------
 * "none of these tools" (docs/grammar.md): besides one call to one of the tools, the call
 * grammar offers the call `none()` (pipit) / {"name": "none", "arguments": {}} (Hermes), the
 * honest outcome when no tool of the set does what was asked; the agent runs nothing and says
 * so. A set with its own tool named "none" keeps that tool instead. */

#define NONE_NAME "none"

static bool has_own_none(const struct pipit_toolset *ts) {
    for (size_t i = 0; i < ts->n_tools; i++) {
        if (strcmp(ts->tools[i].name, NONE_NAME) == 0) {
            return true;
        }
    }
    return false;
}

/* Append " | (the none call)" (the whole call, or with `head_only` up to its arguments). */
static void none_alternative(struct strbuf *b,
                             const struct pipit_toolset *ts,
                             enum pipit_call_syntax syntax,
                             bool head_only) {
    if (has_own_none(ts)) {
        return;
    }
    struct strbuf text = {0};
    grammar_call_head(syntax, NONE_NAME, &text);
    if (head_only) {
        strbuf_str(&text, syntax == PIPIT_SYNTAX_HERMES ? "{" : "(");
    } else {
        strbuf_str(&text, syntax == PIPIT_SYNTAX_HERMES ? "{}" : "()");
        strbuf_str(&text, grammar_call_tail(syntax));
    }
    strbuf_str(b, " | ");
    gbnf_lit(b, text.data != NULL ? text.data : "");
    b->failed = b->failed || text.failed;
    strbuf_free(&text);
}

static char *compile_call(const struct pipit_toolset *ts, struct gctx *base) {
    struct strbuf rules = {0}, top = {0};
    struct gctx g = *base;
    g.bad = NULL;
    g.rules = &rules;
    enum pipit_call_syntax syntax = g.syntax;
    strbuf_str(&top, "root ::= ");
    for (size_t i = 0; i < ts->n_tools; i++) {
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "t%zu", i);
        args_rule(&g, &ts->tools[i], prefix);
        if (i > 0) {
            strbuf_str(&top, " | ");
        }
        struct strbuf head = {0};
        grammar_call_head(syntax, ts->tools[i].name, &head);
        strbuf_str(&top, "(");
        gbnf_lit(&top, head.data != NULL ? head.data : "");
        strbuf_printf(&top, " %s-args", prefix);
        const char *tail = grammar_call_tail(syntax);
        if (tail[0] != '\0') {
            strbuf_str(&top, " ");
            gbnf_lit(&top, tail);
        }
        strbuf_str(&top, ")");
        strbuf_free(&head);
    }
    none_alternative(&top, ts, syntax, false);
    strbuf_str(&top, "\n");
    strbuf_add(&top, rules.data != NULL ? rules.data : "", rules.len);
    if (rules.failed) {
        top.failed = true;
    }
    strbuf_free(&rules);
    keep_bad(base, &g);
    return strbuf_take(&top);
}

static char *compile_names(const struct pipit_toolset *ts, enum pipit_call_syntax syntax) {
    struct strbuf b = {0};
    strbuf_str(&b, "root ::= ");
    for (size_t i = 0; i < ts->n_tools; i++) {
        if (i > 0) {
            strbuf_str(&b, " | ");
        }
        struct strbuf head = {0};
        grammar_call_head(syntax, ts->tools[i].name, &head);
        /* the arguments' opener ends the name: no tool name is a prefix of another's call */
        strbuf_str(&head, syntax == PIPIT_SYNTAX_HERMES ? "{" : "(");
        gbnf_lit(&b, head.data != NULL ? head.data : "");
        strbuf_free(&head);
    }
    none_alternative(&b, ts, syntax, true); /* "none of these tools" (docs/grammar.md) */
    strbuf_str(&b, "\n");
    return strbuf_take(&b);
}

static char *compile_args(const struct pipit_tool *t, struct gctx *base) {
    struct strbuf rules = {0}, top = {0};
    struct gctx g = *base;
    g.bad = NULL;
    g.rules = &rules;
    enum pipit_call_syntax syntax = g.syntax;
    args_rule(&g, t, "a");
    strbuf_str(&top, "root ::= a-args");
    const char *tail = grammar_call_tail(syntax);
    if (tail[0] != '\0') {
        strbuf_str(&top, " ");
        gbnf_lit(&top, tail);
    }
    strbuf_str(&top, "\n");
    strbuf_add(&top, rules.data != NULL ? rules.data : "", rules.len);
    if (rules.failed) {
        top.failed = true;
    }
    strbuf_free(&rules);
    keep_bad(base, &g);
    return strbuf_take(&top);
}

enum pipit_status
pipit_grammar_describe_tool(const struct pipit_toolset *ts, size_t index, char **out) {
    if (out == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *out = NULL;
    if (ts == NULL || index >= ts->n_tools) {
        return PIPIT_ERR_INVALID_ARG;
    }
    struct strbuf rules = {0}, report = {0};
    struct gctx g = {.rules = &rules,
                     .syntax = PIPIT_SYNTAX_PIPIT,
                     .max_string = GRAMMAR_DEFAULT_MAX_STRING,
                     .max_items = GRAMMAR_DEFAULT_MAX_ITEMS,
                     .report = &report};
    args_rule(&g, &ts->tools[index], "a");
    strbuf_free(&rules);
    free(g.bad); /* the report describes; compiling says what cannot be written */
    /* the compiler writes a node's line after its children and members last to first:
     * reversed, the lines read in document order, each node before its children */
    struct strbuf rev = {0};
    for (size_t end = report.len; end > 0;) {
        size_t start = end - 1;
        while (start > 0 && report.data[start - 1] != '\n') {
            start--;
        }
        strbuf_add(&rev, report.data + start, end - start);
        end = start;
    }
    if (report.failed) {
        rev.failed = true;
    }
    strbuf_free(&report);
    if (rev.len == 0) {
        strbuf_str(&rev, "  (no arguments)\n");
    }
    *out = strbuf_take(&rev);
    return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
}

struct pipit_grammar_params pipit_grammar_default_params(void) {
    struct pipit_grammar_params p = {
        .syntax = PIPIT_SYNTAX_PIPIT,
        .max_string_chars = GRAMMAR_DEFAULT_MAX_STRING,
        .max_array_items = GRAMMAR_DEFAULT_MAX_ITEMS,
    };
    return p;
}

enum pipit_status pipit_grammar_compile(const struct pipit_toolset *ts,
                                        const struct pipit_grammar_params *params,
                                        struct pipit_grammar **out,
                                        struct pipit_error *err) {
    pipit_error_clear(err);
    if (ts == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "grammar: NULL argument");
    }
    *out = NULL;
    struct pipit_grammar_params p = params != NULL ? *params : pipit_grammar_default_params();
    enum pipit_call_syntax syntax = p.syntax;
    if (p.max_string_chars > GRAMMAR_HARD_MAX_STRING || p.max_array_items > 1024) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "grammar: max_string_chars %u (<= %d) or max_array_items %u "
                               "(<= 1024) too large",
                               p.max_string_chars, GRAMMAR_HARD_MAX_STRING, p.max_array_items);
    }
    struct gctx base = {.rules = NULL,
                        .syntax = syntax,
                        .max_string = p.max_string_chars,
                        .max_items = p.max_array_items,
                        .exact = p.exact_values,
                        .bad = NULL};
    if (syntax != PIPIT_SYNTAX_PIPIT && syntax != PIPIT_SYNTAX_HERMES) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "grammar: unknown call syntax %d",
                               (int)syntax);
    }
    struct pipit_grammar *g = calloc(1, sizeof(*g));
    if (g == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "grammar: out of memory");
    }
    g->syntax = syntax;
    g->n_tools = ts->n_tools;
    g->args = calloc(ts->n_tools > 0 ? ts->n_tools : 1, sizeof(char *));
    g->call = compile_call(ts, &base);
    g->names = compile_names(ts, syntax);
    bool ok = g->args != NULL && g->call != NULL && g->names != NULL;
    for (size_t i = 0; ok && i < ts->n_tools; i++) {
        g->args[i] = compile_args(&ts->tools[i], &base);
        ok = g->args[i] != NULL;
    }
    if (!ok || base.bad != NULL) {
        pipit_grammar_free(g);
        enum pipit_status st = ok ? PIPIT_ERR_SPEC : PIPIT_ERR_NOMEM;
        pipit_error_set(err, st, "grammar: %s", ok ? base.bad : "out of memory");
        free(base.bad);
        return st;
    }
    *out = g;
    return PIPIT_OK;
}

void pipit_grammar_free(struct pipit_grammar *g) {
    if (g == NULL) {
        return;
    }
    for (size_t i = 0; g->args != NULL && i < g->n_tools; i++) {
        free(g->args[i]);
    }
    free(g->args);
    free(g->call);
    free(g->names);
    free(g);
}

const char *pipit_grammar_call(const struct pipit_grammar *g) {
    return g != NULL ? g->call : NULL;
}

const char *pipit_grammar_names(const struct pipit_grammar *g) {
    return g != NULL ? g->names : NULL;
}

const char *pipit_grammar_args(const struct pipit_grammar *g, size_t tool_index) {
    return g != NULL && tool_index < g->n_tools ? g->args[tool_index] : NULL;
}

enum pipit_call_syntax pipit_grammar_syntax(const struct pipit_grammar *g) {
    return g != NULL ? g->syntax : PIPIT_SYNTAX_PIPIT;
}
