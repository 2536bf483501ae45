/*
 * cmd_agent.c - `pipit chat` (interactive) and `pipit run` (one-shot) over the agent API.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <jansson.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PIPIT_DEFAULT_MODEL
#define PIPIT_DEFAULT_MODEL "models/pipit-camera-v1.gguf"
#endif
#ifndef PIPIT_TOOLS_DIR
#define PIPIT_TOOLS_DIR "tools"
#endif

struct agent_opts {
    const char *model;
    const char *lora;
    const char *tracker_lora;
    const char *tools;
    const char *device;
    const char *init;
    const char *syntax;
    const char *cloud_url;
    const char *session;
    const char *memory;
    const char *copy;
    long threads;
    long n_ctx;
    long max_steps;
    double budget_ms;
    bool no_grammar;
    bool gbnf;
    bool tracker;
    bool force_call;
    bool flash_attn;
    bool keep_going;
    bool verbose;
    bool json;
};

static void agent_usage(FILE *out, const char *cmd) {
    fprintf(
        out,
        "usage: pipit %s [options]%s\n"
        "  --model FILE      GGUF model (default: the bundled %s, or\n"
        "                    models/pipit-<pack>.gguf when the tool set's pack has one,\n"
        "                    else one next to the --tools file: pipit-<pack>.gguf,\n"
        "                    <pack>.gguf or its own name (car.json: car.gguf), else\n"
        "                    models/pipit-<pack>.lora.gguf on models/pipit-base.gguf)\n"
        "  --lora FILE       a LoRA adapter for --model, the base it was trained on (pipit\n"
        "                    train --base --lora): the Executor answers with it, in the\n"
        "                    prompt it was trained on\n"
        "  --tools FILE      tool specification (default: tools/<device>.json for camera\n"
        "                    and phone, else tools/camera.json)\n"
        "  --device NAME     the state the tools act on: camera, phone, pack (the generic\n"
        "                    device of the tool set's declared state; also by the pack's\n"
        "                    own name) or none (no state: nothing runs the tools);\n"
        "                    default: chosen from the tool set\n"
        "  --init JSON       device state overrides, e.g. '{\"recording\": true}'\n"
        "  --syntax NAME     call syntax: pipit or hermes (default: hermes for models with\n"
        "                    a chat template, else pipit)\n"
        "  --no-grammar      decode unconstrained (calls are still validated)\n"
        "  --gbnf            draw with llama.cpp's GBNF sampler instead of pipit's own\n"
        "                    decoder (--fast-grammar, the default); the text the grammar\n"
        "                    forces is still filled in as pipit's decoder does\n"
        "  --tracker         run the State-Tracker after each turn (docs/memory.md)\n"
        "  --tracker-lora FILE  ... with this LoRA adapter on its context (implies --tracker)\n"
        "  --threads N       CPU threads (default: half the usable cores, at most 4:\n"
        "                    ggml threads spin-wait, so one per free core)\n"
        "  --max-steps N     model steps per utterance (default 3)\n"
        "  --budget-ms X     wall-clock budget per turn (default 15000)\n"
        "  --ctx N           context window in tokens (default: what the model needs:\n"
        "                    its trained prompt length, max tokens and a tool line, or\n"
        "                    2048 for models that record none; docs/agent.md)\n"
        "  --memory MODE     what stays in context between turns: none, full or cso\n"
        "                    (default cso; docs/memory.md)\n"
        "  --copy MODE       free-text arguments (names, places, messages) copied from\n"
        "                    the person's words and the memory: on, off or auto (default\n"
        "                    auto: on for pipit's call syntax; docs/grammar.md)\n"
        "  --force-call      every answer is a tool call (the grammar is not lazy)\n"
        "  --flash-attn      llama.cpp's flash attention (default off: on a CPU it\n"
        "                    slows every turn to speed up the first prefill)\n"
        "  -v                also print calls, tokens, latency and the model's raw output\n"
        "%s",
        cmd, strcmp(cmd, "run") == 0 ? " [\"utterance\" ...]" : "", PIPIT_DEFAULT_MODEL,
        strcmp(cmd, "run") == 0
            ? "  --json            one JSON object per turn (sentence, calls, state, counters)\n"
              "  --keep-going      a failed turn does not stop the run (exit 1 at the end)\n"
              "Utterances come from the arguments, or one per line from stdin.\n"
            : "Ctrl-C cancels the current turn; a second Ctrl-C exits.\n");
}

/* Parse options; returns the index of the first non-option argument, or -1 on error. */
static int parse_agent_opts(int argc, char **argv, const char *cmd, struct agent_opts *o) {
    memset(o, 0, sizeof(*o));
    o->model = PIPIT_DEFAULT_MODEL;
    o->device = NULL;
    o->threads = 0;
    o->max_steps = 3;
    o->budget_ms = 15000;
    o->n_ctx = 0; /* the agent sizes it */
    bool bad = false;
    int i = 1;
    for (; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            agent_usage(stdout, cmd);
            exit(CLI_EXIT_OK);
        }
        if (strcmp(argv[i], "-v") == 0) {
            o->verbose = true;
            continue;
        }
        if (strcmp(argv[i], "--json") == 0 && strcmp(cmd, "run") == 0) {
            o->json = true;
            continue;
        }
        if (strcmp(argv[i], "--no-grammar") == 0) {
            o->no_grammar = true;
            continue;
        }
        if (strcmp(argv[i], "--fast-grammar") == 0 || strcmp(argv[i], "--gbnf") == 0) {
            o->gbnf = strcmp(argv[i], "--gbnf") == 0; /* the last one counts */
            continue;
        }
        if (strcmp(argv[i], "--tracker") == 0) {
            o->tracker = true;
            continue;
        }
        if (strcmp(argv[i], "--flash-attn") == 0) {
            o->flash_attn = true;
            continue;
        }
        if (strcmp(argv[i], "--force-call") == 0) {
            o->force_call = true;
            continue;
        }
        if (strcmp(argv[i], "--keep-going") == 0 && strcmp(cmd, "run") == 0) {
            o->keep_going = true;
            continue;
        }
        if (cli_opt_str(argc, argv, &i, "--model", &o->model, &bad) ||
            cli_opt_str(argc, argv, &i, "--lora", &o->lora, &bad) ||
            cli_opt_str(argc, argv, &i, "--tracker-lora", &o->tracker_lora, &bad) ||
            cli_opt_str(argc, argv, &i, "--tools", &o->tools, &bad) ||
            cli_opt_str(argc, argv, &i, "--device", &o->device, &bad) ||
            cli_opt_str(argc, argv, &i, "--init", &o->init, &bad) ||
            cli_opt_str(argc, argv, &i, "--syntax", &o->syntax, &bad) ||
            cli_opt_str(argc, argv, &i, "--cloud-url", &o->cloud_url, &bad) ||
            cli_opt_str(argc, argv, &i, "--session", &o->session, &bad) ||
            cli_opt_str(argc, argv, &i, "--memory", &o->memory, &bad) ||
            cli_opt_str(argc, argv, &i, "--copy", &o->copy, &bad) ||
            cli_opt_int(argc, argv, &i, "--threads", 0, 512, &o->threads, &bad) ||
            cli_opt_int(argc, argv, &i, "--ctx", 64, 1 << 20, &o->n_ctx, &bad) ||
            cli_opt_int(argc, argv, &i, "--max-steps", 1, 8, &o->max_steps, &bad) ||
            cli_opt_float(argc, argv, &i, "--budget-ms", 0, 1e9, &o->budget_ms, &bad)) {
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "pipit %s: unknown option '%s'\n", cmd, argv[i]);
            bad = true;
            break;
        }
        break;
    }
    if (bad) {
        agent_usage(stderr, cmd);
        return -1;
    }
    if (o->syntax != NULL && strcmp(o->syntax, "pipit") != 0 && strcmp(o->syntax, "hermes") != 0) {
        fprintf(stderr, "pipit %s: --syntax must be pipit or hermes, not '%s'\n", cmd, o->syntax);
        return -1;
    }
    if (o->memory != NULL && strcmp(o->memory, "none") != 0 && strcmp(o->memory, "full") != 0 &&
        strcmp(o->memory, "cso") != 0) {
        fprintf(stderr, "pipit %s: --memory must be none, full or cso, not '%s'\n", cmd, o->memory);
        return -1;
    }
    if (o->copy != NULL && strcmp(o->copy, "on") != 0 && strcmp(o->copy, "off") != 0 &&
        strcmp(o->copy, "auto") != 0) {
        fprintf(stderr, "pipit %s: --copy must be on, off or auto, not '%s'\n", cmd, o->copy);
        return -1;
    }
    if (o->force_call && o->no_grammar) {
        fprintf(stderr, "pipit %s: --force-call needs the grammar (not --no-grammar)\n", cmd);
        return -1;
    }
    return i;
}

/* A stable, machine-readable name for each status (append-only like the enum): the "code" of
 * the error object `run --json` prints for a failed turn. */
static const char *status_code(enum pipit_status st) {
    static const char *const CODES[] = {
        "ok",
        "invalid_arg",
        "nomem",
        "io",
        "not_gguf",
        "corrupt",
        "unsupported_arch",
        "model",
        "backend",
        "context_full",
        "aborted",
        "decode",
        "grammar",
        "tokenize",
        "template",
        "adapter",
        "state",
        "no_candidates",
        "spec",
        "unknown_tool",
        "invalid_args",
        "parse",
        "tool_failed",
        "json",
    };
    return (size_t)st < sizeof(CODES) / sizeof(CODES[0]) ? CODES[st] : "error";
}

/* Report a failure: the message on stderr, and with --json also one JSON object on stdout,
 * {"ok": false, "turn": N, "error": {"code": "...", "message": "..."}} (turn -1: before the
 * first turn). */
static void report_failure(const struct agent_opts *o,
                           const char *cmd,
                           int turn,
                           enum pipit_status st,
                           const char *message) {
    fprintf(stderr, "pipit %s: %s\n", cmd, message);
    if (o->json) {
        json_t *e = json_pack("{s:b,s:i,s:{s:s,s:s}}", "ok", 0, "turn", turn, "error", "code",
                              status_code(st), "message", message);
        char *j = e != NULL ? json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        printf("%s\n", j != NULL ? j : "{\"ok\":false}");
        fflush(stdout);
        free(j);
        json_decref(e);
    }
}

struct agent_session {
    struct pipit_device *device;
    struct pipit_cloud *cloud;
    struct pipit_model *model;
    struct pipit_toolset *tools;
    struct pipit_agent *agent;
};

static void session_free(struct agent_session *s) {
    pipit_agent_free(s->agent);
    pipit_device_free(s->device);
    pipit_toolset_free(s->tools);
    pipit_model_free(s->model);
    pipit_cloud_free(s->cloud);
}

static int session_open(const struct agent_opts *o, const char *cmd, struct agent_session *s) {
    memset(s, 0, sizeof(*s));
    struct pipit_error err;
    char tools_path[4096];
    if (o->tools != NULL) {
        snprintf(tools_path, sizeof(tools_path), "%s", o->tools);
    } else {
        bool own = o->device != NULL &&
                   (strcmp(o->device, "camera") == 0 || strcmp(o->device, "phone") == 0);
        snprintf(tools_path, sizeof(tools_path), "%s/%s.json", PIPIT_TOOLS_DIR,
                 own ? o->device : "camera");
    }
    enum pipit_status st = pipit_toolset_load_file(tools_path, &s->tools, &err);
    if (st != PIPIT_OK) {
        report_failure(o, cmd, -1, st, err.text);
        session_free(s);
        return CLI_EXIT_FAIL;
    }
    /* no --model: the shipped model of the tool set's pack (models/pipit-<pack>.gguf) when
     * there is one, else the bundled camera model */
    const char *model = o->model;
    char pack_model[4096], pack_lora[4096], pack_base[4096];
    const char *lora = o->lora;
    const char *pack = pipit_toolset_pack_name(s->tools);
    struct stat sb;
    if (strcmp(o->model, PIPIT_DEFAULT_MODEL) == 0 && o->lora == NULL && pack != NULL &&
        strchr(pack, '/') == NULL) { /* an adapter goes with the model it was trained on */
        const char *slash = strrchr(PIPIT_DEFAULT_MODEL, '/');
        int dir = slash != NULL ? (int)(slash - PIPIT_DEFAULT_MODEL + 1) : 0;
        snprintf(pack_model, sizeof(pack_model), "%.*spipit-%s.gguf", dir, PIPIT_DEFAULT_MODEL,
                 pack);
        /* else its adapter on the shared base: pipit-<pack>.lora.gguf on pipit-base.gguf (the
         * agent checks the adapter's pipit.lora.base against the base's name) */
        snprintf(pack_lora, sizeof(pack_lora), "%.*spipit-%s.lora.gguf", dir, PIPIT_DEFAULT_MODEL,
                 pack);
        snprintf(pack_base, sizeof(pack_base), "%.*spipit-base.gguf", dir, PIPIT_DEFAULT_MODEL);
        /* not shipped: next to the pack file (pipit-<pack>.gguf; pipit-<file name>.gguf, what
         * `pipit train --tools` writes when run there; <pack>.gguf; the file's own name:
         * car.json -> car.gguf) */
        const char *tslash = strrchr(tools_path, '/');
        int tdir = tslash != NULL ? (int)(tslash - tools_path + 1) : 0;
        const char *stem = tools_path + tdir;
        int stem_len = (int)strcspn(stem, ".");
        char near[4][4096];
        snprintf(near[0], sizeof(near[0]), "%.*spipit-%s.gguf", tdir, tools_path, pack);
        snprintf(near[1], sizeof(near[1]), "%.*spipit-%.*s.gguf", tdir, tools_path, stem_len, stem);
        snprintf(near[2], sizeof(near[2]), "%.*s%s.gguf", tdir, tools_path, pack);
        snprintf(near[3], sizeof(near[3]), "%.*s%.*s.gguf", tdir, tools_path, stem_len, stem);
        bool shipped = stat(pack_model, &sb) == 0, near_pack = false;
        for (int k = 0; k < 4 && !shipped && !near_pack; k++) {
            if (stat(near[k], &sb) == 0 && S_ISREG(sb.st_mode)) {
                memcpy(pack_model, near[k], sizeof(pack_model)); /* both 4096 bytes */
                near_pack = true;
            }
        }
        if (shipped || near_pack) {
            model = pack_model;
            if (o->verbose || near_pack) { /* one not shipped is always said, once */
                fprintf(stderr, "pipit %s: the pack \"%s\" has its own model%s: %s\n", cmd, pack,
                        near_pack ? " next to it" : "", model);
            }
        } else if (stat(pack_lora, &sb) == 0 && stat(pack_base, &sb) == 0) {
            model = pack_base;
            lora = pack_lora;
            if (o->verbose) {
                fprintf(stderr, "pipit %s: the pack \"%s\" has an adapter: %s on %s\n", cmd, pack,
                        pack_lora, pack_base);
            }
        }
    }
    bool warned = false; /* said here that the bundled model does not know these tools */
    if (model == o->model && strcmp(o->model, PIPIT_DEFAULT_MODEL) == 0 && o->lora == NULL &&
        (pack == NULL || strcmp(pack, "camera") != 0)) {
        warned = true;
        /* the bundled model knows the camera's tools only: say so before it answers for others
         * (a model trained for another pack says so itself, pipit_agent_model_notice) */
        if (pack != NULL) {
            fprintf(stderr,
                    "pipit: warning: no model was trained for the pack \"%s\" (none at "
                    "models/pipit-%s.gguf, nor next to %s as pipit-%s.gguf, %s.gguf or the "
                    "file's own name with .gguf, with or without pipit-): the bundled camera "
                    "model does not know these tools, so only what pipit answers itself (state "
                    "questions, undo, small talk) works; train one with `pipit train --tools %s` "
                    "or pass --model (docs/training.md)\n",
                    pack, pack, tools_path, pack, pack, tools_path);
        } else {
            fprintf(stderr,
                    "pipit: warning: the tool set %s names no pack and no model was trained for "
                    "it: the bundled camera model does not know these tools, so only what pipit "
                    "answers itself (state questions, undo, small talk) works; train one with "
                    "`pipit train --tools %s --out MODEL.gguf` and pass --model "
                    "(docs/training.md, docs/pack.md)\n",
                    tools_path, tools_path);
        }
    }
    if (stat(model, &sb) != 0 && strcmp(model, PIPIT_DEFAULT_MODEL) == 0) {
        char msg[sizeof(PIPIT_DEFAULT_MODEL) + 200];
        snprintf(msg, sizeof(msg),
                 "the bundled model %s is missing; pass --model FILE (any GGUF; `pipit "
                 "make-model` makes a random test model)",
                 PIPIT_DEFAULT_MODEL);
        report_failure(o, cmd, -1, PIPIT_ERR_IO, msg);
        session_free(s);
        return CLI_EXIT_FAIL;
    }
    st = pipit_model_load(model, NULL, &s->model, &err);
    if (st != PIPIT_OK) {
        report_failure(o, cmd, -1, st, err.text);
        session_free(s);
        return CLI_EXIT_FAIL;
    }
    /* --device none: no state; a name: that device; absent: chosen from the tool set */
    if (o->device == NULL || strcmp(o->device, "none") != 0) {
        st = pipit_device_init(o->device, s->tools, o->init, &s->device, &err);
    } else if (o->init != NULL) {
        snprintf(err.text, sizeof(err.text), "--init needs a device (not --device none)");
        st = PIPIT_ERR_INVALID_ARG;
    }
    if (st != PIPIT_OK) {
        report_failure(o, cmd, -1, st, err.text);
        session_free(s);
        return CLI_EXIT_FAIL;
    }
    struct pipit_agent_params ap = pipit_agent_default_params();
    ap.device = s->device;
    ap.grammar = !o->no_grammar;
    ap.fast_grammar = !o->gbnf;
    ap.state_tracker = o->tracker || o->tracker_lora != NULL;
    ap.tracker_adapter = o->tracker_lora;
    ap.adapter = lora;
    ap.n_threads = (int32_t)o->threads;
    ap.max_steps = (int32_t)o->max_steps;
    ap.turn_budget_ms = o->budget_ms;
    ap.n_ctx = (uint32_t)o->n_ctx;
    ap.lazy_grammar = !o->force_call;
    ap.flash_attn = o->flash_attn;
    if (o->copy != NULL) {
        ap.copy_strings = strcmp(o->copy, "on") == 0    ? PIPIT_COPY_ON
                          : strcmp(o->copy, "off") == 0 ? PIPIT_COPY_OFF
                                                        : PIPIT_COPY_AUTO;
    }
    if (o->memory != NULL) {
        ap.memory = strcmp(o->memory, "none") == 0   ? PIPIT_MEMORY_NONE
                    : strcmp(o->memory, "full") == 0 ? PIPIT_MEMORY_FULL
                                                     : PIPIT_MEMORY_CSO;
    }
    if (o->syntax != NULL) {
        ap.syntax = strcmp(o->syntax, "hermes") == 0 ? PIPIT_SYNTAX_HERMES : PIPIT_SYNTAX_PIPIT;
    }
    st = pipit_agent_init(s->model, s->tools, &ap, &s->agent, &err);
    if (st != PIPIT_OK) {
        report_failure(o, cmd, -1, st, err.text);
        session_free(s);
        return CLI_EXIT_FAIL;
    }
    struct pipit_agent_budget budget;
    pipit_agent_get_budget(s->agent, &budget);
    if (budget.notice[0] != '\0') {
        fprintf(stderr, "pipit: %s\n", budget.notice); /* the tools were served smaller */
    }
    if (pipit_agent_model_notice(s->agent)[0] != '\0' && !warned) { /* said once */
        fprintf(stderr, "pipit: warning: %s\n", pipit_agent_model_notice(s->agent));
    }
    struct pipit_cloud_params cp = pipit_cloud_default_params();
    pipit_cloud_params_from_env(&cp);
    if (o->cloud_url != NULL) {
        cp.url = o->cloud_url;
    }
    st = pipit_cloud_init(&cp, &s->cloud, &err);
    if (st != PIPIT_OK) {
        report_failure(o, cmd, -1, st, err.text);
        session_free(s);
        return CLI_EXIT_FAIL;
    }
    pipit_agent_set_cloud(s->agent, s->cloud);
    if (o->session != NULL && access(o->session, F_OK) == 0) {
        struct pipit_session_info info;
        st = pipit_agent_load(s->agent, o->session, &info, &err);
        if (st != PIPIT_OK) {
            /* never start over on top of a session that cannot be read: the next save would
             * overwrite it (another format version, another tool set, a damaged file) */
            char msg[sizeof(err.text) + 600];
            snprintf(msg, sizeof(msg),
                     "cannot resume the session: %s. The file is left unchanged; move it away "
                     "or pass another --session FILE to start a new session",
                     err.text);
            report_failure(o, cmd, -1, st, msg);
            session_free(s);
            return CLI_EXIT_FAIL;
        }
        if (!o->json) {
            fprintf(stderr, "pipit %s: resumed %s: %s, %d memory lines\n", cmd, o->session,
                    info.note, info.memory_lines);
        }
    }
    if (pipit_cloud_configured(s->cloud) && !o->json) {
        fprintf(stderr, "pipit %s: questions for the cloud assistant go to %s\n", cmd, cp.url);
    }
    return CLI_EXIT_OK;
}

static void print_verbose(const struct pipit_turn *t) {
    for (size_t i = 0; i < t->n_calls; i++) {
        const struct pipit_call_record *c = &t->calls[i];
        fprintf(stderr, "  call %s(%s) -> %s%s%s\n", c->tool, c->args_json,
                c->status != PIPIT_OK ? pipit_status_str(c->status)
                : c->ok               ? "ok"
                                      : "failed: ",
                c->status == PIPIT_OK && !c->ok ? c->code : "",
                c->status == PIPIT_OK && c->ok ? "" : "");
        if (c->status == PIPIT_ERR_PARSE) {
            fprintf(stderr, "    %s\n", c->message); /* where the output stopped parsing */
        }
    }
    if (t->model_text != NULL && t->model_text[0] != '\0') {
        fprintf(stderr, "  model: %.300s%s\n", t->model_text,
                strlen(t->model_text) > 300 ? "..." : ""); /* the last step's raw output */
    }
    fprintf(stderr,
            "  [%d model call%s, prefilled %lld (permanent %lld, memory %lld), decoded %lld; "
            "permanent %d tokens, ephemeral max %d; memory %d lines / %d bytes%s; %.0f ms "
            "(model %.0f, sampling %.1f of which grammar %.1f), first token %.0f ms]\n",
            t->model_calls, t->model_calls == 1 ? "" : "s", (long long)t->prefill_tokens,
            (long long)t->permanent_prefill_tokens, (long long)t->memory_prefill_tokens,
            (long long)t->decode_tokens, t->n_permanent, t->n_ephemeral_max, t->memory_lines,
            t->memory_bytes, t->trimmed_lines > 0 ? ", trimmed" : "", t->latency_ms, t->model_ms,
            t->sample_ms, t->constraint_ms, t->ttft_ms);
    if (t->tracker_ms > 0) {
        fprintf(stderr, "  [State-Tracker: %d line%s in %.0f ms, its KV %lld bytes]\n",
                t->tracker_lines, t->tracker_lines == 1 ? "" : "s", t->tracker_ms,
                (long long)t->tracker_kv_bytes);
    }
}

/* One utterance through the agent; prints the result. *refused is set when the agent refused
 * the utterance itself (empty, too long, not UTF-8) and nothing was done. */
static int run_one(struct agent_session *s,
                   const struct agent_opts *o,
                   const char *cmd,
                   int turn,
                   const char *utterance,
                   bool *refused) {
    *refused = false;
    struct pipit_turn *t = NULL;
    enum pipit_status st = pipit_agent_turn(s->agent, utterance, &t);
    if (st != PIPIT_OK) {
        *refused = st == PIPIT_ERR_INVALID_ARG;
        report_failure(o, cmd, turn, st, pipit_agent_errmsg(s->agent));
        return CLI_EXIT_FAIL;
    }
    if (o->json) {
        char *j = pipit_turn_to_json(t);
        printf("%s\n", j != NULL ? j : "{}");
        pipit_free(j);
    } else {
        printf("%s\n", t->sentence);
    }
    fflush(stdout);
    if (o->session != NULL) {
        struct pipit_error err;
        if (pipit_agent_save(s->agent, o->session, &err) != PIPIT_OK) {
            fprintf(stderr, "pipit: %s\n", err.text);
        }
    }
    if (t->cloud_requests > 0 && !o->json) {
        fprintf(stderr, "  (this request went to the cloud assistant)\n");
    }
    if (o->verbose) {
        print_verbose(t);
    }
    pipit_turn_free(t);
    return CLI_EXIT_OK;
}

/* Read one whole line from stdin without its newline (and a '\r' before it); false at end of
 * input. A line of any length is consumed whole: at most `size - 1` bytes are kept and *len is
 * its real length, so a caller refuses an over-long line as one utterance instead of running
 * its pieces as several. */
static bool read_line(char *buf, size_t size, size_t *len) {
    size_t n = 0;
    int c = EOF;
    bool any = false;
    while ((c = getchar()) != EOF) {
        any = true;
        if (c == '\n') {
            break;
        }
        if (n + 1 < size) {
            buf[n] = (char)c;
        }
        n++;
    }
    if (!any) {
        return false;
    }
    size_t kept = n + 1 < size ? n : size - 1;
    if (n == kept && kept > 0 && buf[kept - 1] == '\r') {
        kept--;
        n--;
    }
    buf[kept] = '\0';
    *len = n;
    return true;
}

/* A line from stdin as one turn: blank lines are skipped, a line longer than an utterance may
 * be is refused whole here (the agent never sees a piece of it). */
static int run_line(struct agent_session *s,
                    const struct agent_opts *o,
                    const char *cmd,
                    int *turn,
                    const char *line,
                    size_t len,
                    bool *refused) {
    *refused = false;
    if (len <= PIPIT_MAX_UTTERANCE_BYTES) {
        bool blank = true;
        for (const char *p = line; *p != '\0' && blank; p++) {
            blank = *p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v';
        }
        if (blank && len == strlen(line)) {
            return CLI_EXIT_OK;
        }
        return run_one(s, o, cmd, (*turn)++, line, refused);
    }
    char msg[200];
    snprintf(msg, sizeof(msg),
             "the utterance is %zu bytes; the limit is %d bytes (refused whole, nothing was done)",
             len, PIPIT_MAX_UTTERANCE_BYTES);
    *refused = true;
    report_failure(o, cmd, (*turn)++, PIPIT_ERR_INVALID_ARG, msg);
    return CLI_EXIT_FAIL;
}

int cmd_run(int argc, char **argv) {
    struct agent_opts o;
    int first = parse_agent_opts(argc, argv, "run", &o);
    if (first < 0) {
        return CLI_EXIT_USAGE;
    }
    struct agent_session s;
    int rc = session_open(&o, "run", &s);
    if (rc != CLI_EXIT_OK) {
        return rc;
    }
    int turn = 0;
    bool refused = false;
    int failed = 0; /* turns that failed (--keep-going goes on after them) */
    if (first < argc) {
        for (int i = first; i < argc && (rc == CLI_EXIT_OK || o.keep_going); i++) {
            rc = run_one(&s, &o, "run", turn++, argv[i], &refused);
            failed += rc != CLI_EXIT_OK;
        }
    } else {
        static char line[PIPIT_MAX_UTTERANCE_BYTES + 2];
        size_t len = 0;
        while ((rc == CLI_EXIT_OK || o.keep_going) && read_line(line, sizeof(line), &len)) {
            rc = run_line(&s, &o, "run", &turn, line, len, &refused);
            failed += rc != CLI_EXIT_OK;
        }
    }
    session_free(&s);
    return failed > 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* ============================================================================ chat */

static struct pipit_agent *volatile chat_agent = NULL;
static atomic_int chat_interrupts = 0;
static volatile sig_atomic_t chat_in_turn = 0;

static void on_sigint(int sig) {
    (void)sig;
    int n = atomic_fetch_add(&chat_interrupts, 1) + 1;
    if (chat_in_turn && n == 1 && chat_agent != NULL) {
        pipit_agent_cancel(chat_agent); /* atomic stores only */
        return;
    }
    static const char msg[] = "\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)w;
    _exit(130);
}

int cmd_chat(int argc, char **argv) {
    struct agent_opts o;
    int first = parse_agent_opts(argc, argv, "chat", &o);
    if (first < 0) {
        return CLI_EXIT_USAGE;
    }
    if (first < argc) {
        fprintf(stderr, "pipit chat: unexpected argument '%s' (utterances are typed)\n",
                argv[first]);
        return CLI_EXIT_USAGE;
    }
    struct agent_session s;
    int rc = session_open(&o, "chat", &s);
    if (rc != CLI_EXIT_OK) {
        return rc;
    }
    chat_agent = s.agent;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    bool tty = isatty(STDIN_FILENO) != 0;
    if (tty) {
        const char *name = pipit_device_name(s.device);
        fprintf(stderr, "pipit chat: %s%s. Type a command; Ctrl-D to quit.\n",
                name[0] != '\0' ? name : "no device", name[0] != '\0' ? " device" : "");
    }
    static char line[PIPIT_MAX_UTTERANCE_BYTES + 2];
    int turn = 0;
    for (;;) {
        if (tty) {
            fprintf(stderr, "> ");
        }
        atomic_store(&chat_interrupts, 0);
        size_t len = 0;
        if (!read_line(line, sizeof(line), &len)) {
            break;
        }
        bool refused = false;
        chat_in_turn = 1;
        rc = run_line(&s, &o, "chat", &turn, line, len, &refused);
        chat_in_turn = 0;
        if (refused) {
            rc = CLI_EXIT_OK; /* a person retypes a refused line; the chat goes on */
        }
        if (rc != CLI_EXIT_OK) {
            break;
        }
    }
    chat_agent = NULL;
    session_free(&s);
    return rc;
}
