/*
 * home_app.c - an app with its own tools and its own state, through include/pipit.h only.
 *
 *     home_app MODEL.gguf [--calls-only] ["utterance" ...]
 *
 * A thermostat and two lights. The app declares its tools (inline JSON below), runs them with
 * its own handlers, and lends pipit its state through two callbacks: get_state() for the
 * prompt's state line and the undo snapshots, restore() for undo. "undo" puts the app's state
 * back with no model call. --calls-only makes every answer a tool call (for a model that has
 * not learned these tools, such as the tests' random one). Build:
 *     cc home_app.c -Iinclude -Lbuild -lpipit -o home_app
 */
#include "pipit.h"

#include <stdio.h>
#include <string.h>

static const char TOOLS[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"set_temperature\","
    "  \"description\": \"Set the thermostat\", \"parameters\": {\"type\": \"object\","
    "  \"properties\": {\"celsius\": {\"type\": \"integer\", \"minimum\": 10, \"maximum\": 30}},"
    "  \"required\": [\"celsius\"]}},"
    " \"pipit\": {\"success\": \"The thermostat is set to {celsius} degrees.\","
    "  \"undo\": {\"keys\": [\"celsius\"]}}},"
    " {\"type\": \"function\", \"function\": {\"name\": \"set_light\","
    "  \"description\": \"Turn a light on or off\", \"parameters\": {\"type\": \"object\","
    "  \"properties\": {\"room\": {\"type\": \"string\", \"enum\": [\"living\", \"kitchen\"]},"
    "  \"on\": {\"type\": \"boolean\"}}, \"required\": [\"room\", \"on\"]}},"
    " \"pipit\": {\"success\": \"The {room} light is switched.\","
    "  \"undo\": {\"keys\": [\"living_light\", \"kitchen_light\"]}}}]";

/* The app's state: the only copy. pipit reads it through get_state and never keeps it. */
struct home {
    int celsius;
    bool living_light, kitchen_light;
};

static enum pipit_status get_state(char *buf, size_t size, void *user_data) {
    const struct home *h = user_data;
    snprintf(buf, size, "{\"celsius\": %d, \"living_light\": %s, \"kitchen_light\": %s}",
             h->celsius, h->living_light ? "true" : "false", h->kitchen_light ? "true" : "false");
    return PIPIT_OK;
}

/* Undo: keys_json holds the keys the undone call changed, with their old values, e.g.
 * {"celsius":20}. A real app would use its JSON parser; these keys are simple to find. */
static bool find_bool(const char *json, const char *key, bool *out) {
    const char *k = strstr(json, key);
    if (k == NULL) {
        return false;
    }
    k += strlen(key);
    while (*k == ':' || *k == ' ') {
        k++;
    }
    *out = strncmp(k, "true", 4) == 0;
    return true;
}

static enum pipit_status restore(const char *keys_json, void *user_data) {
    struct home *h = user_data;
    const char *c = strstr(keys_json, "\"celsius\":");
    if (c != NULL && sscanf(c + 10, "%d", &h->celsius) != 1) {
        return PIPIT_ERR_JSON;
    }
    find_bool(keys_json, "\"living_light\"", &h->living_light);
    find_bool(keys_json, "\"kitchen_light\"", &h->kitchen_light);
    return PIPIT_OK;
}

/* The app's tools. Arguments arrive validated against the schema above. */
static enum pipit_status
handle(const char *tool, const char *args_json, struct pipit_tool_output *out, void *user_data) {
    struct home *h = user_data;
    if (strcmp(tool, "set_temperature") == 0) {
        const char *c = strstr(args_json, "\"celsius\":");
        if (c == NULL || sscanf(c + 10, "%d", &h->celsius) != 1) {
            return PIPIT_ERR_INVALID_ARGS;
        }
        snprintf(out->data_json, sizeof(out->data_json), "{\"celsius\": %d}", h->celsius);
    } else {
        bool on = strstr(args_json, "\"on\":true") != NULL;
        bool living = strstr(args_json, "\"room\":\"living\"") != NULL;
        *(living ? &h->living_light : &h->kitchen_light) = on;
        snprintf(out->data_json, sizeof(out->data_json), "{\"%s_light\": %s}",
                 living ? "living" : "kitchen", on ? "true" : "false");
    }
    out->ok = true;
    return PIPIT_OK;
}

int main(int argc, char **argv) {
    bool calls_only = argc > 2 && strcmp(argv[2], "--calls-only") == 0;
    int first = calls_only ? 3 : 2;
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.gguf [--calls-only] [\"utterance\" ...]\n", argv[0]);
        return 2;
    }
    struct pipit_error err;
    struct pipit_model *model = NULL;
    struct pipit_toolset *tools = NULL;
    struct pipit_device *device = NULL;
    struct pipit_agent *agent = NULL;
    struct home home = {20, false, false};
    struct pipit_app_state app = {"home", get_state, restore, &home};
    struct pipit_agent_params params = pipit_agent_default_params();
    params.n_threads = 1;
    params.lazy_grammar = !calls_only;
    params.system_prompt = "You control a thermostat and lights. Reply with one tool call.";
    enum pipit_status st = pipit_model_load(argv[1], NULL, &model, &err);
    if (st == PIPIT_OK) {
        st = pipit_toolset_load_string(TOOLS, strlen(TOOLS), "home", &tools, &err);
    }
    if (st == PIPIT_OK) {
        st = pipit_device_from_app(&app, &device, &err); /* the app's state, lent to pipit */
    }
    if (st == PIPIT_OK) {
        params.device = device;
        st = pipit_agent_init(model, tools, &params, &agent, &err);
    }
    if (st != PIPIT_OK) {
        fprintf(stderr, "%s\n", err.text);
        pipit_device_free(device);
        pipit_toolset_free(tools);
        pipit_model_free(model);
        return 1;
    }
    pipit_agent_register_tool(agent, "set_temperature", handle, &home);
    pipit_agent_register_tool(agent, "set_light", handle, &home);

    const char *fallback[] = {"warm it up to 22", "kitchen light on", "undo", "undo"};
    int n = argc > first ? argc - first : 4;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        const char *utterance = argc > first ? argv[first + i] : fallback[i];
        struct pipit_turn *turn = NULL;
        if (pipit_agent_turn(agent, utterance, &turn) != PIPIT_OK) {
            fprintf(stderr, "%s\n", pipit_agent_errmsg(agent));
            rc = 1;
            break;
        }
        printf("> %s\n%s\n", utterance, turn->sentence);
        for (size_t c = 0; c < turn->n_calls; c++) {
            printf("  %s(%s): %s\n", turn->calls[c].tool, turn->calls[c].args_json,
                   turn->calls[c].ok ? "ok" : turn->calls[c].code);
        }
        printf("  home: %d degrees, living light %s, kitchen light %s\n", home.celsius,
               home.living_light ? "on" : "off", home.kitchen_light ? "on" : "off");
        pipit_turn_free(turn);
    }

    pipit_agent_free(agent);
    pipit_device_free(device);
    pipit_toolset_free(tools);
    pipit_model_free(model);
    return rc;
}
