/*
 * grammar_number.h - the GBNF of a number or integer schema (grammar_number.c).
 */
#ifndef PIPIT_GRAMMAR_NUMBER_H
#define PIPIT_GRAMMAR_NUMBER_H

#include "strbuf.h"
#include "toolspec.h"

#include <stdbool.h>

/* Digits a number may always have, whatever its bounds need (I and F below). */
#define GRAMMAR_FRACTION_DIGITS 3
#define GRAMMAR_INT_DIGITS      12

/* The most digits a bound may need to be written exactly. */
#define GRAMMAR_MAX_DIGITS     40                 /* fraction digits */
#define GRAMMAR_MAX_INT_DIGITS 18                 /* integer digits: jansson reads up to 2^63 */
#define GRAMMAR_MAX_SAFE       9007199254740992LL /* 2^53 */

/* Append any JSON number with at most I integer and F fraction digits. */
void grammar_number_expr(struct strbuf *b, int I, int F);

/* The grammar of a number or integer schema; false (and nothing appended) when no value of
 * the grammar's shape satisfies it in exact mode. */
/* Append the grammar of a number or integer schema: its shape with the digits its bounds need,
 * and with `exact` its range, multiples and enum compiled in; false (and nothing appended) when
 * no value of that shape satisfies it in exact mode. */
bool grammar_number_value(struct strbuf *b, const struct pipit_schema *s, bool exact);

#endif /* PIPIT_GRAMMAR_NUMBER_H */
