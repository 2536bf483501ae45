/*
 * toolspec_check.h - validation of JSON values against a compiled schema (the public side is
 * pipit_schema_check and pipit_tool_check_args in toolspec.h, pipit_toolset_validate_args in
 * pipit.h). This header adds what the loader needs while it compiles a schema.
 */
#ifndef PIPIT_TOOLSPEC_CHECK_H
#define PIPIT_TOOLSPEC_CHECK_H

#include "toolspec.h"

#include <jansson.h>
#include <stddef.h>

/* Validate `v` against `s` without `s`'s own enum (so an enum value can be checked against the
 * rest of its schema). Returns the number of problems found; the first is written to *first. */
size_t ts_check_except_enum(const struct pipit_schema *s,
                            const json_t *v,
                            const char *path,
                            struct pipit_arg_problem *first);

#endif /* PIPIT_TOOLSPEC_CHECK_H */
