/*
 * grammar_number.c - the GBNF of a number or integer schema: its JSON shape with as many
 * integer and fractional digits as its bounds need, and in exact mode (exact_values) the ranges,
 * multiples and numeric enums compiled in. The section comment below has the reasons.
 */
#include "grammar_number.h"

#include "status.h"
#include "strbuf.h"
#include "toolspec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void grammar_number_expr(struct strbuf *b, int I, int F) {
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
bool grammar_number_value(struct strbuf *b, const struct pipit_schema *s, bool exact) {
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
        grammar_number_expr(b, I, F);
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
