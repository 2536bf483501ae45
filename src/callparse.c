/*
 * callparse.c - model output -> a typed call, for both call syntaxes (see pipit.h, "grammars
 * and calls"). The parsers accept exactly what the grammars in grammar.c produce, and a little
 * more (whitespace, key order, "parameters" for "arguments"), because instruct models run
 * unconstrained or with a lazy grammar also reach them. Everything else is a PIPIT_ERR_PARSE
 * naming the column and what was expected.
 */
#include "pipit.h"
#include "status.h"
#include "utf8.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define CALL_MAX_TEXT      (64 * 1024)
#define PIPIT_CALL_MAX_KEY 128 /* bytes of an argument name (PIPIT_TOOLSPEC_MAX_PROP_NAME) */

void pipit_call_clear(struct pipit_call *call) {
    if (call == NULL) {
        return;
    }
    free(call->args_json);
    memset(call, 0, sizeof(*call));
}

bool pipit_call_detect(enum pipit_call_syntax syntax, const char *text) {
    return text != NULL && strstr(text, pipit_call_syntax_trigger(syntax)) != NULL;
}

/* PIPIT_ERR_PARSE "call: <what> at column N" with the position filled in. */
static enum pipit_status
parse_fail(struct pipit_error *err, const char *text, size_t off, const char *what) {
    pipit_error_set(err, PIPIT_ERR_PARSE, "call: %s at column %d", what, (int)off + 1);
    if (err != NULL) {
        err->offset = (int64_t)off;
        err->line = 1;
        err->column = (int32_t)off + 1;
        for (size_t i = 0; i < off && text[i] != '\0'; i++) {
            if (text[i] == '\n') {
                err->line++;
                err->column = (int32_t)(off - i);
            }
        }
    }
    return PIPIT_ERR_PARSE;
}

static size_t skip_ws(const char *s, size_t i) {
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
        i++;
    }
    return i;
}

/* A tool name: [a-zA-Z0-9_.-]+ (the names toolspec.c accepts). */
static size_t name_len(const char *s) {
    size_t n = 0;
    while (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '-' || s[n] == '.') {
        n++;
    }
    return n;
}

static size_t ident_len(const char *s) {
    size_t n = 0;
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) {
        return 0;
    }
    while (isalnum((unsigned char)s[n]) || s[n] == '_') {
        n++;
    }
    return n;
}

static enum pipit_status finish(struct pipit_call *out,
                                const char *name,
                                size_t name_len,
                                json_t *args,
                                struct pipit_error *err) {
    if (name_len >= sizeof(out->name)) {
        json_decref(args);
        return pipit_error_set(err, PIPIT_ERR_PARSE, "call: tool name longer than %zu bytes",
                               sizeof(out->name) - 1);
    }
    /* 15 significant digits: what a model writes ("-0.4"), not its binary neighbour
     * ("-0.40000000000000002"); every decimal of up to 15 digits reads back the same */
    char *dump = json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    json_decref(args);
    if (dump == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "call: out of memory");
    }
    memcpy(out->name, name, name_len);
    out->name[name_len] = '\0';
    out->args_json = dump;
    return PIPIT_OK;
}

/* <call>name(key=value, key=value) */
static enum pipit_status
parse_pipit(const char *text, size_t start, struct pipit_call *out, struct pipit_error *err) {
    size_t i = start + strlen("<call>");
    i = skip_ws(text, i);
    size_t nlen = name_len(text + i);
    if (nlen == 0) {
        return parse_fail(err, text, i, "expected a tool name");
    }
    const char *name = text + i;
    i += nlen;
    if (text[i] != '(') {
        return parse_fail(err, text, i, "expected '(' after the tool name");
    }
    i++;
    json_t *args = json_object();
    if (args == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "call: out of memory");
    }
    i = skip_ws(text, i);
    if (text[i] == ')') {
        i++;
    } else {
        for (;;) {
            i = skip_ws(text, i);
            /* a key is an identifier, or a JSON string for any other name */
            char key[PIPIT_CALL_MAX_KEY + 1];
            size_t klen = 0, kstart = i;
            if (text[i] == '"') {
                json_error_t jerr;
                json_t *k = json_loadb(text + i, strlen(text + i),
                                       JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, &jerr);
                if (!json_is_string(k) || json_string_length(k) == 0 ||
                    json_string_length(k) > PIPIT_CALL_MAX_KEY ||
                    strlen(json_string_value(k)) != json_string_length(k)) {
                    json_decref(k);
                    json_decref(args);
                    return parse_fail(err, text, i, "expected an argument name");
                }
                memcpy(key, json_string_value(k), json_string_length(k) + 1);
                json_decref(k);
                i += (size_t)jerr.position;
                klen = i - kstart;
            } else {
                klen = ident_len(text + i);
                if (klen == 0 || klen > PIPIT_CALL_MAX_KEY) {
                    json_decref(args);
                    return parse_fail(err, text, i, "expected an argument name");
                }
                memcpy(key, text + i, klen);
                key[klen] = '\0';
                i += klen;
            }
            i = skip_ws(text, i);
            if (text[i] != '=') {
                json_decref(args);
                return parse_fail(err, text, i, "expected '=' after the argument name");
            }
            i = skip_ws(text, i + 1);
            json_error_t jerr;
            json_t *v = json_loadb(
                text + i, strlen(text + i),
                JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &jerr);
            if (v == NULL) {
                json_decref(args);
                return parse_fail(err, text, i, "expected a JSON value");
            }
            if (json_object_get(args, key) != NULL) {
                json_decref(v);
                json_decref(args);
                return parse_fail(err, text, kstart, "duplicate argument");
            }
            json_object_set_new(args, key, v);
            i += (size_t)jerr.position;
            i = skip_ws(text, i);
            if (text[i] == ',') {
                i++;
                continue;
            }
            if (text[i] == ')') {
                i++;
                break;
            }
            json_decref(args);
            return parse_fail(err, text, i, "expected ',' or ')' after the value");
        }
    }
    i = skip_ws(text, i);
    if (text[i] != '\0') {
        json_decref(args);
        return parse_fail(err, text, i, "unexpected text after the call");
    }
    return finish(out, name, nlen, args, err);
}

/* <tool_call>{"name": ..., "arguments": {...}}</tool_call> */
static enum pipit_status
parse_hermes(const char *text, size_t start, struct pipit_call *out, struct pipit_error *err) {
    size_t i = start + strlen("<tool_call>");
    const char *end = strstr(text + i, "</tool_call>");
    size_t body_end = end != NULL ? (size_t)(end - text) : strlen(text);
    json_error_t jerr;
    json_t *obj = json_loadb(text + i, body_end - i, JSON_REJECT_DUPLICATES, &jerr);
    if (obj == NULL) {
        return parse_fail(err, text, i + (size_t)(jerr.position > 0 ? jerr.position - 1 : 0),
                          "the tool call is not a JSON object");
    }
    const json_t *name = json_object_get(obj, "name");
    json_t *args = json_object_get(obj, "arguments");
    if (args == NULL) {
        args = json_object_get(obj, "parameters");
    }
    if (!json_is_string(name) || name_len(json_string_value(name)) == 0 ||
        name_len(json_string_value(name)) != strlen(json_string_value(name))) {
        json_decref(obj);
        return parse_fail(err, text, i, "\"name\" must be a tool name string");
    }
    json_t *parsed = NULL;
    if (args == NULL) {
        parsed = json_object();
    } else if (json_is_string(args)) {
        /* some models write the arguments as a JSON string */
        parsed = json_loads(json_string_value(args), JSON_REJECT_DUPLICATES, &jerr);
    } else {
        parsed = json_incref(args);
    }
    if (!json_is_object(parsed)) {
        json_decref(parsed);
        json_decref(obj);
        return parse_fail(err, text, i, "\"arguments\" must be a JSON object");
    }
    size_t after = end != NULL ? body_end + strlen("</tool_call>") : body_end;
    after = skip_ws(text, after);
    if (text[after] != '\0') {
        json_decref(parsed);
        json_decref(obj);
        return parse_fail(err, text, after, "unexpected text after the call");
    }
    const char *n = json_string_value(name);
    enum pipit_status st = finish(out, n, strlen(n), parsed, err);
    json_decref(obj);
    return st;
}

enum pipit_status pipit_call_parse(enum pipit_call_syntax syntax,
                                   const char *text,
                                   struct pipit_call *out,
                                   struct pipit_error *err) {
    pipit_error_clear(err);
    if (text == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "call: NULL argument");
    }
    memset(out, 0, sizeof(*out));
    if (strlen(text) > CALL_MAX_TEXT) {
        return pipit_error_set(err, PIPIT_ERR_PARSE, "call: output longer than %d bytes",
                               CALL_MAX_TEXT);
    }
    const char *trigger = pipit_call_syntax_trigger(syntax);
    const char *at = strstr(text, trigger);
    if (at == NULL) {
        return pipit_error_set(err, PIPIT_ERR_PARSE, "call: no %s in the output", trigger);
    }
    size_t start = (size_t)(at - text);
    /* bytes that are no UTF-8 character (llama.cpp's GBNF sampler lets byte tokens spell a lead
     * byte above F4, a surrogate or an overlong form inside a string) are read as U+FFFD, as a
     * lenient decoder reads them: the call keeps its shape, the string says a byte was bad */
    size_t len = strlen(text);
    char *clean = NULL;
    if (!utf8_valid(text, len)) {
        clean = malloc(3 * len + 1);
        if (clean == NULL) {
            return pipit_error_set(err, PIPIT_ERR_NOMEM, "call: out of memory");
        }
        size_t o = 0;
        for (size_t i = 0; i < len;) {
            size_t k = utf8_seq_len((const unsigned char *)text + i, len - i);
            if (k == 0) {
                memcpy(clean + o, "\xEF\xBF\xBD", 3);
                o += 3;
                i++;
            } else {
                memcpy(clean + o, text + i, k);
                o += k;
                i += k;
            }
        }
        clean[o] = '\0';
        start = (size_t)(strstr(clean, trigger) - clean);
        text = clean;
    }
    enum pipit_status st = syntax == PIPIT_SYNTAX_HERMES ? parse_hermes(text, start, out, err)
                                                         : parse_pipit(text, start, out, err);
    free(clean);
    return st;
}
