/*
 * camera.c - a simulated phone camera behind the generic device interface.
 *
 * The state is a typed C struct (enums for every string-valued key); JSON
 * exists only at the boundary: tool arguments in, `data` and get_state() out,
 * set_state() overrides in. The contract (keys, defaults, tools, reason codes)
 * is docs/camera.md.
 *
 * Ranges and enums come from the tool set the camera is created with (struct
 * camera_spec): a pack's declared state key, else the tool argument's schema, else the
 * camera's built-in value (only for a tool set that says nothing about it). What a
 * declaration cannot say stays here: the front lens's zoom range, no flash on the front
 * camera, settings locked while recording, the AE/AF lock blocking focus, the counters.
 *
 * Invariants:
 * - The state is always inside its domain (zoom inside the current lens's
 *   range, focus, exposure and JPEG quality inside the spec's ranges, the timer
 *   one of the spec's values, counters in 0..CAMERA_COUNTER_MAX); a failed call,
 *   and a rejected set_state, change nothing.
 * - A tool works on a copy of the state and marks the keys it changes; the
 *   copy is committed only after the whole call succeeded and its `data`
 *   (exactly the marked keys) was built. So `data` can never disagree with the
 *   state, and an allocation failure leaves the state unchanged.
 * - Checks run in one order for every tool: unknown tool, arguments not an
 *   object, permission, argument values (invalid_argument), then the device's
 *   own constraints (ranges, recording, locks).
 */
#include "camera.h"

#include "toolspec.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================================
 * typed state */

enum camera_flash {
    CAMERA_FLASH_OFF,
    CAMERA_FLASH_ON,
    CAMERA_FLASH_AUTO,
    CAMERA_FLASH_COUNT,
};

enum camera_facing {
    CAMERA_FACING_FRONT,
    CAMERA_FACING_BACK,
    CAMERA_FACING_COUNT,
};

enum camera_record_action {
    CAMERA_RECORD_START,
    CAMERA_RECORD_STOP,
    CAMERA_RECORD_COUNT,
};

enum camera_zoom_direction {
    CAMERA_ZOOM_IN,
    CAMERA_ZOOM_OUT,
    CAMERA_ZOOM_COUNT,
};

/* The JSON spelling of each value the camera gives a behaviour to, indexed by the enum. A tool
 * set may allow fewer of them (its enums), never others. */
static const char *const FLASH_NAMES[CAMERA_FLASH_COUNT] = {"off", "on", "auto"};
static const char *const FACING_NAMES[CAMERA_FACING_COUNT] = {"front", "back"};
static const char *const RECORD_NAMES[CAMERA_RECORD_COUNT] = {"start", "stop"};
static const char *const DIRECTION_NAMES[CAMERA_ZOOM_COUNT] = {"in", "out"};

/* What a declaration cannot say: the front lens's zoom range (the spec's zoom range is the
 * back lens's), and the counters' capacity. */
#define CAMERA_ZOOM_FRONT_MIN 1.0
#define CAMERA_ZOOM_FRONT_MAX 3.0
#define CAMERA_COUNTER_MAX    1000000000 /* photos/videos: "storage full" beyond this */

#define CAMERA_MAX_VALUES 24 /* values of one enum (a mask bit each) */
#define CAMERA_VALUE_SIZE 32 /* bytes of one enum value, with the NUL */

/* The values of an enum without behaviour (white balance, aspect ratio, priority, scene): the
 * state holds an index into them. */
struct camera_names {
    int n;
    char text[CAMERA_MAX_VALUES][CAMERA_VALUE_SIZE];
    const char *v[CAMERA_MAX_VALUES]; /* v[i] == text[i] */
};

/* The ranges and enums the camera takes from its tool set (camera_spec_init()). */
struct camera_spec {
    double zoom_min, zoom_max; /* the back lens */
    double zoom_step;          /* one adjust_zoom step */
    double focus_min, focus_max;
    double ev_min, ev_max;
    int64_t jpeg_min, jpeg_max;
    int n_timer;
    int64_t timer[CAMERA_MAX_VALUES];
    char timer_text[160]; /* "0, 3, 5 or 10" */
    struct camera_names wb, aspect, priority, scene;
    uint32_t flash_ok, facing_ok, record_ok, direction_ok; /* allowed values, bit = enum */
};

struct camera_state {
    double zoom; /* magnification, inside the current lens's range */
    enum camera_flash flash;
    double focus_x;     /* focus point, 0 (left) .. 1 (right) */
    double focus_y;     /* focus point, 0 (top) .. 1 (bottom) */
    bool ae_af_locked;  /* exposure and focus locked: tap_to_focus refused */
    double exposure_ev; /* exposure compensation in EV, -2 .. 2 */
    int white_balance;  /* indices into the spec's names */
    int32_t timer_s;    /* self-timer in seconds: one of the spec's values */
    int aspect_ratio;
    int quality_priority;
    int scene_mode;
    int32_t jpeg_quality; /* inside the spec's range */
    bool grid;
    bool horizon_level;
    enum camera_facing facing;
    bool recording;          /* a video is being recorded */
    int64_t photos_taken;    /* 0 .. CAMERA_COUNTER_MAX */
    int64_t videos_recorded; /* 0 .. CAMERA_COUNTER_MAX */
    bool permission;         /* false: the app may not use the camera, every tool fails */
};

struct camera {
    struct camera_state state;
    struct camera_spec spec;
};

/* The index of `name` in `names`, else 0 (a default the spec does not list: its first). */
static int names_index(const struct camera_names *names, const char *name) {
    for (int i = 0; i < names->n; i++) {
        if (strcmp(names->v[i], name) == 0) {
            return i;
        }
    }
    return 0;
}

static struct camera_state camera_default_state(const struct camera_spec *sp) {
    struct camera_state s = {
        .zoom = 1.0,
        .flash = CAMERA_FLASH_OFF,
        .focus_x = 0.5,
        .focus_y = 0.5,
        .ae_af_locked = false,
        .exposure_ev = 0.0,
        .white_balance = names_index(&sp->wb, "auto"),
        .timer_s = 0,
        .aspect_ratio = names_index(&sp->aspect, "4:3"),
        .quality_priority = names_index(&sp->priority, "quality"),
        .scene_mode = names_index(&sp->scene, "auto"),
        .jpeg_quality = 95,
        .grid = false,
        .horizon_level = false,
        .facing = CAMERA_FACING_BACK,
        .recording = false,
        .photos_taken = 0,
        .videos_recorded = 0,
        .permission = true,
    };
    return s;
}

static void
lens_zoom_range(const struct camera_spec *sp, enum camera_facing facing, double *min, double *max) {
    if (facing == CAMERA_FACING_FRONT) {
        *min = CAMERA_ZOOM_FRONT_MIN;
        *max = CAMERA_ZOOM_FRONT_MAX;
    } else {
        *min = sp->zoom_min;
        *max = sp->zoom_max;
    }
}

/* "the back camera zooms from 0.5x to 10x" */
static void zoom_range_message(const struct camera_spec *sp,
                               enum camera_facing facing,
                               char *buf,
                               size_t size) {
    double min, max;
    lens_zoom_range(sp, facing, &min, &max);
    pipit_format(buf, size, "the %s camera zooms from %gx to %gx", FACING_NAMES[facing], min, max);
}

/* ============================================================================
 * state keys: the JSON names and conversions */

enum camera_key {
    KEY_ZOOM,
    KEY_FLASH,
    KEY_FOCUS_X,
    KEY_FOCUS_Y,
    KEY_AE_AF_LOCKED,
    KEY_EXPOSURE_EV,
    KEY_WHITE_BALANCE,
    KEY_TIMER_S,
    KEY_ASPECT_RATIO,
    KEY_QUALITY_PRIORITY,
    KEY_SCENE_MODE,
    KEY_JPEG_QUALITY,
    KEY_GRID,
    KEY_HORIZON_LEVEL,
    KEY_FACING,
    KEY_RECORDING,
    KEY_PHOTOS_TAKEN,
    KEY_VIDEOS_RECORDED,
    KEY_PERMISSION,
    KEY_COUNT,
};

static const char *const KEY_NAMES[KEY_COUNT] = {
    [KEY_ZOOM] = "zoom",
    [KEY_FLASH] = "flash",
    [KEY_FOCUS_X] = "focus_x",
    [KEY_FOCUS_Y] = "focus_y",
    [KEY_AE_AF_LOCKED] = "ae_af_locked",
    [KEY_EXPOSURE_EV] = "exposure_ev",
    [KEY_WHITE_BALANCE] = "white_balance",
    [KEY_TIMER_S] = "timer_s",
    [KEY_ASPECT_RATIO] = "aspect_ratio",
    [KEY_QUALITY_PRIORITY] = "quality_priority",
    [KEY_SCENE_MODE] = "scene_mode",
    [KEY_JPEG_QUALITY] = "jpeg_quality",
    [KEY_GRID] = "grid",
    [KEY_HORIZON_LEVEL] = "horizon_level",
    [KEY_FACING] = "facing",
    [KEY_RECORDING] = "recording",
    [KEY_PHOTOS_TAKEN] = "photos_taken",
    [KEY_VIDEOS_RECORDED] = "videos_recorded",
    [KEY_PERMISSION] = "permission",
};

static int key_find(const char *name) {
    for (int k = 0; k < KEY_COUNT; k++) {
        if (strcmp(KEY_NAMES[k], name) == 0) {
            return k;
        }
    }
    return -1;
}

/* The value of one key as a new JSON reference (NULL on allocation failure). */
static json_t *
key_to_json(const struct camera_spec *sp, const struct camera_state *s, enum camera_key k) {
    switch (k) {
        case KEY_ZOOM:
            return json_real(s->zoom);
        case KEY_FLASH:
            return json_string(FLASH_NAMES[s->flash]);
        case KEY_FOCUS_X:
            return json_real(s->focus_x);
        case KEY_FOCUS_Y:
            return json_real(s->focus_y);
        case KEY_AE_AF_LOCKED:
            return json_boolean(s->ae_af_locked);
        case KEY_EXPOSURE_EV:
            return json_real(s->exposure_ev);
        case KEY_WHITE_BALANCE:
            return json_string(sp->wb.v[s->white_balance]);
        case KEY_TIMER_S:
            return json_integer(s->timer_s);
        case KEY_ASPECT_RATIO:
            return json_string(sp->aspect.v[s->aspect_ratio]);
        case KEY_QUALITY_PRIORITY:
            return json_string(sp->priority.v[s->quality_priority]);
        case KEY_SCENE_MODE:
            return json_string(sp->scene.v[s->scene_mode]);
        case KEY_JPEG_QUALITY:
            return json_integer(s->jpeg_quality);
        case KEY_GRID:
            return json_boolean(s->grid);
        case KEY_HORIZON_LEVEL:
            return json_boolean(s->horizon_level);
        case KEY_FACING:
            return json_string(FACING_NAMES[s->facing]);
        case KEY_RECORDING:
            return json_boolean(s->recording);
        case KEY_PHOTOS_TAKEN:
            return json_integer((json_int_t)s->photos_taken);
        case KEY_VIDEOS_RECORDED:
            return json_integer((json_int_t)s->videos_recorded);
        case KEY_PERMISSION:
            return json_boolean(s->permission);
        case KEY_COUNT:
            break;
    }
    return NULL;
}

/* Object of the keys whose bit is set in `mask`, from `s`. NULL on allocation
 * failure. */
static json_t *
keys_to_json(const struct camera_spec *sp, const struct camera_state *s, uint32_t mask) {
    json_t *obj = json_object();
    if (obj == NULL) {
        return NULL;
    }
    for (int k = 0; k < KEY_COUNT; k++) {
        if ((mask & (UINT32_C(1) << k)) == 0) {
            continue;
        }
        /* json_object_set_new() takes the value even when it fails; NULL fails */
        if (json_object_set_new(obj, KEY_NAMES[k], key_to_json(sp, s, (enum camera_key)k)) != 0) {
            json_decref(obj);
            return NULL;
        }
    }
    return obj;
}

#define ALL_KEYS ((UINT32_C(1) << KEY_COUNT) - 1)

/* ============================================================================
 * reading JSON values (shared by tool arguments and state overrides) */

/* A finite number, JSON integer or real. -0 becomes 0. */
static bool json_get_real(const json_t *v, double *out) {
    if (!json_is_number(v)) {
        return false;
    }
    double x = json_number_value(v);
    if (!isfinite(x)) {
        return false;
    }
    *out = x == 0.0 ? 0.0 : x;
    return true;
}

/* An integer: a JSON integer, or a real with an integral value (models write
 * 5.0). Reals are range-checked before the conversion (no UB on 1e300). */
static bool json_get_int(const json_t *v, int64_t *out) {
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double x = json_real_value(v);
        if (isfinite(x) && x == floor(x) && fabs(x) <= 9007199254740992.0) {
            *out = (int64_t)x;
            return true;
        }
    }
    return false;
}

static bool json_get_bool(const json_t *v, bool *out) {
    if (!json_is_boolean(v)) {
        return false;
    }
    *out = json_is_true(v);
    return true;
}

/* Index of the string `v` in `names`, -1 when `v` is not one of them. */
static int json_get_enum(const json_t *v, const char *const *names, int n) {
    if (!json_is_string(v)) {
        return -1;
    }
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    for (int i = 0; i < n; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0) {
            return i;
        }
    }
    return -1;
}

/* json_get_enum() of the values allowed by `ok` (bit i: names[i]). */
static int json_get_allowed(const json_t *v, const char *const *names, int n, uint32_t ok) {
    int e = json_get_enum(v, names, n);
    return e >= 0 && (ok & (UINT32_C(1) << e)) != 0 ? e : -1;
}

/* "\"off\", \"on\" or \"auto\"": the names allowed by `ok` */
static void join_names(const char *const *names, int n, uint32_t ok, char *buf, size_t size) {
    size_t used = 0;
    int left = 0;
    for (int i = 0; i < n; i++) {
        left += (ok & (UINT32_C(1) << i)) != 0;
    }
    buf[0] = '\0';
    for (int i = 0, k = 0; i < n && used < size; i++) {
        if ((ok & (UINT32_C(1) << i)) == 0) {
            continue;
        }
        const char *sep = k == 0 ? "" : (k == left - 1 ? " or " : ", ");
        pipit_format(buf + used, size - used, "%s\"%s\"", sep, names[i]);
        used += strlen(buf + used);
        k++;
    }
}

#define ALL_OF(n) ((UINT32_C(1) << (n)) - 1)

static void join_spec_names(const struct camera_names *names, char *buf, size_t size) {
    join_names(names->v, names->n, ALL_OF(names->n), buf, size);
}

static bool timer_value_ok(const struct camera_spec *sp, int64_t seconds) {
    for (int i = 0; i < sp->n_timer; i++) {
        if (sp->timer[i] == seconds) {
            return true;
        }
    }
    return false;
}

/* ============================================================================
 * set_state */

/* What a key accepts, for error messages. */
static void
key_expectation(const struct camera_spec *sp, enum camera_key k, char *buf, size_t size) {
    switch (k) {
        case KEY_ZOOM:
            pipit_format(buf, size, "a number from %g to %g, or %g to %g on the front camera",
                         sp->zoom_min, sp->zoom_max, CAMERA_ZOOM_FRONT_MIN, CAMERA_ZOOM_FRONT_MAX);
            break;
        case KEY_FOCUS_X:
        case KEY_FOCUS_Y:
            pipit_format(buf, size, "a number from %g to %g", sp->focus_min, sp->focus_max);
            break;
        case KEY_EXPOSURE_EV:
            pipit_format(buf, size, "a number from %g to %g", sp->ev_min, sp->ev_max);
            break;
        case KEY_TIMER_S:
            pipit_format(buf, size, "%s", sp->timer_text);
            break;
        case KEY_JPEG_QUALITY:
            pipit_format(buf, size, "an integer from %lld to %lld", (long long)sp->jpeg_min,
                         (long long)sp->jpeg_max);
            break;
        case KEY_PHOTOS_TAKEN:
        case KEY_VIDEOS_RECORDED:
            pipit_format(buf, size, "an integer from 0 to %d", CAMERA_COUNTER_MAX);
            break;
        case KEY_AE_AF_LOCKED:
        case KEY_GRID:
        case KEY_HORIZON_LEVEL:
        case KEY_RECORDING:
        case KEY_PERMISSION:
            pipit_format(buf, size, "true or false");
            break;
        case KEY_FLASH:
            join_names(FLASH_NAMES, CAMERA_FLASH_COUNT, sp->flash_ok, buf, size);
            break;
        case KEY_WHITE_BALANCE:
            join_spec_names(&sp->wb, buf, size);
            break;
        case KEY_ASPECT_RATIO:
            join_spec_names(&sp->aspect, buf, size);
            break;
        case KEY_QUALITY_PRIORITY:
            join_spec_names(&sp->priority, buf, size);
            break;
        case KEY_SCENE_MODE:
            join_spec_names(&sp->scene, buf, size);
            break;
        case KEY_FACING:
            join_names(FACING_NAMES, CAMERA_FACING_COUNT, sp->facing_ok, buf, size);
            break;
        case KEY_COUNT:
            pipit_format(buf, size, "nothing");
            break;
    }
}

static bool real_in(const json_t *v, double min, double max, double *out) {
    double x;
    if (!json_get_real(v, &x) || x < min || x > max) {
        return false;
    }
    *out = x;
    return true;
}

static bool int_in(const json_t *v, int64_t min, int64_t max, int64_t *out) {
    int64_t x;
    if (!json_get_int(v, &x) || x < min || x > max) {
        return false;
    }
    *out = x;
    return true;
}

/* Store `v` into key `k` of `s` when it is inside the key's own domain (the
 * zoom's dependence on the lens is checked after all keys are in). */
static bool key_from_json(const struct camera_spec *sp,
                          struct camera_state *s,
                          enum camera_key k,
                          const json_t *v) {
    int64_t i = 0;
    int e = -1;
    switch (k) {
        case KEY_ZOOM: /* either lens's range; the lens's own is checked after */
            return real_in(v, fmin(sp->zoom_min, CAMERA_ZOOM_FRONT_MIN),
                           fmax(sp->zoom_max, CAMERA_ZOOM_FRONT_MAX), &s->zoom);
        case KEY_FOCUS_X:
            return real_in(v, sp->focus_min, sp->focus_max, &s->focus_x);
        case KEY_FOCUS_Y:
            return real_in(v, sp->focus_min, sp->focus_max, &s->focus_y);
        case KEY_EXPOSURE_EV:
            return real_in(v, sp->ev_min, sp->ev_max, &s->exposure_ev);
        case KEY_TIMER_S:
            if (!json_get_int(v, &i) || !timer_value_ok(sp, i)) {
                return false;
            }
            s->timer_s = (int32_t)i;
            return true;
        case KEY_JPEG_QUALITY:
            if (!int_in(v, sp->jpeg_min, sp->jpeg_max, &i)) {
                return false;
            }
            s->jpeg_quality = (int32_t)i;
            return true;
        case KEY_PHOTOS_TAKEN:
            return int_in(v, 0, CAMERA_COUNTER_MAX, &s->photos_taken);
        case KEY_VIDEOS_RECORDED:
            return int_in(v, 0, CAMERA_COUNTER_MAX, &s->videos_recorded);
        case KEY_AE_AF_LOCKED:
            return json_get_bool(v, &s->ae_af_locked);
        case KEY_GRID:
            return json_get_bool(v, &s->grid);
        case KEY_HORIZON_LEVEL:
            return json_get_bool(v, &s->horizon_level);
        case KEY_RECORDING:
            return json_get_bool(v, &s->recording);
        case KEY_PERMISSION:
            return json_get_bool(v, &s->permission);
        case KEY_FLASH:
            e = json_get_allowed(v, FLASH_NAMES, CAMERA_FLASH_COUNT, sp->flash_ok);
            if (e >= 0) {
                s->flash = (enum camera_flash)e;
            }
            return e >= 0;
        case KEY_WHITE_BALANCE:
            e = json_get_enum(v, sp->wb.v, sp->wb.n);
            s->white_balance = e >= 0 ? e : s->white_balance;
            return e >= 0;
        case KEY_ASPECT_RATIO:
            e = json_get_enum(v, sp->aspect.v, sp->aspect.n);
            s->aspect_ratio = e >= 0 ? e : s->aspect_ratio;
            return e >= 0;
        case KEY_QUALITY_PRIORITY:
            e = json_get_enum(v, sp->priority.v, sp->priority.n);
            s->quality_priority = e >= 0 ? e : s->quality_priority;
            return e >= 0;
        case KEY_SCENE_MODE:
            e = json_get_enum(v, sp->scene.v, sp->scene.n);
            s->scene_mode = e >= 0 ? e : s->scene_mode;
            return e >= 0;
        case KEY_FACING:
            e = json_get_allowed(v, FACING_NAMES, CAMERA_FACING_COUNT, sp->facing_ok);
            if (e >= 0) {
                s->facing = (enum camera_facing)e;
            }
            return e >= 0;
        case KEY_COUNT:
            break;
    }
    return false;
}

static enum pipit_status
camera_set_state(void *self, const json_t *overrides, struct pipit_error *err) {
    struct camera *cam = self;
    char value[96];
    char expect[160];
    if (cam == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "camera: set_state: NULL camera");
    }
    if (!json_is_object(overrides)) {
        device_describe_json(overrides, value, sizeof(value));
        return pipit_error_set(err, PIPIT_ERR_JSON, "camera: state overrides are not an object: %s",
                               value);
    }
    /* all-or-nothing: apply to a copy, commit only when every key is good */
    struct camera_state next = cam->state;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)overrides, key, v) {
        int k = key_find(key);
        if (k < 0) {
            device_describe_string(key, value, sizeof(value));
            return pipit_error_set(err, PIPIT_ERR_JSON, "camera: unknown state key: %s", value);
        }
        if (!key_from_json(&cam->spec, &next, (enum camera_key)k, v)) {
            device_describe_json(v, value, sizeof(value));
            key_expectation(&cam->spec, (enum camera_key)k, expect, sizeof(expect));
            return pipit_error_set(err, PIPIT_ERR_JSON,
                                   "camera: invalid state value: %s: %s (expected %s)",
                                   KEY_NAMES[k], value, expect);
        }
    }
    double min, max;
    lens_zoom_range(&cam->spec, next.facing, &min, &max);
    if (next.zoom < min || next.zoom > max) {
        zoom_range_message(&cam->spec, next.facing, expect, sizeof(expect));
        return pipit_error_set(err, PIPIT_ERR_JSON,
                               "camera: invalid state value: zoom: %g with facing \"%s\" (%s)",
                               next.zoom, FACING_NAMES[next.facing], expect);
    }
    cam->state = next;
    return PIPIT_OK;
}

static json_t *camera_get_state(const void *self) {
    const struct camera *cam = self;
    if (cam == NULL) {
        return NULL;
    }
    return keys_to_json(&cam->spec, &cam->state, ALL_KEYS);
}

/* ============================================================================
 * tools */

/* One call in progress: the tool works on `next` and marks in `changed` the
 * keys to report; the dispatcher commits `next` when the tool succeeds. */
struct camera_call {
    const struct camera_spec *spec;
    const json_t *args; /* an object */
    const struct camera_state *now;
    struct camera_state next;
    uint32_t changed;
    struct device_result *r;
};

static void mark(struct camera_call *c, enum camera_key k) {
    c->changed |= UINT32_C(1) << k;
}

/* Fail the call with invalid_argument, naming the argument and its value. */
static bool bad_arg(struct camera_call *c, const char *name, const json_t *v, const char *expect) {
    char value[96];
    if (v == NULL) {
        device_result_fail(c->r, "invalid_argument", "argument \"%s\" is missing", name);
    } else {
        device_describe_json(v, value, sizeof(value));
        device_result_fail(c->r, "invalid_argument", "argument \"%s\" must be %s, got %s", name,
                           expect, value);
    }
    return false;
}

static bool arg_real(struct camera_call *c, const char *name, double *out) {
    const json_t *v = json_object_get(c->args, name);
    if (!json_get_real(v, out)) {
        return bad_arg(c, name, v, "a number");
    }
    return true;
}

static bool arg_bool(struct camera_call *c, const char *name, bool *out) {
    const json_t *v = json_object_get(c->args, name);
    if (!json_get_bool(v, out)) {
        return bad_arg(c, name, v, "true or false");
    }
    return true;
}

/* An argument naming one of `names` that `ok` allows (bit i: names[i]). */
static bool arg_enum(struct camera_call *c,
                     const char *name,
                     const char *const *names,
                     int n,
                     uint32_t ok,
                     int *out) {
    const json_t *v = json_object_get(c->args, name);
    *out = json_get_allowed(v, names, n, ok);
    if (*out < 0) {
        char expect[600];
        join_names(names, n, ok, expect, sizeof(expect));
        return bad_arg(c, name, v, expect);
    }
    return true;
}

/* An argument naming one of the spec's values of an enum without behaviour. */
static bool
arg_spec_enum(struct camera_call *c, const char *name, const struct camera_names *n, int *out) {
    return arg_enum(c, name, n->v, n->n, ALL_OF(n->n), out);
}

static bool busy_recording(struct camera_call *c, const char *what) {
    device_result_fail(c->r, "busy_recording", "%s while recording", what);
    return false;
}

static bool tool_take_photo(struct camera_call *c) {
    if (c->now->photos_taken >= CAMERA_COUNTER_MAX) {
        device_result_fail(c->r, "storage_full", "the camera's storage is full");
        return false;
    }
    c->next.photos_taken++;
    mark(c, KEY_PHOTOS_TAKEN);
    return true;
}

static bool tool_record_video(struct camera_call *c) {
    int action;
    if (!arg_enum(c, "action", RECORD_NAMES, CAMERA_RECORD_COUNT, c->spec->record_ok, &action)) {
        return false;
    }
    if (action == CAMERA_RECORD_START) {
        if (c->now->recording) {
            device_result_fail(c->r, "already_recording", "a video is already recording");
            return false;
        }
        if (c->now->videos_recorded >= CAMERA_COUNTER_MAX) {
            device_result_fail(c->r, "storage_full", "the camera's storage is full");
            return false;
        }
        c->next.recording = true;
        mark(c, KEY_RECORDING);
        return true;
    }
    if (!c->now->recording) {
        device_result_fail(c->r, "not_recording", "no video is recording");
        return false;
    }
    c->next.recording = false;
    if (c->next.videos_recorded < CAMERA_COUNTER_MAX) {
        c->next.videos_recorded++;
    }
    mark(c, KEY_RECORDING);
    mark(c, KEY_VIDEOS_RECORDED);
    return true;
}

static bool tool_set_zoom(struct camera_call *c) {
    double level, min, max;
    if (!arg_real(c, "level", &level)) {
        return false;
    }
    lens_zoom_range(c->spec, c->now->facing, &min, &max);
    if (level < min || level > max) {
        char msg[128];
        zoom_range_message(c->spec, c->now->facing, msg, sizeof(msg));
        device_result_fail(c->r, "zoom_out_of_range", "%s", msg);
        return false;
    }
    c->next.zoom = level;
    mark(c, KEY_ZOOM);
    return true;
}

static bool tool_adjust_zoom(struct camera_call *c) {
    int direction;
    double min, max;
    if (!arg_enum(c, "direction", DIRECTION_NAMES, CAMERA_ZOOM_COUNT, c->spec->direction_ok,
                  &direction)) {
        return false;
    }
    lens_zoom_range(c->spec, c->now->facing, &min, &max);
    double step = c->spec->zoom_step;
    double z = c->now->zoom + (direction == CAMERA_ZOOM_IN ? step : -step);
    c->next.zoom = z < min ? min : (z > max ? max : z);
    mark(c, KEY_ZOOM);
    return true;
}

static bool tool_set_flash(struct camera_call *c) {
    int mode;
    if (!arg_enum(c, "mode", FLASH_NAMES, CAMERA_FLASH_COUNT, c->spec->flash_ok, &mode)) {
        return false;
    }
    if (c->now->facing == CAMERA_FACING_FRONT && mode != CAMERA_FLASH_OFF) {
        device_result_fail(c->r, "no_flash_on_front_camera", "the front camera has no flash");
        return false;
    }
    if (c->now->recording && mode != (int)c->now->flash) {
        device_result_fail(c->r, "flash_unavailable_while_recording",
                           "the flash can't be changed while recording");
        return false;
    }
    c->next.flash = (enum camera_flash)mode;
    mark(c, KEY_FLASH);
    return true;
}

static bool tool_tap_to_focus(struct camera_call *c) {
    const char *names[2] = {"x", "y"};
    double xy[2];
    for (int i = 0; i < 2; i++) {
        const json_t *v = json_object_get(c->args, names[i]);
        if (!real_in(v, c->spec->focus_min, c->spec->focus_max, &xy[i])) {
            char expect[64];
            pipit_format(expect, sizeof(expect), "a number from %g to %g", c->spec->focus_min,
                         c->spec->focus_max);
            return bad_arg(c, names[i], v, expect);
        }
    }
    if (c->now->ae_af_locked) {
        device_result_fail(c->r, "ae_af_locked",
                           "focus is locked: the AE/AF lock has to be turned off first");
        return false;
    }
    c->next.focus_x = xy[0];
    c->next.focus_y = xy[1];
    mark(c, KEY_FOCUS_X);
    mark(c, KEY_FOCUS_Y);
    return true;
}

static bool tool_set_ae_af_lock(struct camera_call *c) {
    if (!arg_bool(c, "locked", &c->next.ae_af_locked)) {
        return false;
    }
    mark(c, KEY_AE_AF_LOCKED);
    return true;
}

static bool tool_set_exposure(struct camera_call *c) {
    double ev;
    if (!arg_real(c, "ev", &ev)) {
        return false;
    }
    if (ev < c->spec->ev_min || ev > c->spec->ev_max) {
        device_result_fail(c->r, "exposure_out_of_range", "exposure goes from %+g EV to %+g EV",
                           c->spec->ev_min, c->spec->ev_max);
        return false;
    }
    c->next.exposure_ev = ev;
    mark(c, KEY_EXPOSURE_EV);
    return true;
}

static bool tool_set_white_balance(struct camera_call *c) {
    int mode;
    if (!arg_spec_enum(c, "mode", &c->spec->wb, &mode)) {
        return false;
    }
    c->next.white_balance = mode;
    mark(c, KEY_WHITE_BALANCE);
    return true;
}

static bool tool_set_timer(struct camera_call *c) {
    const json_t *v = json_object_get(c->args, "seconds");
    int64_t seconds;
    if (!json_get_int(v, &seconds) || !timer_value_ok(c->spec, seconds)) {
        return bad_arg(c, "seconds", v, c->spec->timer_text);
    }
    c->next.timer_s = (int32_t)seconds;
    mark(c, KEY_TIMER_S);
    return true;
}

static bool tool_set_aspect_ratio(struct camera_call *c) {
    int ratio;
    if (!arg_spec_enum(c, "ratio", &c->spec->aspect, &ratio)) {
        return false;
    }
    if (c->now->recording && ratio != c->now->aspect_ratio) {
        return busy_recording(c, "the aspect ratio can't be changed");
    }
    c->next.aspect_ratio = ratio;
    mark(c, KEY_ASPECT_RATIO);
    return true;
}

static bool tool_set_quality_priority(struct camera_call *c) {
    int priority;
    if (!arg_spec_enum(c, "priority", &c->spec->priority, &priority)) {
        return false;
    }
    c->next.quality_priority = priority;
    mark(c, KEY_QUALITY_PRIORITY);
    return true;
}

static bool tool_set_scene_mode(struct camera_call *c) {
    int mode;
    if (!arg_spec_enum(c, "mode", &c->spec->scene, &mode)) {
        return false;
    }
    c->next.scene_mode = mode;
    mark(c, KEY_SCENE_MODE);
    return true;
}

static bool tool_set_jpeg_quality(struct camera_call *c) {
    const json_t *v = json_object_get(c->args, "quality");
    int64_t q;
    if (!int_in(v, c->spec->jpeg_min, c->spec->jpeg_max, &q)) {
        char expect[64];
        pipit_format(expect, sizeof(expect), "an integer from %lld to %lld",
                     (long long)c->spec->jpeg_min, (long long)c->spec->jpeg_max);
        return bad_arg(c, "quality", v, expect);
    }
    if (c->now->recording && q != c->now->jpeg_quality) {
        return busy_recording(c, "the JPEG quality can't be changed");
    }
    c->next.jpeg_quality = (int32_t)q;
    mark(c, KEY_JPEG_QUALITY);
    return true;
}

static bool tool_set_grid(struct camera_call *c) {
    if (!arg_bool(c, "enabled", &c->next.grid)) {
        return false;
    }
    mark(c, KEY_GRID);
    return true;
}

static bool tool_set_horizon_level(struct camera_call *c) {
    if (!arg_bool(c, "enabled", &c->next.horizon_level)) {
        return false;
    }
    mark(c, KEY_HORIZON_LEVEL);
    return true;
}

static bool tool_switch_camera(struct camera_call *c) {
    int facing;
    double min, max;
    if (!arg_enum(c, "facing", FACING_NAMES, CAMERA_FACING_COUNT, c->spec->facing_ok, &facing)) {
        return false;
    }
    if (c->now->recording && facing != (int)c->now->facing) {
        return busy_recording(c, "the camera can't be switched");
    }
    c->next.facing = (enum camera_facing)facing;
    mark(c, KEY_FACING);
    /* the new lens may not reach the current zoom: clamp and report it */
    lens_zoom_range(c->spec, c->next.facing, &min, &max);
    double z = c->now->zoom < min ? min : (c->now->zoom > max ? max : c->now->zoom);
    if (z != c->now->zoom) {
        c->next.zoom = z;
        mark(c, KEY_ZOOM);
    }
    return true;
}

struct camera_tool {
    const char *name;
    bool (*run)(struct camera_call *c);
};

static const struct camera_tool TOOLS[] = {
    {"take_photo", tool_take_photo},
    {"record_video", tool_record_video},
    {"set_zoom", tool_set_zoom},
    {"adjust_zoom", tool_adjust_zoom},
    {"set_flash", tool_set_flash},
    {"tap_to_focus", tool_tap_to_focus},
    {"set_ae_af_lock", tool_set_ae_af_lock},
    {"set_exposure", tool_set_exposure},
    {"set_white_balance", tool_set_white_balance},
    {"set_timer", tool_set_timer},
    {"set_aspect_ratio", tool_set_aspect_ratio},
    {"set_quality_priority", tool_set_quality_priority},
    {"set_scene_mode", tool_set_scene_mode},
    {"set_jpeg_quality", tool_set_jpeg_quality},
    {"set_grid", tool_set_grid},
    {"set_horizon_level", tool_set_horizon_level},
    {"switch_camera", tool_switch_camera},
};

static enum pipit_status
camera_call(void *self, const char *tool, const json_t *args, struct device_result *r) {
    struct camera *cam = self;
    size_t index = 0;
    json_t *empty = NULL;
    enum pipit_status st =
        device_call_begin("camera", cam, tool, TOOLS, sizeof(TOOLS) / sizeof(TOOLS[0]),
                          sizeof(TOOLS[0]), &index, &args, &empty, r);
    if (st != PIPIT_OK) {
        return st;
    }
    const struct camera_tool *t = &TOOLS[index];
    if (!cam->state.permission) {
        json_decref(empty);
        device_result_fail(r, "permission_denied", "the app is not allowed to use the camera");
        return PIPIT_OK;
    }
    struct camera_call c = {
        .spec = &cam->spec,
        .args = args,
        .now = &cam->state,
        .next = cam->state,
        .changed = 0,
        .r = r,
    };
    bool ok = t->run(&c);
    json_decref(empty);
    if (!ok) {
        return PIPIT_OK;
    }
    json_t *data = keys_to_json(&cam->spec, &c.next, c.changed);
    if (data == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    cam->state = c.next;
    r->ok = true;
    r->data = data;
    return PIPIT_OK;
}

/* ============================================================================
 * lifecycle */

static void camera_destroy(void *self) {
    free(self);
}

/* The prompt's state line (docs/prompt.md): what relative commands need. */
static void camera_state_line(const void *self, char *buf, size_t size) {
    if (buf == NULL || size == 0) {
        return;
    }
    if (self == NULL) {
        buf[0] = '\0';
        return;
    }
    const struct camera *cam = self;
    const struct camera_state *s = &cam->state;
    pipit_format(buf, size, "zoom=%g flash=%s facing=%s recording=%s timer=%d mode=%s", s->zoom,
                 FLASH_NAMES[s->flash], FACING_NAMES[s->facing], s->recording ? "yes" : "no",
                 (int)s->timer_s, cam->spec.scene.v[s->scene_mode]);
}

/* How people name the camera's state keys and how answers say their values (src/ask.h):
 * only what the tool set cannot say (its keys, tool names and enums are used already). */
static const struct device_key_words CAMERA_WORDS[] = {
    {.key = "zoom", .names = "zoom level|zoomed in|zoomed|magnification", .unit = "x"},
    {.key = "flash", .names = "flash mode"},
    {.key = "facing",
     .names = "camera|lens|camera facing|active camera",
     .pattern = "The {v} camera is active."},
    {.key = "recording",
     .names = "video|filming|recording video|video recording|rec",
     .yes = "It's recording.",
     .no = "It isn't recording."},
    {.key = "timer_s",
     .names = "self timer|countdown|timer delay",
     .unit = " seconds",
     .zero = "off"},
    {.key = "exposure_ev", .names = "exposure compensation|ev", .unit = " EV"},
    {.key = "ae_af_locked",
     .names = "ae af lock|ae af|exposure lock|focus lock|exposure and focus lock|exposure and "
              "focus|lock",
     .yes = "Exposure and focus are locked.",
     .no = "Exposure and focus aren't locked."},
    {.key = "white_balance",
     .names = "wb|colour temperature|color temperature|colour temp|color temp"},
    {.key = "aspect_ratio", .names = "ratio|aspect|format"},
    {.key = "quality_priority", .names = "priority"},
    {.key = "scene_mode", .names = "mode|scene"},
    {.key = "jpeg_quality", .names = "quality|jpeg", .noun = "the JPEG quality"},
    {.key = "grid", .names = "grid lines|gridlines"},
    {.key = "horizon_level", .names = "level|horizon|level indicator"},
    {.key = "photos_taken",
     .names = "photos|pictures|shots|photo count|images|snaps",
     .unit = " photos",
     .zero = "no photos",
     .pattern = "You've taken {v}."},
    {.key = "videos_recorded",
     .names = "videos|video count|clips|video clips",
     .unit = " videos",
     .zero = "no videos",
     .pattern = "You've recorded {v}."},
    {.key = "permission",
     .names = "camera permission|permissions",
     .yes = "The camera permission is granted.",
     .no = "The camera permission is denied."},
};

static const struct device_ops CAMERA_OPS = {
    .name = "camera",
    .destroy = camera_destroy,
    .call = camera_call,
    .get_state = camera_get_state,
    .set_state = camera_set_state,
    .state_line = camera_state_line,
    .words = CAMERA_WORDS,
    .n_words = sizeof(CAMERA_WORDS) / sizeof(CAMERA_WORDS[0]),
};

/* ============================================================================
 * the spec: ranges and enums from the tool set */

/* What the camera assumes for a range or an enum its tool set says nothing about (a tool set
 * without the tool, or a plain array whose argument has no bounds). */
static const char *const DEFAULT_WB[] = {"auto", "daylight", "cloudy", "tungsten", "fluorescent"};
static const char *const DEFAULT_ASPECT[] = {"4:3", "16:9", "1:1", "full"};
static const char *const DEFAULT_PRIORITY[] = {"speed", "quality"};
static const char *const DEFAULT_SCENE[] = {"auto",   "portrait", "night", "landscape",
                                            "sports", "macro",    "food"};
static const int64_t DEFAULT_TIMER[] = {0, 3, 5, 10};

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The schema of argument `arg` of tool `tool`, NULL when the set has neither. */
static const struct pipit_schema *
tool_arg(const struct pipit_toolset *ts, const char *tool, const char *arg) {
    for (size_t i = 0; ts != NULL && i < ts->n_tools; i++) {
        if (strcmp(ts->tools[i].name, tool) != 0) {
            continue;
        }
        const struct pipit_schema *params = ts->tools[i].params;
        for (size_t k = 0; params != NULL && k < params->n_props; k++) {
            if (strcmp(params->props[k].name, arg) == 0) {
                return params->props[k].schema;
            }
        }
    }
    return NULL;
}

static const struct pipit_pack_key *pack_key(const struct pipit_toolset *ts, const char *key) {
    return ts != NULL ? pipit_pack_find_key(pipit_toolset_pack(ts), key) : NULL;
}

/* A range: the pack's state key, else the tool argument's minimum and maximum, else as is. */
static void spec_range(const struct pipit_toolset *ts,
                       const char *key,
                       const char *tool,
                       const char *arg,
                       double *min,
                       double *max) {
    const struct pipit_pack_key *k = pack_key(ts, key);
    const struct pipit_schema *a = tool_arg(ts, tool, arg);
    if (k != NULL && k->has_min && k->has_max) {
        *min = k->min;
        *max = k->max;
    } else if (a != NULL && a->has_min && a->has_max) {
        *min = a->min;
        *max = a->max;
    }
}

/* The string values of an enum: the pack's state key, else the tool argument, else NULL. */
static const char *const *spec_values(const struct pipit_toolset *ts,
                                      const char *key,
                                      const char *tool,
                                      const char *arg,
                                      int *n,
                                      const char **where) {
    const struct pipit_pack_key *k = pack_key(ts, key);
    const struct pipit_schema *a = tool_arg(ts, tool, arg);
    if (k != NULL && k->n_enum > 0) {
        *n = (int)k->n_enum;
        *where = key;
        return k->enum_str;
    }
    if (a != NULL && a->n_enum > 0 && a->enum_str != NULL) {
        *n = (int)a->n_enum;
        *where = arg;
        return (const char *const *)a->enum_str;
    }
    return NULL;
}

static enum pipit_status spec_names(const struct pipit_toolset *ts,
                                    const char *key,
                                    const char *tool,
                                    const char *arg,
                                    const char *const *dflt,
                                    int n_dflt,
                                    struct camera_names *out,
                                    struct pipit_error *err) {
    int n = n_dflt;
    const char *where = NULL;
    const char *const *v = spec_values(ts, key, tool, arg, &n, &where);
    v = v != NULL ? v : dflt;
    if (n > CAMERA_MAX_VALUES) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "camera: %s: %s.%s: %d values, the camera holds at most %d",
                               ts->name, tool, where, n, CAMERA_MAX_VALUES);
    }
    out->n = n;
    for (int i = 0; i < n; i++) {
        if (strlen(v[i]) >= CAMERA_VALUE_SIZE) {
            return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                   "camera: %s: %s.%s: \"%.40s...\" is longer than %d bytes",
                                   ts->name, tool, where, v[i], CAMERA_VALUE_SIZE - 1);
        }
        memcpy(out->text[i], v[i], strlen(v[i]) + 1);
        out->v[i] = out->text[i];
    }
    return PIPIT_OK;
}

/* The values of an enum the camera gives a behaviour to: the spec may allow fewer of `known`,
 * never another (there is nothing to simulate for it). */
static enum pipit_status spec_mask(const struct pipit_toolset *ts,
                                   const char *key,
                                   const char *tool,
                                   const char *arg,
                                   const char *const *known,
                                   int n_known,
                                   uint32_t *ok,
                                   struct pipit_error *err) {
    int n = 0;
    const char *where = NULL;
    const char *const *v = spec_values(ts, key, tool, arg, &n, &where);
    *ok = ALL_OF(n_known);
    if (v == NULL) {
        return PIPIT_OK;
    }
    *ok = 0;
    for (int i = 0; i < n; i++) {
        int e = 0;
        while (e < n_known && strcmp(known[e], v[i]) != 0) {
            e++;
        }
        if (e == n_known) {
            char names[160];
            join_names(known, n_known, ALL_OF(n_known), names, sizeof(names));
            return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                   "camera: %s: %s.%s: \"%.40s\" is not a value the camera "
                                   "simulator knows (%s)",
                                   ts->name, tool, where, v[i], names);
        }
        *ok |= UINT32_C(1) << e;
    }
    return PIPIT_OK;
}

static enum pipit_status
spec_timer(const struct pipit_toolset *ts, struct camera_spec *sp, struct pipit_error *err) {
    const struct pipit_schema *a = tool_arg(ts, "set_timer", "seconds");
    sp->n_timer = COUNT_OF(DEFAULT_TIMER);
    memcpy(sp->timer, DEFAULT_TIMER, sizeof(DEFAULT_TIMER));
    if (a != NULL && a->n_enum > 0 && a->enum_num != NULL) {
        if (a->n_enum > CAMERA_MAX_VALUES) {
            return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                   "camera: %s: set_timer.seconds: more than %d values", ts->name,
                                   CAMERA_MAX_VALUES);
        }
        sp->n_timer = (int)a->n_enum;
        for (size_t i = 0; i < a->n_enum; i++) {
            double x = a->enum_num[i];
            if (x != floor(x) || x < 0 || x > 86400) {
                return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                       "camera: %s: set_timer.seconds: %g is not a whole number of "
                                       "seconds from 0 to 86400",
                                       ts->name, x);
            }
            sp->timer[i] = (int64_t)x;
        }
    }
    size_t used = 0;
    sp->timer_text[0] = '\0';
    for (int i = 0; i < sp->n_timer && used < sizeof(sp->timer_text); i++) {
        const char *sep = i == 0 ? "" : (i == sp->n_timer - 1 ? " or " : ", ");
        pipit_format(sp->timer_text + used, sizeof(sp->timer_text) - used, "%s%lld", sep,
                     (long long)sp->timer[i]);
        used += strlen(sp->timer_text + used);
    }
    return PIPIT_OK;
}

/* One adjust_zoom step: the constant "by" of its declared step effect, else 1. */
static double spec_zoom_step(const struct pipit_toolset *ts) {
    for (size_t i = 0; ts != NULL && i < ts->n_tools; i++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        if (strcmp(ts->tools[i].name, "adjust_zoom") == 0 && tp != NULL && tp->has_step &&
            tp->step.by.arg == NULL && json_is_number(tp->step.by.constant) &&
            json_number_value(tp->step.by.constant) > 0) {
            return json_number_value(tp->step.by.constant);
        }
    }
    return 1.0;
}

static enum pipit_status
camera_spec_init(const struct pipit_toolset *ts, struct camera_spec *sp, struct pipit_error *err) {
    memset(sp, 0, sizeof(*sp));
    sp->zoom_min = 0.5;
    sp->zoom_max = 10.0;
    sp->focus_min = 0.0;
    sp->focus_max = 1.0;
    sp->ev_min = -2.0;
    sp->ev_max = 2.0;
    double jmin = 50, jmax = 100;
    spec_range(ts, "zoom", "set_zoom", "level", &sp->zoom_min, &sp->zoom_max);
    spec_range(ts, "focus_x", "tap_to_focus", "x", &sp->focus_min, &sp->focus_max);
    spec_range(ts, "exposure_ev", "set_exposure", "ev", &sp->ev_min, &sp->ev_max);
    spec_range(ts, "jpeg_quality", "set_jpeg_quality", "quality", &jmin, &jmax);
    sp->jpeg_min = (int64_t)ceil(jmin);
    sp->jpeg_max = (int64_t)floor(jmax);
    sp->zoom_step = spec_zoom_step(ts);
    enum pipit_status st = spec_timer(ts, sp, err);
    if (st == PIPIT_OK) {
        st = spec_names(ts, "white_balance", "set_white_balance", "mode", DEFAULT_WB,
                        COUNT_OF(DEFAULT_WB), &sp->wb, err);
    }
    if (st == PIPIT_OK) {
        st = spec_names(ts, "aspect_ratio", "set_aspect_ratio", "ratio", DEFAULT_ASPECT,
                        COUNT_OF(DEFAULT_ASPECT), &sp->aspect, err);
    }
    if (st == PIPIT_OK) {
        st = spec_names(ts, "quality_priority", "set_quality_priority", "priority",
                        DEFAULT_PRIORITY, COUNT_OF(DEFAULT_PRIORITY), &sp->priority, err);
    }
    if (st == PIPIT_OK) {
        st = spec_names(ts, "scene_mode", "set_scene_mode", "mode", DEFAULT_SCENE,
                        COUNT_OF(DEFAULT_SCENE), &sp->scene, err);
    }
    if (st == PIPIT_OK) {
        st = spec_mask(ts, "flash", "set_flash", "mode", FLASH_NAMES, CAMERA_FLASH_COUNT,
                       &sp->flash_ok, err);
    }
    if (st == PIPIT_OK) {
        st = spec_mask(ts, "facing", "switch_camera", "facing", FACING_NAMES, CAMERA_FACING_COUNT,
                       &sp->facing_ok, err);
    }
    if (st == PIPIT_OK) {
        st = spec_mask(ts, "", "record_video", "action", RECORD_NAMES, CAMERA_RECORD_COUNT,
                       &sp->record_ok, err);
    }
    if (st == PIPIT_OK) {
        st = spec_mask(ts, "", "adjust_zoom", "direction", DIRECTION_NAMES, CAMERA_ZOOM_COUNT,
                       &sp->direction_ok, err);
    }
    return st;
}

/* The pack's declared initial values over the camera's defaults, checked against the spec
 * like any state override (a default outside the spec's range is an error naming it). */
static enum pipit_status
camera_initial_state(struct camera *cam, const struct pipit_toolset *ts, struct pipit_error *err) {
    cam->state = camera_default_state(&cam->spec);
    json_t *all = keys_to_json(&cam->spec, &cam->state, ALL_KEYS);
    if (all == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "camera: out of memory");
    }
    const struct pipit_pack *pk = ts != NULL ? pipit_toolset_pack(ts) : NULL;
    for (size_t i = 0; pk != NULL && i < pk->n_keys; i++) {
        if (key_find(pk->keys[i].key) >= 0 && pk->keys[i].initial != NULL) {
            json_object_set(all, pk->keys[i].key, (json_t *)pk->keys[i].initial);
        }
    }
    enum pipit_status st = camera_set_state(cam, all, err);
    json_decref(all);
    return st;
}

enum pipit_status
camera_device_new(const struct pipit_toolset *ts, struct device *out, struct pipit_error *err) {
    if (out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "camera: NULL out");
    }
    out->ops = NULL;
    out->self = NULL;
    struct camera *cam = malloc(sizeof(*cam));
    if (cam == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "camera: out of memory");
    }
    enum pipit_status st = camera_spec_init(ts, &cam->spec, err);
    if (st == PIPIT_OK) {
        st = camera_initial_state(cam, ts, err);
    }
    if (st != PIPIT_OK) {
        free(cam);
        return st;
    }
    out->ops = &CAMERA_OPS;
    out->self = cam;
    return PIPIT_OK;
}
