/*
 * cmd_agent.c - `pipit chat` (interactive) and `pipit run` (one-shot) over the agent API.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

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
    const char *tools;
    const char *device;
    const char *init;
    const char *syntax;
    const char *cloud_url;
    const char *session;
    long threads;
    long max_steps;
    double budget_ms;
    bool no_grammar;
    bool gbnf;
    bool tracker;
    bool verbose;
    bool json;
};

static void agent_usage(FILE *out, const char *cmd) {
    fprintf(
        out,
        "usage: pipit %s [options]%s\n"
        "  --model FILE      GGUF model (default: the bundled %s)\n"
        "  --tools FILE      tool specification (default: tools/<device>.json)\n"
        "  --device NAME     simulated device: camera (default) or phone\n"
        "  --init JSON       device state overrides, e.g. '{\"recording\": true}'\n"
        "  --syntax NAME     call syntax: pipit or hermes (default: hermes for models with\n"
        "                    a chat template, else pipit)\n"
        "  --no-grammar      decode unconstrained (calls are still validated)\n"
        "  --gbnf            constrain with llama.cpp's GBNF sampler instead of pipit's\n"
        "                    own decoder (--fast-grammar, the default)\n"
        "  --tracker         run the State-Tracker after each turn (docs/memory.md)\n"
        "  --threads N       CPU threads (default: all usable cores)\n"
        "  --max-steps N     model steps per utterance (default 3)\n"
        "  --budget-ms X     wall-clock budget per turn (default 15000)\n"
        "  -v                also print calls, tokens and latency\n"
        "%s",
        cmd, strcmp(cmd, "run") == 0 ? " [\"utterance\" ...]" : "", PIPIT_DEFAULT_MODEL,
        strcmp(cmd, "run") == 0
            ? "  --json            one JSON object per turn (sentence, calls, state, counters)\n"
              "Utterances come from the arguments, or one per line from stdin.\n"
            : "Ctrl-C cancels the current turn; a second Ctrl-C exits.\n");
}

/* Parse options; returns the index of the first non-option argument, or -1 on error. */
static int parse_agent_opts(int argc, char **argv, const char *cmd, struct agent_opts *o) {
    memset(o, 0, sizeof(*o));
    o->model = PIPIT_DEFAULT_MODEL;
    o->device = "camera";
    o->threads = 0;
    o->max_steps = 3;
    o->budget_ms = 15000;
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
        if (cli_opt_str(argc, argv, &i, "--model", &o->model, &bad) ||
            cli_opt_str(argc, argv, &i, "--tools", &o->tools, &bad) ||
            cli_opt_str(argc, argv, &i, "--device", &o->device, &bad) ||
            cli_opt_str(argc, argv, &i, "--init", &o->init, &bad) ||
            cli_opt_str(argc, argv, &i, "--syntax", &o->syntax, &bad) ||
            cli_opt_str(argc, argv, &i, "--cloud-url", &o->cloud_url, &bad) ||
            cli_opt_str(argc, argv, &i, "--session", &o->session, &bad) ||
            cli_opt_int(argc, argv, &i, "--threads", 0, 512, &o->threads, &bad) ||
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
    return i;
}

struct agent_session {
    struct pipit_cloud *cloud;
    struct pipit_model *model;
    struct pipit_toolset *tools;
    struct pipit_agent *agent;
};

static void session_free(struct agent_session *s) {
    pipit_agent_free(s->agent);
    pipit_toolset_free(s->tools);
    pipit_model_free(s->model);
    pipit_cloud_free(s->cloud);
}

static int session_open(const struct agent_opts *o, const char *cmd, struct agent_session *s) {
    memset(s, 0, sizeof(*s));
    struct pipit_error err;
    struct stat st;
    if (stat(o->model, &st) != 0 && strcmp(o->model, PIPIT_DEFAULT_MODEL) == 0) {
        fprintf(stderr,
                "pipit %s: the bundled model %s is missing; pass --model FILE (any GGUF; "
                "`pipit make-model` makes a random test model)\n",
                cmd, o->model);
        return CLI_EXIT_FAIL;
    }
    if (pipit_model_load(o->model, NULL, &s->model, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit %s: %s\n", cmd, err.text);
        return CLI_EXIT_FAIL;
    }
    char tools_path[4096];
    if (o->tools != NULL) {
        snprintf(tools_path, sizeof(tools_path), "%s", o->tools);
    } else {
        snprintf(tools_path, sizeof(tools_path), "%s/%s.json", PIPIT_TOOLS_DIR, o->device);
    }
    if (pipit_toolset_load_file(tools_path, &s->tools, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit %s: %s\n", cmd, err.text);
        session_free(s);
        return CLI_EXIT_FAIL;
    }
    struct pipit_agent_params ap = pipit_agent_default_params();
    ap.device = o->device;
    ap.device_init_json = o->init;
    ap.grammar = !o->no_grammar;
    ap.fast_grammar = !o->gbnf;
    ap.state_tracker = o->tracker;
    ap.n_threads = (int32_t)o->threads;
    ap.max_steps = (int32_t)o->max_steps;
    ap.turn_budget_ms = o->budget_ms;
    if (o->syntax != NULL) {
        ap.syntax = strcmp(o->syntax, "hermes") == 0 ? PIPIT_SYNTAX_HERMES : PIPIT_SYNTAX_PIPIT;
    }
    if (pipit_agent_new(s->model, s->tools, &ap, &s->agent, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit %s: %s\n", cmd, err.text);
        session_free(s);
        return CLI_EXIT_FAIL;
    }
    struct pipit_cloud_params cp = pipit_cloud_default_params();
    pipit_cloud_params_from_env(&cp);
    if (o->cloud_url != NULL) {
        cp.url = o->cloud_url;
    }
    if (pipit_cloud_init(&cp, &s->cloud, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit %s: %s\n", cmd, err.text);
        session_free(s);
        return CLI_EXIT_FAIL;
    }
    pipit_agent_set_cloud(s->agent, s->cloud);
    if (o->session != NULL && access(o->session, F_OK) == 0) {
        struct pipit_session_info info;
        if (pipit_agent_load(s->agent, o->session, &info, &err) != PIPIT_OK) {
            fprintf(stderr, "pipit %s: %s (starting a new session)\n", cmd, err.text);
        } else if (!o->json) {
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
    }
    fprintf(stderr,
            "  [%d model call%s, prefilled %lld (permanent %lld, memory %lld), decoded %lld; "
            "permanent %d tokens, ephemeral max %d; memory %d lines / %d bytes%s; %.0f ms, "
            "first token %.0f ms]\n",
            t->model_calls, t->model_calls == 1 ? "" : "s", (long long)t->prefill_tokens,
            (long long)t->permanent_prefill_tokens, (long long)t->memory_prefill_tokens,
            (long long)t->decode_tokens, t->n_permanent, t->n_ephemeral_max, t->memory_lines,
            t->memory_bytes, t->trimmed_lines > 0 ? ", trimmed" : "", t->latency_ms, t->ttft_ms);
    if (t->tracker_ms > 0) {
        fprintf(stderr, "  [State-Tracker: %d line%s in %.0f ms, its KV %lld bytes]\n",
                t->tracker_lines, t->tracker_lines == 1 ? "" : "s", t->tracker_ms,
                (long long)t->tracker_kv_bytes);
    }
}

/* One utterance through the agent; prints the result. */
static int run_one(struct agent_session *s, const struct agent_opts *o, const char *utterance) {
    struct pipit_turn *t = NULL;
    enum pipit_status st = pipit_agent_turn(s->agent, utterance, &t);
    if (st != PIPIT_OK) {
        fprintf(stderr, "pipit: %s\n", pipit_agent_errmsg(s->agent));
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

/* Read one line from stdin without its newline; false at end of input. */
static bool read_line(char *buf, size_t size) {
    if (fgets(buf, (int)size, stdin) == NULL) {
        return false;
    }
    size_t n = strlen(buf);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) {
        buf[--n] = '\0';
    }
    return true;
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
    if (first < argc) {
        for (int i = first; i < argc && rc == CLI_EXIT_OK; i++) {
            rc = run_one(&s, &o, argv[i]);
        }
    } else {
        char line[4096];
        while (rc == CLI_EXIT_OK && read_line(line, sizeof(line))) {
            if (line[0] != '\0') {
                rc = run_one(&s, &o, line);
            }
        }
    }
    session_free(&s);
    return rc;
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
        fprintf(stderr, "pipit chat: %s device. Type a command; Ctrl-D to quit.\n", o.device);
    }
    char line[4096];
    for (;;) {
        if (tty) {
            fprintf(stderr, "> ");
        }
        atomic_store(&chat_interrupts, 0);
        if (!read_line(line, sizeof(line))) {
            break;
        }
        if (line[0] == '\0') {
            continue;
        }
        chat_in_turn = 1;
        rc = run_one(&s, &o, line);
        chat_in_turn = 0;
        if (rc != CLI_EXIT_OK) {
            break;
        }
    }
    chat_agent = NULL;
    session_free(&s);
    return rc;
}
