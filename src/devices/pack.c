/*
 * pack.c - the generic device: state, effects, ranges and undo from a pack's declaration.
 *
 * The state is a JSON object holding every declared key in declared order; every value in
 * it passed pipit_pack_key_check() (type, range, enum). A call works on a copy and commits
 * only when every write succeeded, so a refused call changes nothing; `data` is built from
 * exactly the keys written. The contract is docs/pack.md and docs/toolspec.md ("Effects").
 */
#include "pack.h"

#include "strbuf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pack_device {
    struct device_ops ops; /* per instance: the words come from the declaration */
    const struct pipit_toolset *ts;
    const struct pipit_pack *pk;
    struct device_key_words *words; /* n_keys entries, copied from the declaration */
    json_t *state;                  /* owned object, declared keys in declared order */
};

/* ============================================================================
 * values and messages */

/* "20", "22.5", "-1" (no trailing zeros, no exponent for everyday numbers). */
static void format_num(char *buf, size_t size, double v) {
    if (isfinite(v) && floor(v) == v && fabs(v) < 1e15) {
        pipit_format(buf, size, "%.0f", v);
    } else {
        pipit_format(buf, size, "%.10g", v);
    }
}

/* How a sentence names a key: its declared noun, else "the" and the key's words. */
static void key_noun(const struct pipit_pack_key *k, char *buf, size_t size) {
    if (k->words.noun != NULL) {
        pipit_format(buf, size, "%s", k->words.noun);
        return;
    }
    pipit_format(buf, size, "the %s", k->key);
    for (char *p = buf; *p != '\0'; p++) {
        *p = *p == '_' ? ' ' : *p;
    }
}

/* One number with the key's unit: "10 degrees", "2x", "50%". */
static void with_unit(const struct pipit_pack_key *k, double v, char *buf, size_t size) {
    char num[64];
    format_num(num, sizeof(num), v);
    pipit_format(buf, size, "%s%s", num, k->words.unit != NULL ? k->words.unit : "");
}

/* The refusal of a number outside the key's range: code "<key>_out_of_range", a message that
 * names the range ("the thermostat goes from 10 to 30 degrees"). */
static void refuse_range(const struct pipit_pack_key *k, double asked, struct device_result *r) {
    char noun[96], lo[64], hi[64], want[64], code[sizeof(r->code)];
    key_noun(k, noun, sizeof(noun));
    with_unit(k, asked, want, sizeof(want));
    pipit_format(code, sizeof(code), "%s_out_of_range", k->key);
    if (k->has_min && k->has_max) {
        /* the unit once when it is a word (" degrees"), on both ends when it sticks ("x") */
        bool word = k->words.unit != NULL && k->words.unit[0] == ' ';
        char lo_num[64];
        format_num(lo_num, sizeof(lo_num), k->min);
        with_unit(k, k->min, lo, sizeof(lo));
        with_unit(k, k->max, hi, sizeof(hi));
        device_result_fail(r, code, "%s goes from %s to %s, not %s", noun, word ? lo_num : lo, hi,
                           want);
    } else if (k->has_min) {
        with_unit(k, k->min, lo, sizeof(lo));
        device_result_fail(r, code, "%s can't go below %s, not %s", noun, lo, want);
    } else {
        with_unit(k, k->max, hi, sizeof(hi));
        device_result_fail(r, code, "%s can't go above %s, not %s", noun, hi, want);
    }
}

/* The value `ev` gives for these arguments (borrowed), NULL when its argument is absent. */
static const json_t *effect_value(const struct pipit_effect_value *ev, const json_t *args) {
    if (ev->arg == NULL) {
        return ev->constant;
    }
    const json_t *a = json_object_get(args, ev->arg);
    if (a == NULL || ev->map == NULL) {
        return a;
    }
    return json_is_string(a) ? json_object_get(ev->map, json_string_value(a)) : NULL;
}

/* The declared key an effect key names for these arguments, NULL when it cannot (the
 * placeholder's argument absent or not a string: arguments were validated, so not reached). */
static const struct pipit_pack_key *
effect_target(const struct pipit_pack *pk, const struct pipit_effect_key *ek, const json_t *args) {
    if (ek->key_arg == NULL) {
        return pipit_pack_find_key(pk, ek->key);
    }
    const json_t *a = json_object_get(args, ek->key_arg);
    if (!json_is_string(a)) {
        return NULL;
    }
    char name[256];
    pipit_format(name, sizeof(name), "%.*s%s%s", (int)ek->prefix_len, ek->key, json_string_value(a),
                 ek->suffix);
    return pipit_pack_find_key(pk, name);
}

/* A copy of `v` in the key's representation: reals for number keys. New reference. */
static json_t *stored(const struct pipit_pack_key *k, const json_t *v) {
    if (k->type == PIPIT_SCHEMA_NUMBER) {
        return json_real(json_number_value(v));
    }
    if (k->type == PIPIT_SCHEMA_INTEGER) {
        return json_integer((json_int_t)json_number_value(v));
    }
    return json_deep_copy(v);
}

/* Write `v` to key `k` in `next` and `data`, or refuse. */
static bool write_key(const struct pipit_pack_key *k,
                      const json_t *v,
                      json_t *next,
                      json_t *data,
                      struct device_result *r) {
    char why[256];
    if (!pipit_pack_key_check(k, v, why, sizeof(why))) {
        if ((k->type == PIPIT_SCHEMA_NUMBER || k->type == PIPIT_SCHEMA_INTEGER) &&
            json_is_number(v) && isfinite(json_number_value(v))) {
            refuse_range(k, json_number_value(v), r);
        } else {
            device_result_fail(r, "invalid_argument", "%s: %s", k->key, why);
        }
        return false;
    }
    json_t *a = stored(k, v);
    json_t *b = stored(k, v);
    bool ok = a != NULL && b != NULL && json_object_set_new(next, k->key, a) == 0 &&
              json_object_set_new(data, k->key, b) == 0;
    if (!ok) {
        device_result_fail(r, "out_of_memory", "out of memory");
    }
    return ok;
}

/* ============================================================================
 * device operations */

static enum pipit_status
pack_call(void *self, const char *tool, const json_t *args, struct device_result *r) {
    struct pack_device *d = self;
    const struct pipit_toolset *ts = d != NULL ? d->ts : NULL;
    size_t index = 0;
    json_t *owned = NULL;
    enum pipit_status st = device_call_begin(
        d != NULL ? d->pk->name : "device", self, tool, ts != NULL ? (const void *)ts->tools : NULL,
        ts != NULL ? ts->n_tools : 0, sizeof(struct pipit_tool), &index, &args, &owned, r);
    if (st != PIPIT_OK) {
        return st;
    }
    const struct pipit_tool *t = &ts->tools[index];
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, index);
    if (pipit_toolset_is_cloud(ts, index)) {
        char name[96];
        device_describe_string(tool, name, sizeof(name));
        device_result_fail(r, "unknown_tool", "the %s does not run %s: the cloud does", d->pk->name,
                           name);
        json_decref(owned);
        return PIPIT_ERR_UNKNOWN_TOOL;
    }
    struct pipit_arg_problem prob;
    size_t n_prob = 0;
    if (pipit_tool_check_args(t, args, &prob, 1, &n_prob) != PIPIT_OK) {
        device_result_fail(r, "invalid_argument", "%s: %s", n_prob > 0 ? prob.path : "args",
                           n_prob > 0 ? prob.message : "invalid");
        json_decref(owned);
        return PIPIT_OK;
    }
    /* an omitted argument with a schema "default" acts with its default ("louder" without an
     * amount steps by the amount's default), as the sentence already says it */
    json_t *full = pipit_tool_args_with_defaults(t, args);
    if (full != NULL) {
        json_decref(owned);
        owned = full;
        args = full;
    }
    json_t *next = json_deep_copy(d->state);
    json_t *data = json_object();
    bool ok = next != NULL && data != NULL;
    if (!ok) {
        json_decref(next);
        json_decref(data);
        json_decref(owned);
        memset(r, 0, sizeof(*r));
        return PIPIT_ERR_NOMEM;
    }
    for (size_t i = 0; ok && tp != NULL && i < tp->n_set; i++) {
        const struct pipit_effect_set *es = &tp->set[i];
        const json_t *v = effect_value(&es->value, args);
        const struct pipit_pack_key *k = effect_target(d->pk, &es->key, args);
        if (v == NULL || k == NULL) {
            continue; /* an absent optional argument without a default writes nothing */
        }
        ok = write_key(k, v, next, data, r);
    }
    if (ok && tp != NULL && tp->has_step) {
        const json_t *by = effect_value(&tp->step.by, args);
        const json_t *sign = tp->step.sign.arg != NULL || tp->step.sign.constant != NULL
                                 ? effect_value(&tp->step.sign, args)
                                 : NULL;
        const struct pipit_pack_key *k = effect_target(d->pk, &tp->step.key, args);
        bool has_sign = tp->step.sign.arg != NULL || tp->step.sign.constant != NULL;
        double delta = by != NULL && (!has_sign || sign != NULL)
                           ? json_number_value(by) * (has_sign ? json_number_value(sign) : 1.0)
                           : 0.0;
        if (k != NULL && delta != 0.0) { /* a step of 0 writes nothing */
            double now = json_number_value(json_object_get(next, k->key));
            json_t *v = json_real(now + delta);
            ok = v != NULL && write_key(k, v, next, data, r);
            if (v == NULL) {
                device_result_fail(r, "out_of_memory", "out of memory");
            }
            json_decref(v);
        }
    }
    json_decref(owned);
    if (!ok) {
        json_decref(next);
        json_decref(data);
        return PIPIT_OK; /* r says why; the state is unchanged */
    }
    json_decref(d->state);
    d->state = next;
    r->ok = true;
    r->data = data;
    r->code[0] = '\0';
    r->message[0] = '\0';
    return PIPIT_OK;
}

static json_t *pack_get_state(const void *self) {
    const struct pack_device *d = self;
    return d != NULL ? json_deep_copy(d->state) : NULL;
}

static enum pipit_status
pack_set_state(void *self, const json_t *overrides, struct pipit_error *err) {
    struct pack_device *d = self;
    if (d == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "device: no device");
    }
    if (!json_is_object(overrides)) {
        return pipit_error_set(err, PIPIT_ERR_JSON, "%s: the state to set must be an object",
                               d->pk->name);
    }
    const char *key;
    json_t *v;
    char why[256], val[96];
    json_object_foreach((json_t *)overrides, key, v) {
        const struct pipit_pack_key *k = pipit_pack_find_key(d->pk, key);
        if (k == NULL) {
            device_describe_string(key, val, sizeof(val));
            char keys[512] = "";
            size_t used = 0;
            for (size_t i = 0; i < d->pk->n_keys && used + 4 < sizeof(keys); i++) {
                pipit_format(keys + used, sizeof(keys) - used, "%s%s", i > 0 ? ", " : "",
                             d->pk->keys[i].key);
                used = strlen(keys);
            }
            return pipit_error_set(err, PIPIT_ERR_JSON, "%s: unknown state key %s (declared: %s)",
                                   d->pk->name, val, keys);
        }
        if (!pipit_pack_key_check(k, v, why, sizeof(why))) {
            device_describe_json(v, val, sizeof(val));
            return pipit_error_set(err, PIPIT_ERR_JSON, "%s: %s cannot be %s: %s", d->pk->name, key,
                                   val, why);
        }
    }
    json_t *next = json_deep_copy(d->state);
    bool ok = next != NULL;
    json_object_foreach((json_t *)overrides, key, v) {
        json_t *s = ok ? stored(pipit_pack_find_key(d->pk, key), v) : NULL;
        ok = s != NULL && json_object_set_new(next, key, s) == 0;
    }
    if (!ok) {
        json_decref(next);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "%s: out of memory", d->pk->name);
    }
    json_decref(d->state);
    d->state = next;
    return PIPIT_OK;
}

/* "label=value" for every shown key, in declared order: booleans on/off, numbers without
 * trailing zeros, arrays joined with ',' ("none" when empty). */
static void pack_state_line(const void *self, char *buf, size_t size) {
    if (buf == NULL || size == 0) {
        return;
    }
    buf[0] = '\0';
    const struct pack_device *d = self;
    if (d == NULL) {
        return;
    }
    struct strbuf b = {0};
    char num[64];
    for (size_t i = 0; i < d->pk->n_keys; i++) {
        const struct pipit_pack_key *k = &d->pk->keys[i];
        if (k->show == NULL) {
            continue;
        }
        const json_t *v = json_object_get(d->state, k->key);
        if (b.len > 0) {
            strbuf_str(&b, " ");
        }
        strbuf_str(&b, k->show);
        strbuf_str(&b, "=");
        if (json_is_boolean(v)) {
            strbuf_str(&b, json_is_true(v) ? "on" : "off");
        } else if (json_is_number(v)) {
            format_num(num, sizeof(num), json_number_value(v));
            strbuf_str(&b, num);
        } else if (json_is_string(v)) {
            strbuf_str(&b, json_string_value(v));
        } else if (json_is_array(v)) {
            for (size_t j = 0; j < json_array_size(v); j++) {
                strbuf_str(&b, j > 0 ? "," : "");
                strbuf_str(&b, json_string_value(json_array_get(v, j)));
            }
            strbuf_str(&b, json_array_size(v) == 0 ? "none" : "");
        }
    }
    pipit_format(buf, size, "%s", b.data != NULL ? b.data : "");
    free(b.data);
}

static void pack_destroy(void *self) {
    struct pack_device *d = self;
    if (d == NULL) {
        return;
    }
    json_decref(d->state);
    free(d->words);
    free(d);
}

/* ============================================================================
 * creation */

enum pipit_status
pack_device_new(const struct pipit_toolset *ts, struct device *out, struct pipit_error *err) {
    if (out == NULL || ts == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "device: no tool set or no output");
    }
    out->ops = NULL;
    out->self = NULL;
    const struct pipit_pack *pk = pipit_toolset_pack(ts);
    if (pk == NULL || pk->n_keys == 0) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "%s: no declared state: the generic device needs a pack with "
                               "\"pipit\": {\"state\": ...} (docs/toolspec.md, Packs)",
                               ts->name);
    }
    struct pack_device *d = calloc(1, sizeof(*d));
    json_t *state = json_object();
    if (d == NULL || state == NULL) {
        free(d);
        json_decref(state);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "device: out of memory");
    }
    d->ts = ts;
    d->pk = pk;
    d->state = state;
    d->words = calloc(pk->n_keys, sizeof(*d->words));
    bool ok = d->words != NULL;
    for (size_t i = 0; ok && i < pk->n_keys; i++) {
        d->words[i] = pk->keys[i].words;
        json_t *v = stored(&pk->keys[i], pk->keys[i].initial);
        ok = v != NULL && json_object_set_new(state, pk->keys[i].key, v) == 0;
    }
    if (!ok) {
        pack_destroy(d);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "device: out of memory");
    }
    d->ops.name = pk->name;
    d->ops.destroy = pack_destroy;
    d->ops.call = pack_call;
    d->ops.get_state = pack_get_state;
    d->ops.set_state = pack_set_state;
    d->ops.state_line = pack_state_line;
    d->ops.words = d->words;
    d->ops.n_words = pk->n_keys;
    out->ops = &d->ops;
    out->self = d;
    return PIPIT_OK;
}

enum pipit_status pipit_device_from_pack(const struct pipit_toolset *tools,
                                         const char *init_json,
                                         struct pipit_device **out,
                                         struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "device: NULL out");
    }
    *out = NULL;
    if (tools == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "device: the pack device needs a tool set");
    }
    struct device dev;
    memset(&dev, 0, sizeof(dev));
    enum pipit_status st = pack_device_new(tools, &dev, err);
    if (st != PIPIT_OK) {
        return st;
    }
    return device_handle_new(&dev, pipit_toolset_pack(tools)->name, init_json, out, err);
}
