/*
 * toolspec_serialize.c - the tool list as prompt text in four formats, and its token counts
 * (see toolspec_serialize.h). The output is byte-stable: models are trained on it.
 */
#include "toolspec_serialize.h"

#include "status.h"
#include "toolspec_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A property name as the compact form and the pipit call syntax write it: bare when an
 * identifier, else as a JSON string. */
static void compact_name(struct strbuf *b, const char *name) {
    if (ts_is_identifier(name)) {
        strbuf_str(b, name);
        return;
    }
    json_t *j = json_string(name);
    char *q = j != NULL ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    if (q == NULL) {
        b->failed = true;
        return;
    }
    strbuf_str(b, q);
    free(q);
}

static void compact_props(struct strbuf *b, const struct pipit_schema *s) {
    for (size_t i = 0; i < s->n_props; i++) {
        if (i > 0) {
            strbuf_str(b, ", ");
        }
        compact_name(b, s->props[i].name);
        strbuf_str(b, s->props[i].required ? ": " : "?: ");
        ts_compact_type(b, s->props[i].schema);
        const json_t *d = s->props[i].schema->default_value;
        if (!s->props[i].required && d != NULL && !json_is_object(d) && !json_is_array(d)) {
            char *q = json_dumps(d, JSON_ENCODE_ANY | JSON_COMPACT);
            if (q != NULL) {
                strbuf_str(b, " = ");
                strbuf_str(b, q);
                free(q);
            }
        }
    }
    if (s->additional != NULL) {
        strbuf_str(b, s->n_props > 0 ? ", ...: " : "...: ");
        ts_compact_type(b, s->additional);
    }
}

void ts_compact_type(struct strbuf *b, const struct pipit_schema *s) {
    char num[64], num2[64];
    if (s->n_enum > 0) {
        for (size_t i = 0; i < s->n_enum; i++) {
            if (i > 0) {
                strbuf_str(b, "|");
            }
            if (json_is_number(s->enum_json[i])) {
                ts_format_json_number(num, sizeof(num), s->enum_json[i]);
                strbuf_str(b, num);
            } else {
                char *q = json_dumps(s->enum_json[i], JSON_ENCODE_ANY | JSON_COMPACT);
                if (q == NULL) {
                    b->failed = true;
                    return;
                }
                strbuf_str(b, q);
                free(q);
            }
        }
        return;
    }
    switch (s->type) {
        case PIPIT_SCHEMA_OBJECT:
            strbuf_str(b, "{");
            compact_props(b, s);
            strbuf_str(b, "}");
            break;
        case PIPIT_SCHEMA_STRING:
            strbuf_str(b, "string");
            if (s->format != PIPIT_FORMAT_NONE) {
                strbuf_str(b, " ");
                strbuf_str(b, s->format_name);
            }
            if (s->min_length > 0 && s->max_length >= 0) {
                pipit_format(num, sizeof(num), " %lld..%lld chars", (long long)s->min_length,
                             (long long)s->max_length);
                strbuf_str(b, num);
            } else if (s->min_length > 0) {
                pipit_format(num, sizeof(num), ">=%lld", (long long)s->min_length);
                strbuf_str(b, num);
            } else if (s->max_length >= 0) {
                pipit_format(num, sizeof(num), "<=%lld", (long long)s->max_length);
                strbuf_str(b, num);
            }
            if (s->pattern != NULL) {
                strbuf_str(b, " /");
                strbuf_str(b, s->pattern);
                strbuf_str(b, "/");
            }
            break;
        case PIPIT_SCHEMA_NUMBER:
        case PIPIT_SCHEMA_INTEGER:
            strbuf_str(b, pipit_schema_type_name(s->type));
            if (s->has_min && s->has_max) {
                ts_format_number(num, sizeof(num), s->min);
                ts_format_number(num2, sizeof(num2), s->max);
                strbuf_str(b, " ");
                strbuf_str(b, num);
                strbuf_str(b, "..");
                strbuf_str(b, num2);
            } else if (s->has_min) {
                ts_format_number(num, sizeof(num), s->min);
                strbuf_str(b, " >=");
                strbuf_str(b, num);
            } else if (s->has_max) {
                ts_format_number(num, sizeof(num), s->max);
                strbuf_str(b, " <=");
                strbuf_str(b, num);
            }
            break;
        case PIPIT_SCHEMA_BOOLEAN:
            strbuf_str(b, "boolean");
            break;
        case PIPIT_SCHEMA_NULL:
            strbuf_str(b, "null");
            break;
        case PIPIT_SCHEMA_ANY:
            strbuf_str(b, "any");
            break;
        case PIPIT_SCHEMA_UNION:
            for (size_t i = 0; i < s->n_alts; i++) {
                if (i > 0) {
                    strbuf_str(b, "|");
                }
                ts_compact_type(b, s->alts[i]);
            }
            break;
        case PIPIT_SCHEMA_ARRAY: {
            bool wrap = s->items->type == PIPIT_SCHEMA_UNION;
            if (wrap) {
                strbuf_str(b, "(");
            }
            ts_compact_type(b, s->items);
            if (wrap) {
                strbuf_str(b, ")");
            }
            if (s->min_items > 0 && s->max_items >= 0) {
                pipit_format(num, sizeof(num), "[%lld..%lld]", (long long)s->min_items,
                             (long long)s->max_items);
            } else if (s->min_items > 0) {
                pipit_format(num, sizeof(num), "[>=%lld]", (long long)s->min_items);
            } else if (s->max_items >= 0) {
                pipit_format(num, sizeof(num), "[<=%lld]", (long long)s->max_items);
            } else {
                pipit_format(num, sizeof(num), "[]");
            }
            strbuf_str(b, num);
            if (s->unique_items) {
                strbuf_str(b, " unique");
            }
            break;
        }
    }
}

static void tool_line(struct strbuf *b, const struct pipit_tool *t, enum pipit_toolspec_format f) {
    strbuf_str(b, t->name);
    if (f == PIPIT_TOOLSPEC_COMPACT) {
        strbuf_str(b, "(");
        compact_props(b, t->params);
        strbuf_str(b, ")");
    }
    strbuf_str(b, " - ");
    strbuf_line(b, t->description);
}

/* {"type":"function","function":<the spec's function object>} (new reference). */
static json_t *tool_json(const struct pipit_tool *t) {
    return json_pack("{s:s,s:O}", "type", "function", "function", t->function);
}

static size_t json_flags(enum pipit_toolspec_format f) {
    return (f == PIPIT_TOOLSPEC_OPENAPI ? JSON_INDENT(2) : JSON_COMPACT) | JSON_REAL_PRECISION(15);
}

static enum pipit_status
check_format(const struct pipit_toolset *ts, enum pipit_toolspec_format format, char **out) {
    if (out == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *out = NULL;
    if (ts == NULL || (int)format < 0 || (int)format >= PIPIT_TOOLSPEC_N_FORMATS) {
        return PIPIT_ERR_INVALID_ARG;
    }
    return PIPIT_OK;
}

enum pipit_status pipit_toolset_serialize_tool(const struct pipit_toolset *ts,
                                               size_t index,
                                               enum pipit_toolspec_format format,
                                               char **out) {
    enum pipit_status st = check_format(ts, format, out);
    if (st != PIPIT_OK) {
        return st;
    }
    if (index >= ts->n_tools) {
        return PIPIT_ERR_INVALID_ARG;
    }
    const struct pipit_tool *t = &ts->tools[index];
    if (format == PIPIT_TOOLSPEC_OPENAPI || format == PIPIT_TOOLSPEC_MINIFIED) {
        json_t *j = tool_json(t);
        *out = j != NULL ? json_dumps(j, json_flags(format)) : NULL;
        json_decref(j);
        return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
    }
    struct strbuf b = {0};
    tool_line(&b, t, format);
    *out = strbuf_take(&b);
    return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
}

enum pipit_status pipit_toolset_serialize(const struct pipit_toolset *ts,
                                          enum pipit_toolspec_format format,
                                          char **out) {
    enum pipit_status st = check_format(ts, format, out);
    if (st != PIPIT_OK) {
        return st;
    }
    if (format == PIPIT_TOOLSPEC_OPENAPI || format == PIPIT_TOOLSPEC_MINIFIED) {
        json_t *arr = json_array();
        bool ok = arr != NULL;
        for (size_t i = 0; i < ts->n_tools && ok; i++) {
            ok = json_array_append_new(arr, tool_json(&ts->tools[i])) == 0;
        }
        *out = ok ? json_dumps(arr, json_flags(format)) : NULL;
        json_decref(arr);
        return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
    }
    struct strbuf b = {0};
    for (size_t i = 0; i < ts->n_tools; i++) {
        tool_line(&b, &ts->tools[i], format);
        strbuf_str(&b, "\n");
    }
    *out = strbuf_take(&b);
    return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
}

/* ============================================================================
 * token counts */

static enum pipit_status count_text(const struct pipit_model *model, const char *text, int32_t *n) {
    int32_t need = pipit_tokenize(model, text, false, false, NULL, 0);
    if (need == INT32_MIN) {
        return PIPIT_ERR_TOKENIZE;
    }
    *n = need < 0 ? -need : need;
    return PIPIT_OK;
}

enum pipit_status pipit_toolset_count_tokens(const struct pipit_toolset *ts,
                                             const struct pipit_model *model,
                                             struct pipit_token_counts *per_tool,
                                             struct pipit_token_counts *total) {
    if (ts == NULL || model == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    for (int f = 0; f < PIPIT_TOOLSPEC_N_FORMATS; f++) {
        char *text = NULL;
        enum pipit_status st;
        if (total != NULL) {
            st = pipit_toolset_serialize(ts, (enum pipit_toolspec_format)f, &text);
            if (st == PIPIT_OK) {
                st = count_text(model, text, &total->by_format[f]);
            }
            free(text);
            if (st != PIPIT_OK) {
                return st;
            }
        }
        for (size_t i = 0; per_tool != NULL && i < ts->n_tools; i++) {
            st = pipit_toolset_serialize_tool(ts, i, (enum pipit_toolspec_format)f, &text);
            if (st == PIPIT_OK) {
                st = count_text(model, text, &per_tool[i].by_format[f]);
            }
            free(text);
            if (st != PIPIT_OK) {
                return st;
            }
        }
    }
    return PIPIT_OK;
}
