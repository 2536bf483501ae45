/*
 * fuzz-scenarios.c - the scenario loader: pipit_scenarios_load_string() on any bytes (JSON
 * Lines), then the accessors and the model-free oracle pipit_scenarios_check() against the
 * shipped camera and phone packs, not strict (it goes on past findings), which replays the
 * expected calls on the simulated devices (docs/eval.md). Promise checked: the findings counted
 * are the findings reported.
 *
 * Seeds: fuzz/corpus/scenarios/ (lines of eval/camera.jsonl and eval/phone.jsonl, alone and
 * a few together, and some broken ones).
 */
#include "fuzz.h"

static struct pipit_eval_device g_devices[2];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    g_devices[0] = (struct pipit_eval_device){"camera", fuzz_load_pack("camera")};
    g_devices[1] = (struct pipit_eval_device){"phone", fuzz_load_pack("phone")};
    return 0;
}

static void on_finding(const char *message, void *user_data) {
    (void)strlen(message);
    (*(size_t *)user_data)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct pipit_scenarios *set = NULL;
    struct pipit_error err;
    /* the buffer as it is: the loader must read exactly `size` bytes */
    enum pipit_status st =
        pipit_scenarios_load_string((const char *)data, size, "fuzz", &set, &err);
    if (st != PIPIT_OK) {
        if (set != NULL) {
            fuzz_fail("load failed (%s) but returned a set", pipit_status_str(st));
        }
        if (memchr(err.text, '\0', sizeof(err.text)) == NULL) {
            fuzz_fail("error text is not NUL-terminated");
        }
        return 0;
    }
    size_t n = pipit_scenarios_count(set);
    for (size_t i = 0; i <= n; i++) { /* one past the end: NULL / 0 */
        const char *id = pipit_scenarios_id(set, i);
        const char *cat = pipit_scenarios_category(set, i);
        const char *dev = pipit_scenarios_device(set, i);
        int32_t turns = pipit_scenarios_n_turns(set, i);
        if (i < n && (id == NULL || cat == NULL || dev == NULL || turns < 0 ||
                      turns > PIPIT_SCENARIO_MAX_TURNS)) {
            fuzz_fail("scenario %zu: missing facts or %d turns", i, (int)turns);
        }
    }
    /* not strict: the oracle goes on past each finding, so it replays every turn */
    struct pipit_scenarios_check_params cp = pipit_scenarios_check_default_params();
    size_t seen = 0, n_findings = 0;
    cp.on_finding = on_finding;
    cp.user_data = &seen;
    if (pipit_scenarios_check(set, g_devices, 2, &cp, &n_findings, &err) == PIPIT_OK &&
        n_findings != seen) {
        fuzz_fail("the check counted %zu findings and reported %zu", n_findings, seen);
    }
    pipit_scenarios_free(set);
    return 0;
}
