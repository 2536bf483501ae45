/*
 * embed.c - pipit inside an app, through include/pipit.h only.
 *
 *     embed MODEL.gguf TOOLS.json ["utterance" ...]
 *
 * Loads a model and a tool set, creates an agent on the device of the set's declared state
 * (tools/camera.json declares the camera's: the generic pack device, libpipit's own), replaces
 * the take_photo tool with the app's own handler, and prints the sentence of every turn. It
 * links the runtime alone. Build against an installed pipit:
 *     cc embed.c $(pkg-config --cflags --libs pipit) -o embed
 */
#include "pipit.h"

#include <stdio.h>
#include <string.h>

/* The app's own shutter: a handler gets validated JSON arguments and reports a result. */
static enum pipit_status
shutter(const char *tool, const char *args_json, struct pipit_tool_output *out, void *user_data) {
    int *shots = user_data;
    (void)tool;
    (void)args_json;
    (*shots)++;
    out->ok = true;
    snprintf(out->data_json, sizeof(out->data_json), "{\"photos_taken\": %d}", *shots);
    return PIPIT_OK;
}

static void log_errors(enum pipit_log_level level, const char *text, void *user_data) {
    (void)user_data;
    if (level >= PIPIT_LOG_ERROR) {
        fprintf(stderr, "pipit: %s", text);
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL.gguf TOOLS.json [\"utterance\" ...]\n", argv[0]);
        return 2;
    }
    pipit_log_set(log_errors, NULL, PIPIT_LOG_ERROR);

    struct pipit_error err;
    struct pipit_model *model = NULL;
    if (pipit_model_load(argv[1], NULL, &model, &err) != PIPIT_OK) {
        fprintf(stderr, "%s\n", err.text);
        return 1;
    }
    struct pipit_toolset *tools = NULL;
    if (pipit_toolset_load_file(argv[2], &tools, &err) != PIPIT_OK) {
        fprintf(stderr, "%s\n", err.text);
        pipit_model_free(model);
        return 1;
    }

    struct pipit_device *camera = NULL;
    if (pipit_device_from_pack(tools, NULL, &camera, &err) != PIPIT_OK) {
        fprintf(stderr, "%s\n", err.text);
        pipit_toolset_free(tools);
        pipit_model_free(model);
        return 1;
    }
    struct pipit_agent_params params = pipit_agent_default_params();
    params.device = camera;
    params.n_threads = 1;
    struct pipit_agent *agent = NULL;
    if (pipit_agent_init(model, tools, &params, &agent, &err) != PIPIT_OK) {
        fprintf(stderr, "%s\n", err.text);
        pipit_device_free(camera);
        pipit_toolset_free(tools);
        pipit_model_free(model);
        return 1;
    }
    int shots = 0;
    pipit_agent_register_tool(agent, "take_photo", shutter, &shots);

    const char *fallback[] = {"zoom in to 2x", "take a photo", "undo"};
    int n = argc > 3 ? argc - 3 : 3;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        const char *utterance = argc > 3 ? argv[3 + i] : fallback[i];
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
        printf("  [%d model call(s), %lld permanent tokens prefilled]\n", turn->model_calls,
               (long long)turn->permanent_prefill_tokens);
        pipit_turn_free(turn);
    }

    pipit_agent_free(agent);
    pipit_device_free(camera);
    pipit_toolset_free(tools);
    pipit_model_free(model);
    return rc;
}
