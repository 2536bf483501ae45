/*
 * toolspec_serialize.h - the tool list as prompt text (pipit_toolset_serialize in pipit.h:
 * OpenAPI JSON, minified JSON, compact signature lines, name-and-description lines) and its
 * token counts. The
 * serializations are part of the prompt a model was trained on: byte-stable.
 */
#ifndef PIPIT_TOOLSPEC_SERIALIZE_H
#define PIPIT_TOOLSPEC_SERIALIZE_H

#include "strbuf.h"
#include "toolspec.h"

/* Append the compact form of a schema's type ("number 0.5..10", "\"a\"|\"b\"", "{...}") to `b`;
 * validation messages quote it ("... is not one of ..."). */
void ts_compact_type(struct strbuf *b, const struct pipit_schema *s);

#endif /* PIPIT_TOOLSPEC_SERIALIZE_H */
