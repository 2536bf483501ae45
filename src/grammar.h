/*
 * grammar.h - internal helpers of the grammar compiler (the public API is in pipit.h,
 * "grammars and calls").
 */
#ifndef PIPIT_GRAMMAR_H
#define PIPIT_GRAMMAR_H

#include "pipit.h"
#include "strbuf.h"
#include "toolspec.h"

/* Append the text that opens a call of tool `name` in `syntax`, up to where its arguments
 * begin: "<call>set_zoom" or "<tool_call>\n{\"name\": \"set_zoom\", \"arguments\": ". */
void grammar_call_head(enum pipit_call_syntax syntax, const char *name, struct strbuf *b);

/* The text that closes a call after its arguments ("" or "}\n</tool_call>"). */
const char *grammar_call_tail(enum pipit_call_syntax syntax);

#endif /* PIPIT_GRAMMAR_H */
