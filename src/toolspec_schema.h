/*
 * toolspec_schema.h - JSON Schema compiled into pipit's schema tree (struct pipit_schema):
 * types and type lists, objects and arrays (recursing into their members), local "$ref"s
 * expanded inline, "anyOf"/"oneOf" as unions, "allOf" merged into one schema.
 *
 * What is accepted is in docs/toolspec.md, "JSON Schema"; everything else is refused with the
 * JSON path and the keyword. The keywords of one node are read by toolspec_keywords.c.
 */
#ifndef PIPIT_TOOLSPEC_SCHEMA_H
#define PIPIT_TOOLSPEC_SCHEMA_H

#include "toolspec.h"
#include "toolspec_parser.h"

#include <jansson.h>

/* The schema `node` at `path`, `depth` levels down (the parameters object is 1). "$ref"s are
 * resolved against P->doc_root; P->n_nodes counts the nodes made. NULL on error (reported).
 * The result is freed with ts_schema_free (toolspec_keywords.h). */
struct pipit_schema *
ts_parse_schema(struct ts_parser *P, const json_t *node, const char *path, int depth);

#endif /* PIPIT_TOOLSPEC_SCHEMA_H */
