/*
 * registry.c - which device runs a tool set: pipit_device_init().
 *
 * The one place that knows pipit's devices by name. The agent and the evaluation take a
 * struct pipit_device and never name a device themselves, so a new simulator is added here
 * (and nowhere else) and any pack with a declared state runs on the generic device.
 *
 * The choice for kind NULL, in order:
 *   1. a pack named after a simulator ("camera", "phone") with a declared state: that simulator
 *      (it keeps the rules a declaration cannot say);
 *   2. any other pack with a declared state: the generic pack device;
 *   3. no declared state: the simulator that runs every tool of the set besides undo and cloud
 *      delegation (a plain-array tools/camera.json runs on the camera, as it always did);
 *   4. else none: the agent runs the tools through handlers only.
 */
#include "devices/registry.h"

#include "device.h"
#include "devices/camera.h"
#include "devices/pack.h"
#include "devices/phone.h"
#include "pipit_tools.h"
#include "status.h"
#include "toolspec.h"

#include <string.h>

struct simulator {
    const char *name;
    /* the simulator for tool set `ts` (may be NULL): its ranges and enums come from it */
    enum pipit_status (*make)(const struct pipit_toolset *ts,
                              struct device *out,
                              struct pipit_error *err);
};

static const struct simulator SIMULATORS[] = {
    {"camera", camera_device_new},
    {"phone", phone_device_new},
};

#define N_SIMULATORS (sizeof(SIMULATORS) / sizeof(SIMULATORS[0]))

static const struct simulator *find_simulator(const char *name) {
    for (size_t i = 0; name != NULL && i < N_SIMULATORS; i++) {
        if (strcmp(SIMULATORS[i].name, name) == 0) {
            return &SIMULATORS[i];
        }
    }
    return NULL;
}

/* Tools no device runs: the agent's own undo and cloud delegation. */
static bool agent_tool(const struct pipit_toolset *ts, size_t i) {
    return strcmp(ts->tools[i].name, "undo") == 0 || pipit_toolset_is_cloud(ts, i);
}

/* Does `dev` run every tool of `ts`? Probed with arguments that are not an object: a device
 * answers unknown_tool for a tool it lacks and invalid_argument for one it has, and changes
 * nothing either way (device.h: only a successful call changes the state). */
static bool runs_every_tool(const struct device *dev, const struct pipit_toolset *ts) {
    json_t *probe = json_null();
    bool all = ts->n_tools > 0;
    size_t counted = 0;
    for (size_t i = 0; i < ts->n_tools && all; i++) {
        if (agent_tool(ts, i)) {
            continue;
        }
        struct device_result r;
        memset(&r, 0, sizeof(r));
        enum pipit_status st = dev->ops->call(dev->self, ts->tools[i].name, probe, &r);
        device_result_clear(&r);
        all = st != PIPIT_ERR_UNKNOWN_TOOL;
        counted++;
    }
    return all && counted > 0;
}

static enum pipit_status make_simulator(const struct simulator *sim,
                                        const struct pipit_toolset *ts,
                                        const char *init_json,
                                        struct pipit_device **out,
                                        struct pipit_error *err) {
    struct device dev;
    memset(&dev, 0, sizeof(dev));
    enum pipit_status st = sim->make(ts, &dev, err);
    if (st != PIPIT_OK) {
        return st;
    }
    return device_handle_new(&dev, sim->name, init_json, out, err);
}

/* The pack's name when the tool set declares a state, else NULL. */
static const char *declared_pack(const struct pipit_toolset *ts) {
    const struct pipit_pack *pack = pipit_toolset_pack(ts);
    return pack != NULL && pack->n_keys > 0 ? pack->name : NULL;
}

/* The device for kind NULL (the order at the top of this file) into *out; out->ops == NULL when
 * none runs the set (handlers only). *name: the name the handle reports. */
static enum pipit_status choose(const struct pipit_toolset *ts,
                                struct device *out,
                                const char **name,
                                struct pipit_error *err) {
    memset(out, 0, sizeof(*out));
    const char *pack = declared_pack(ts);
    if (pack != NULL) {
        const struct simulator *sim = find_simulator(pack);
        *name = sim != NULL ? sim->name : pack;
        return sim != NULL ? sim->make(ts, out, err) : pack_device_new(ts, out, err);
    }
    for (size_t i = 0; i < N_SIMULATORS; i++) {
        struct device dev;
        memset(&dev, 0, sizeof(dev));
        struct pipit_error why;
        enum pipit_status st = SIMULATORS[i].make(ts, &dev, &why);
        if (st == PIPIT_ERR_NOMEM) {
            return pipit_error_set(err, PIPIT_ERR_NOMEM, "device: out of memory");
        }
        if (st == PIPIT_OK && runs_every_tool(&dev, ts)) {
            *out = dev;
            *name = SIMULATORS[i].name;
            return PIPIT_OK;
        }
        device_free(&dev); /* not this device */
    }
    return PIPIT_OK;
}

enum pipit_status pipit_device_init(const char *kind,
                                    const struct pipit_toolset *tools,
                                    const char *init_json,
                                    struct pipit_device **out,
                                    struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "device: NULL out");
    }
    *out = NULL;
    const char *pack = tools != NULL ? declared_pack(tools) : NULL;
    if (kind != NULL) {
        const struct simulator *sim = find_simulator(kind);
        if (sim != NULL) {
            return make_simulator(sim, tools, init_json, out, err);
        }
        if (strcmp(kind, "pack") == 0 || (pack != NULL && strcmp(kind, pack) == 0)) {
            if (tools == NULL) {
                return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                       "device: the pack device needs a tool set");
            }
            return pipit_device_from_pack(tools, init_json, out, err);
        }
        /* the pack's own name is listed once, and only when it is not a simulator's */
        bool own = pack != NULL && find_simulator(pack) == NULL;
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "device: unknown device '%s' (known: camera, phone, pack%s%s); a "
                               "pack's own device is its name with that pack as the tool set "
                               "(--tools FILE)",
                               kind, own ? ", " : "", own ? pack : "");
    }
    if (tools == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "device: no kind and no tool set to choose from");
    }
    struct device dev;
    const char *name = NULL;
    enum pipit_status st = choose(tools, &dev, &name, err);
    if (st != PIPIT_OK) {
        return st;
    }
    if (dev.ops == NULL) {
        if (init_json != NULL) {
            return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                   "device: %s declares no state and no simulator runs its "
                                   "tools, so there is no state to start from the initial "
                                   "state given",
                                   tools->name);
        }
        return PIPIT_OK; /* no device: handlers only */
    }
    return device_handle_new(&dev, name, init_json, out, err);
}

enum pipit_status
device_for_toolset(const struct pipit_toolset *ts, struct device *out, struct pipit_error *err) {
    if (out == NULL || ts == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "device: no tool set or no output");
    }
    const char *name = NULL;
    return choose(ts, out, &name, err);
}
