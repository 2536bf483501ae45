/*
 * device.c - helpers shared by every device (results, value descriptions for messages, the
 * generic state line), the public handle struct pipit_device, and the device over an app's
 * own state (pipit_device_from_app()). pipit's own devices are made in src/devices/registry.c.
 */
#include "device.h"

#include "utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Quote a string into buf: at most 32 characters and never more than fits,
 * invalid bytes and control characters shown as '?', so the text stays valid
 * UTF-8 however it is cut. */
static void describe_string(const char *s, size_t n, char *buf, size_t size) {
    enum {
        MAX_CHARS = 32
    };
    char tmp[MAX_CHARS * 4 + 1];
    /* room for the quotes, "..." and the NUL around tmp */
    size_t room = size > 6 ? size - 6 : 0;
    if (room > sizeof(tmp) - 1) {
        room = sizeof(tmp) - 1;
    }
    size_t o = 0;
    size_t chars = 0;
    size_t i = 0;
    while (i < n && chars < MAX_CHARS) {
        size_t len = utf8_char_len((const unsigned char *)s + i, n - i, false);
        if (o + (len == 0 ? 1 : len) > room) {
            break;
        }
        if (len == 0) {
            tmp[o++] = '?';
            i++;
        } else {
            memcpy(tmp + o, s + i, len);
            o += len;
            i += len;
        }
        chars++;
    }
    tmp[o] = '\0';
    pipit_format(buf, size, "\"%s%s\"", tmp, i < n ? "..." : "");
}

void device_result_clear(struct device_result *r) {
    if (r == NULL) {
        return;
    }
    json_decref(r->data);
    memset(r, 0, sizeof(*r));
}

void device_result_fail(struct device_result *r, const char *code, const char *fmt, ...) {
    if (r == NULL) {
        return;
    }
    device_result_clear(r);
    pipit_format(r->code, sizeof(r->code), "%s", code != NULL ? code : "");
    va_list ap;
    va_start(ap, fmt);
    pipit_vformat(r->message, sizeof(r->message), fmt, ap);
    va_end(ap);
    utf8_sanitize(r->message);
}

void device_free(struct device *dev) {
    if (dev == NULL) {
        return;
    }
    if (dev->ops != NULL && dev->ops->destroy != NULL) {
        dev->ops->destroy(dev->self);
    }
    dev->ops = NULL;
    dev->self = NULL;
}

void device_describe_string(const char *s, char *buf, size_t size) {
    if (buf == NULL || size == 0) {
        return;
    }
    if (s == NULL) {
        pipit_format(buf, size, "missing");
        return;
    }
    describe_string(s, strlen(s), buf, size);
}

void device_describe_json(const json_t *v, char *buf, size_t size) {
    if (buf == NULL || size == 0) {
        return;
    }
    switch (v == NULL ? JSON_NULL : json_typeof(v)) {
        case JSON_NULL:
            pipit_format(buf, size, "%s", v == NULL ? "missing" : "null");
            break;
        case JSON_TRUE:
            pipit_format(buf, size, "true");
            break;
        case JSON_FALSE:
            pipit_format(buf, size, "false");
            break;
        case JSON_INTEGER:
            pipit_format(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            break;
        case JSON_REAL:
            pipit_format(buf, size, "%g", json_real_value(v));
            break;
        case JSON_STRING:
            describe_string(json_string_value(v), json_string_length(v), buf, size);
            break;
        case JSON_ARRAY:
            pipit_format(buf, size, "an array");
            break;
        case JSON_OBJECT:
            pipit_format(buf, size, "an object");
            break;
    }
}

void device_state_line(const struct device *dev, char *buf, size_t size) {
    if (buf == NULL || size == 0) {
        return;
    }
    buf[0] = '\0';
    if (dev == NULL || dev->ops == NULL) {
        return;
    }
    if (dev->ops->state_line != NULL) {
        dev->ops->state_line(dev->self, buf, size);
        return;
    }
    /* generic: scalar keys as key=value, in the state's order */
    json_t *state = dev->ops->get_state != NULL ? dev->ops->get_state(dev->self) : NULL;
    size_t used = 0;
    const char *key;
    json_t *v;
    json_object_foreach(state, key, v) {
        char val[64];
        if (json_is_string(v)) {
            pipit_format(val, sizeof(val), "%s", json_string_value(v));
        } else if (json_is_boolean(v)) {
            pipit_format(val, sizeof(val), "%s", json_is_true(v) ? "yes" : "no");
        } else if (json_is_number(v)) {
            pipit_format(val, sizeof(val), "%g", json_number_value(v));
        } else {
            continue;
        }
        int n = snprintf(buf + used, size - used, "%s%s=%s", used > 0 ? " " : "", key, val);
        if (n < 0 || (size_t)n >= size - used) {
            buf[used] = '\0';
            break;
        }
        used += (size_t)n;
    }
    json_decref(state);
}

enum pipit_status device_call_begin(const char *device,
                                    const void *self,
                                    const char *tool,
                                    const void *table,
                                    size_t n,
                                    size_t stride,
                                    size_t *index,
                                    const json_t **args,
                                    json_t **owned,
                                    struct device_result *r) {
    char value[96];
    *owned = NULL;
    if (r == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    memset(r, 0, sizeof(*r));
    if (self == NULL || tool == NULL) {
        device_result_fail(r, "invalid_argument", "no %s or no tool name", device);
        return PIPIT_ERR_INVALID_ARG;
    }
    const unsigned char *row = table;
    size_t i = 0;
    for (; i < n; i++) {
        const char *name;
        memcpy(&name, row + i * stride, sizeof(name)); /* each row starts with its name */
        if (strcmp(name, tool) == 0) {
            break;
        }
    }
    if (i == n) {
        device_describe_string(tool, value, sizeof(value));
        device_result_fail(r, "unknown_tool", "the %s has no tool %s", device, value);
        return PIPIT_ERR_UNKNOWN_TOOL;
    }
    *index = i;
    if (*args == NULL) {
        *owned = json_object();
        if (*owned == NULL) {
            return PIPIT_ERR_NOMEM;
        }
        *args = *owned;
    } else if (!json_is_object(*args)) {
        device_describe_json(*args, value, sizeof(value));
        device_result_fail(r, "invalid_argument", "the arguments must be an object, got %s", value);
        return PIPIT_ERR_INVALID_ARGS;
    }
    return PIPIT_OK;
}

/* ============================================================================
 * the public handle
 */

enum pipit_status device_handle_new(struct device *dev,
                                    const char *name,
                                    const char *init_json,
                                    struct pipit_device **out,
                                    struct pipit_error *err) {
    enum pipit_status st = PIPIT_OK;
    if (init_json != NULL) {
        json_error_t jerr;
        json_t *init = json_loads(init_json, 0, &jerr);
        if (!json_is_object(init)) {
            st = init == NULL ? pipit_error_set(err, PIPIT_ERR_JSON,
                                                "device: the %s's initial state is not JSON: %s "
                                                "(line %d, column %d)",
                                                name, jerr.text, jerr.line, jerr.column)
                              : pipit_error_set(err, PIPIT_ERR_JSON,
                                                "device: the %s's initial state is not a JSON "
                                                "object",
                                                name);
        } else {
            st = dev->ops->set_state(dev->self, init, err);
        }
        json_decref(init);
    }
    struct pipit_device *d = st == PIPIT_OK ? calloc(1, sizeof(*d)) : NULL;
    if (st == PIPIT_OK && d == NULL) {
        st = pipit_error_set(err, PIPIT_ERR_NOMEM, "device: out of memory");
    }
    if (st != PIPIT_OK) {
        device_free(dev);
        return st;
    }
    d->dev = *dev;
    memset(dev, 0, sizeof(*dev));
    pipit_format(d->name, sizeof(d->name), "%s", name);
    *out = d;
    return PIPIT_OK;
}

void pipit_device_free(struct pipit_device *device) {
    if (device != NULL) {
        device_free(&device->dev);
        free(device);
    }
}

const char *pipit_device_name(const struct pipit_device *device) {
    return device != NULL ? device->name : "";
}

char *pipit_device_state_json(const struct pipit_device *device) {
    if (device == NULL) {
        return NULL;
    }
    json_t *s = device->dev.ops->get_state(device->dev.self);
    char *out = s != NULL
                    ? json_dumps(s, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER)
                    : NULL;
    json_decref(s);
    return out;
}

/* ============================================================================
 * an app's own state: a device whose state comes from the app's callbacks
 *
 * It runs no tool itself (call() answers unknown_tool: the app's handlers run its tools), reads
 * the state through get_state() for every read, and restores keys through restore(). It keeps
 * no copy of the state: the app's is the only one.
 */

struct app_device {
    struct pipit_app_state cb;
};

static void app_destroy(void *self) {
    free(self);
}

static enum pipit_status
app_call(void *self, const char *tool, const json_t *args, struct device_result *r) {
    (void)args;
    if (r == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    memset(r, 0, sizeof(*r));
    char value[96];
    device_describe_string(tool, value, sizeof(value));
    device_result_fail(r, "unknown_tool", "the app has no handler for %s", value);
    return self == NULL || tool == NULL ? PIPIT_ERR_INVALID_ARG : PIPIT_ERR_UNKNOWN_TOOL;
}

/* The app's state, parsed: a new object, or NULL with `why` saying what was wrong. */
static json_t *app_read(const struct app_device *d, char *why, size_t why_size) {
    char *buf = calloc(1, PIPIT_APP_STATE_MAX_BYTES);
    if (buf == NULL) {
        pipit_format(why, why_size, "out of memory");
        return NULL;
    }
    enum pipit_status st = d->cb.get_state(buf, PIPIT_APP_STATE_MAX_BYTES, d->cb.user_data);
    json_t *state = NULL;
    if (st != PIPIT_OK) {
        pipit_format(why, why_size, "get_state returned %s", pipit_status_str(st));
    } else if (memchr(buf, '\0', PIPIT_APP_STATE_MAX_BYTES - 1) == NULL) {
        pipit_format(why, why_size, "get_state filled all %d bytes: the state is too long",
                     PIPIT_APP_STATE_MAX_BYTES - 1);
    } else {
        json_error_t jerr;
        state = json_loads(buf, 0, &jerr);
        if (state == NULL) {
            pipit_format(why, why_size, "get_state wrote no JSON: %s (column %d)", jerr.text,
                         jerr.column);
        } else if (!json_is_object(state)) {
            pipit_format(why, why_size, "get_state wrote JSON that is not an object");
            json_decref(state);
            state = NULL;
        }
    }
    free(buf);
    return state;
}

static json_t *app_get_state(const void *self) {
    char why[160];
    return self != NULL ? app_read(self, why, sizeof(why)) : NULL;
}

static enum pipit_status
app_set_state(void *self, const json_t *overrides, struct pipit_error *err) {
    const struct app_device *d = self;
    if (d == NULL || !json_is_object(overrides)) {
        return pipit_error_set(err, PIPIT_ERR_JSON, "device: app state: not a JSON object");
    }
    if (json_object_size(overrides) == 0) {
        return PIPIT_OK;
    }
    if (d->cb.restore == NULL) {
        return pipit_error_set(err, PIPIT_ERR_STATE,
                               "device: the app's state has no restore callback");
    }
    char *text =
        json_dumps(overrides, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER);
    if (text == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "device: out of memory");
    }
    enum pipit_status st = d->cb.restore(text, d->cb.user_data);
    if (st != PIPIT_OK) {
        pipit_error_set(err, st == PIPIT_ERR_NOMEM ? st : PIPIT_ERR_JSON,
                        "device: the app refused to restore %s: %s", text, pipit_status_str(st));
        st = st == PIPIT_ERR_NOMEM ? st : PIPIT_ERR_JSON;
    }
    free(text);
    return st;
}

static const struct device_ops APP_OPS = {
    .name = "app",
    .destroy = app_destroy,
    .call = app_call,
    .get_state = app_get_state,
    .set_state = app_set_state,
    .state_line = NULL, /* the generic one: scalar keys as key=value */
    .words = NULL,
    .n_words = 0,
};

enum pipit_status pipit_device_from_app(const struct pipit_app_state *app,
                                        struct pipit_device **out,
                                        struct pipit_error *err) {
    pipit_error_clear(err);
    if (out != NULL) {
        *out = NULL;
    }
    if (app == NULL || out == NULL || app->get_state == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "device: NULL app state, out or get_state callback");
    }
    const char *name = app->name != NULL && app->name[0] != '\0' ? app->name : "app";
    struct app_device *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "device: out of memory");
    }
    d->cb = *app;
    char why[160];
    json_t *state = app_read(d, why, sizeof(why));
    if (state == NULL) {
        free(d);
        return pipit_error_set(err, PIPIT_ERR_JSON, "device: the %s state: %s", name, why);
    }
    json_decref(state);
    d->cb.name = NULL; /* the caller's string need not outlive this call: the handle copies it */
    struct device dev = {&APP_OPS, d};
    return device_handle_new(&dev, name, NULL, out, err);
}
