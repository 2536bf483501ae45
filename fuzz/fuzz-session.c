/*
 * fuzz-session.c - the session reader and loader: a file on disk through session_read() and
 * pipit_agent_load() into an agent on the scripted backend (tests/fake_backend.h: no model
 * needed; its "KV state" is its permanent text), then what a resumed agent does next: show
 * its state, undo, run a call, save, and load the save back (docs/memory.md, "Sessions").
 *
 * Input: one mode byte, then the payload.
 *   bit 0  0: the payload is the session JSON; the harness writes a well-formed file around it
 *             (magic, version, sizes, checksum, model fingerprint 0 = the scripted backend's)
 *          1: the payload is the whole file, as it is
 *   bit 1  JSON mode: append a KV part the scripted backend accepts (its own permanent text),
 *          so a matching prompt_hash restores the "KV" and the counts in the JSON are used;
 *          raw mode: rewrite the last 8 bytes as the right checksum (reach past the checksum)
 *   bit 2  the agent uses memory mode "full" instead of "cso"
 * Promise checked: a session the loader accepted, once resumed and saved again, loads again.
 * Seeds: fuzz/corpus/session/, written by this target itself when PIPIT_FUZZ_SESSION_SEEDS
 * names a directory (see LLVMFuzzerInitialize).
 */
#include "agent.h"
#include "fake_backend.h"
#include "fileio.h"
#include "fuzz.h"
#include "session.h"

#include <sys/stat.h>
#include <unistd.h>

static struct pipit_toolset *g_camera;
static char g_in[600], g_out[600];

static void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void write_file(const char *path, const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
    FILE *f = fopen(path, "wb");
    if (f == NULL || (na > 0 && fwrite(a, 1, na, f) != na) ||
        (nb > 0 && fwrite(b, 1, nb, f) != nb) || fclose(f) != 0) {
        fuzz_fail("cannot write %s", path);
    }
}

static uint8_t *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fuzz_fail("cannot read %s", path);
    }
    uint8_t *buf = malloc(1 << 20);
    *n = buf != NULL ? fread(buf, 1, 1 << 20, f) : 0;
    fclose(f);
    return buf;
}

struct resumed {
    struct fake_backend fake;
    struct pipit_device *camera;
    struct pipit_agent *agent;
};

static void agent_up(struct resumed *r, bool full_memory) {
    memset(&r->fake, 0, sizeof(r->fake));
    r->fake.script[r->fake.n_script++] = "<call>set_zoom(level=2)";
    r->fake.script[r->fake.n_script++] = "<call>set_flash(mode=\"on\")";
    struct pipit_agent_params p = pipit_agent_default_params();
    p.memory = full_memory ? PIPIT_MEMORY_FULL : PIPIT_MEMORY_CSO;
    struct pipit_error err;
    r->camera = NULL;
    if (pipit_device_init("camera", g_camera, NULL, &r->camera, &err) != PIPIT_OK) {
        fuzz_fail("cannot create the camera: %s", err.text);
    }
    p.device = r->camera;
    if (agent_new_with_backend(NULL, g_camera, &p, fake_backend_wrap(&r->fake), &r->agent, &err) !=
        PIPIT_OK) {
        fuzz_fail("cannot create the agent: %s", err.text);
    }
}

static void turn(struct pipit_agent *a, const char *utterance) {
    struct pipit_turn *t = NULL;
    if (pipit_agent_turn(a, utterance, &t) == PIPIT_OK && t != NULL) {
        (void)strlen(t->sentence);
        char *j = pipit_turn_to_json(t);
        pipit_free(j);
    }
    pipit_turn_free(t);
}

/* Seeds from real saves: a fresh agent, one after a few turns, in both memory modes. */
static void write_seeds(const char *dir) {
    for (int mode = 0; mode < 2; mode++) {
        for (int turns = 0; turns < 2; turns++) {
            struct resumed r;
            agent_up(&r, mode == 1);
            if (turns) {
                turn(r.agent, "zoom to 2x");
                turn(r.agent, "flash on");
            }
            struct pipit_error err;
            if (pipit_agent_save(r.agent, g_in, &err) != PIPIT_OK) {
                fuzz_fail("cannot save a seed: %s", err.text);
            }
            pipit_agent_free(r.agent);
            pipit_device_free(r.camera);
            size_t n = 0;
            uint8_t *file = read_file(g_in, &n);
            uint64_t jlen = 0;
            for (int i = 0; i < 8; i++) {
                jlen |= (uint64_t)file[24 + i] << (8 * i);
            }
            uint8_t bits = (uint8_t)(mode == 1 ? 4 : 0);
            const char *names[4] = {"json", "json-kv", "file", "file-sum"};
            for (uint8_t v = 0; v < 4; v++) {
                /* json: bit 0 clear, bit 1 = KV part; file: bit 0 set, bit 1 = fix the sum */
                uint8_t m = (uint8_t)(bits | (v >= 2 ? 1 : 0) | ((v & 1) ? 2 : 0));
                char path[1024];
                snprintf(path, sizeof(path), "%s/%s-%s-%d", dir, names[v], mode ? "full" : "cso",
                         turns);
                if (v < 2) {
                    write_file(path, &m, 1, file + 40, (size_t)jlen);
                } else {
                    write_file(path, &m, 1, file, n);
                }
            }
            free(file);
        }
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    g_camera = fuzz_load_pack("camera");
    fuzz_scratch_path(g_in, sizeof(g_in), "in.session");
    fuzz_scratch_path(g_out, sizeof(g_out), "out.session");
    const char *seeds = getenv("PIPIT_FUZZ_SESSION_SEEDS");
    if (seeds != NULL && seeds[0] != '\0') {
        write_seeds(seeds);
        unlink(g_in);
        exit(0);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) {
        return 0;
    }
    uint8_t mode = data[0];
    data++;
    size--;
    struct resumed r;
    agent_up(&r, (mode & 4) != 0);
    if (mode & 1) {
        if ((mode & 2) && size >= 48) {
            uint8_t *copy = malloc(size);
            memcpy(copy, data, size);
            put_u64(copy + size - 8, fileio_fnv1a(FILEIO_FNV_OFFSET, copy, size - 8));
            write_file(g_in, copy, size, NULL, 0);
            free(copy);
        } else {
            write_file(g_in, data, size, NULL, 0);
        }
    } else {
        uint8_t *kv = NULL;
        size_t kv_len = 0;
        if ((mode & 2) && fake_save_kv(&r.fake, &kv, &kv_len) != PIPIT_OK) {
            fuzz_fail("cannot capture the scripted backend's state");
        }
        uint8_t head[40] = "PIPITSES";
        head[8] = SESSION_VERSION;
        put_u64(head + 24, size);
        put_u64(head + 32, kv_len);
        uint8_t tail[8];
        uint64_t sum = fileio_fnv1a(FILEIO_FNV_OFFSET, head, sizeof(head));
        sum = fileio_fnv1a(sum, data, size);
        sum = fileio_fnv1a(sum, kv, kv_len);
        put_u64(tail, sum);
        FILE *f = fopen(g_in, "wb");
        if (f == NULL || fwrite(head, 1, 40, f) != 40 || fwrite(data, 1, size, f) != size ||
            (kv_len > 0 && fwrite(kv, 1, kv_len, f) != kv_len) || fwrite(tail, 1, 8, f) != 8 ||
            fclose(f) != 0) {
            fuzz_fail("cannot write %s", g_in);
        }
        free(kv);
    }

    struct pipit_session_info info;
    struct pipit_error err;
    enum pipit_status st = pipit_agent_load(r.agent, g_in, &info, &err);
    if (st == PIPIT_OK) {
        char *state = pipit_agent_state_json(r.agent);
        pipit_free(state);
        turn(r.agent, "undo");
        turn(r.agent, "zoom to 2x");
        if (pipit_agent_save(r.agent, g_out, &err) == PIPIT_OK) {
            struct resumed again;
            agent_up(&again, (mode & 4) != 0);
            if (pipit_agent_load(again.agent, g_out, NULL, &err) != PIPIT_OK) {
                fuzz_fail("a resumed session, saved again, does not load: %s", err.text);
            }
            turn(again.agent, "undo");
            pipit_agent_free(again.agent);
            pipit_device_free(again.camera);
        }
    } else {
        /* a refused load leaves the agent as it was: it still runs */
        turn(r.agent, "zoom to 2x");
    }
    pipit_agent_free(r.agent);
    pipit_device_free(r.camera);
    unlink(g_in);
    unlink(g_out);
    return 0;
}
