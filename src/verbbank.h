/*
 * verbbank.h - the verbs people use for one another when they give a command ("look for the
 * report" / "find the report" / "search for the report"): the pack generator says examples
 * with them (train/packgen.c) and the agent reads a tool's verb from them
 * (src/agent_heard.c, src/agent_choose.c). Generic English; it knows no pack.
 *
 * Invariants:
 * - A group's members are interchangeable as the first words of a command; the bank is fixed
 *   data and lookups are deterministic.
 * - The longest member that opens a text wins ("get me a car" is "get me", not "get").
 */
#ifndef PIPIT_VERBBANK_H
#define PIPIT_VERBBANK_H

#include <stdbool.h>
#include <stddef.h>

/* The most alternatives a member has. */
#define VERBBANK_MAX_ALT 6

/* The member of the bank that opens lowercase `text` as whole words (the longest one), its
 * length in *len; NULL when no member opens it. */
const char *verbbank_lead(const char *text, size_t *len);

/* The other members of the group of `verb` (a member, as verbbank_lead returns it) into `alt`,
 * at most VERBBANK_MAX_ALT; returns how many. 0 for a verb the bank does not hold. */
int verbbank_alternatives(const char *verb, const char *alt[VERBBANK_MAX_ALT]);

/* Whether the one word `w` is one of `verb`'s alternatives ("text" for "tell"). */
bool verbbank_says(const char *verb, const char *w);

#endif /* PIPIT_VERBBANK_H */
