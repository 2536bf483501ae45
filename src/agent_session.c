/*
 * agent_session.c - sessions: pipit_agent_save() writes the agent's memory, action log and
 * breaker as JSON beside the backend's KV state (session.c); pipit_agent_load() checks them
 * against this agent (model, tools, format) and restores them.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_context.h"
#include "agent_followup.h"
#include "agent_impl.h"
#include "agent_prompt.h"
#include "device.h"
#include "fileio.h"
#include "memory.h"
#include "policy.h"
#include "session.h"
#include "status.h"
#include "toolspec.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================================ sessions */

/* The JSON part of a session: everything but the KV state. */
static char *session_json(const struct pipit_agent *a) {
    json_t *log = json_array();
    for (int32_t i = 0; i < a->log_n; i++) {
        const struct action_entry *e = &a->log[i];
        json_array_append_new(log, json_pack("{s:s,s:i,s:O?,s:I,s:I}", "tool",
                                             a->ts->tools[e->tool].name, "kind", (int)e->kind,
                                             "snapshot", e->snapshot, "turn", (json_int_t)e->turn,
                                             "utt", (json_int_t)e->utt));
    }
    json_t *device = a->dev != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
    json_t *root = json_pack(
        "{s:i,s:s,s:s?,s:i,s:i,s:I,s:I,s:I,s:o,s:o,s:o}", "pipit_session", SESSION_VERSION,
        "syntax", pipit_call_syntax_str(a->syntax), "device_name",
        pipit_device_name(a->params.device), "tools_format", (int)a->params.tools_format,
        "memory_mode", (int)a->params.memory, "prompt_hash",
        (json_int_t)(fileio_fnv1a(FILEIO_FNV_OFFSET, a->system_text, strlen(a->system_text)) >> 1),
        "system_tokens", (json_int_t)a->system_tokens, "superseded_at_rebuild",
        (json_int_t)a->superseded_at_rebuild, "memory", memory_to_json(&a->mem), "log", log,
        "device", device != NULL ? device : json_null());
    char *s = root != NULL
                  ? json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER)
                  : NULL;
    json_decref(root);
    return s;
}

static enum pipit_status
session_save(struct pipit_agent *a, const char *path, struct pipit_error *err) {
    pipit_error_clear(err);
    if (a == NULL || path == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "agent: save: NULL argument");
    }
    /* the system prefix must be in the KV cache before its state is saved */
    int64_t n = 0;
    enum pipit_status st = a->backend.ops->flush(a->backend.self, &n);
    if (st != PIPIT_OK) {
        return pipit_error_set(err, st, "agent: save: cannot prefill the prompt");
    }
    if (a->system_tokens < 0) {
        int32_t np = 0, ne = 0;
        a->backend.ops->lengths(a->backend.self, &np, &ne);
        a->system_tokens = np;
    }
    char *json = session_json(a);
    uint8_t *kv = NULL;
    size_t kv_len = 0;
    st = json == NULL ? PIPIT_ERR_NOMEM : a->backend.ops->save_kv(a->backend.self, &kv, &kv_len);
    if (st == PIPIT_OK) {
        st = session_write(path, a->model != NULL ? pipit_model_fingerprint(a->model) : 0, json, kv,
                           kv_len, err);
    } else {
        pipit_error_set(err, st, "agent: save: cannot capture the KV state");
    }
    free(json);
    free(kv);
    return st;
}
static enum pipit_status session_load(struct pipit_agent *a,
                                      const char *path,
                                      struct pipit_session_info *info,
                                      struct pipit_error *err) {
    pipit_error_clear(err);
    struct pipit_session_info dummy;
    if (info == NULL) {
        info = &dummy;
    }
    memset(info, 0, sizeof(*info));
    if (a == NULL || path == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "agent: load: NULL argument");
    }
    uint64_t fp = 0;
    char *json_text = NULL;
    uint8_t *kv = NULL;
    size_t kv_len = 0;
    enum pipit_status st = session_read(path, &fp, &json_text, &kv, &kv_len, err);
    if (st != PIPIT_OK) {
        return st;
    }
    json_error_t jerr;
    json_t *root = json_loads(json_text, 0, &jerr);
    free(json_text);
    const json_t *log = json_object_get(root, "log");
    const json_t *device = json_object_get(root, "device");
    const char *syntax = json_string_value(json_object_get(root, "syntax"));
    json_int_t tools_format = json_integer_value(json_object_get(root, "tools_format"));
    if (!json_is_object(root) || !json_is_array(log) || syntax == NULL) {
        json_decref(root);
        free(kv);
        return pipit_error_set(err, PIPIT_ERR_CORRUPT, "agent: load: %s: malformed session JSON",
                               path);
    }
    if (strcmp(syntax, pipit_call_syntax_str(a->syntax)) != 0 ||
        tools_format != a->params.tools_format) {
        pipit_error_set(err, PIPIT_ERR_STATE,
                        "agent: load: %s was made with the %s syntax and tools format %d; "
                        "this agent uses %s and %d",
                        path, syntax, (int)tools_format, pipit_call_syntax_str(a->syntax),
                        (int)a->params.tools_format);
        json_decref(root);
        free(kv);
        return PIPIT_ERR_STATE;
    }
    /* a session of another tool set is refused, not restored: its memory, undo log and device
     * state speak of tools and a device this agent does not have */
    const char *device_name = json_string_value(json_object_get(root, "device_name"));
    const char *my_device = pipit_device_name(a->params.device);
    device_name = device_name != NULL && device_name[0] != '\0' ? device_name : "";
    my_device = my_device != NULL && my_device[0] != '\0' ? my_device : "";
    if (strcmp(device_name, my_device) != 0) {
        pipit_error_set(err, PIPIT_ERR_STATE,
                        "agent: load: %s was made for the device '%s'; this agent runs '%s'", path,
                        device_name, my_device);
        json_decref(root);
        free(kv);
        return PIPIT_ERR_STATE;
    }
    {
        size_t k;
        json_t *le;
        json_array_foreach(log, k, le) {
            const char *tool = json_string_value(json_object_get(le, "tool"));
            if (tool != NULL && pipit_toolset_find(a->ts, tool) < 0) {
                pipit_error_set(err, PIPIT_ERR_STATE,
                                "agent: load: %s was made with another tool set: its undo log "
                                "names the tool '%s', which this tool set does not have",
                                path, tool);
                json_decref(root);
                free(kv);
                return PIPIT_ERR_STATE;
            }
        }
    }
    /* everything is checked before anything changes: the action log... */
    struct action_entry *entries = calloc((size_t)a->params.undo_slots, sizeof(*entries));
    int32_t n_entries = 0;
    size_t i;
    json_t *e;
    bool ok = entries != NULL;
    json_array_foreach(log, i, e) {
        if (!ok) {
            break;
        }
        int32_t tool = pipit_toolset_find(a->ts, json_string_value(json_object_get(e, "tool")));
        json_int_t kind = json_integer_value(json_object_get(e, "kind"));
        json_t *snap = json_object_get(e, "snapshot");
        ok = tool >= 0 && (kind == PIPIT_UNDO_KEYS || kind == PIPIT_UNDO_IMPOSSIBLE ||
                           kind == PIPIT_UNDO_NO_STATE);
        /* the turn that made it; a session without turns (older files) has one per action */
        json_t *tn = json_object_get(e, "turn");
        int64_t turn = json_is_integer(tn) ? (int64_t)json_integer_value(tn) : (int64_t)i + 1;
        json_t *un = json_object_get(e, "utt");
        int64_t utt = json_is_integer(un) ? (int64_t)json_integer_value(un) : turn;
        if (ok && n_entries < a->params.undo_slots) {
            entries[n_entries++] =
                (struct action_entry){tool, (enum pipit_undo_kind)kind,
                                      json_is_object(snap) ? json_incref(snap) : NULL, turn, utt};
        }
    }
    /* ...the memory, on a copy... */
    struct memory mem;
    memory_init(&mem, a->mem.mode);
    if (ok) {
        st = memory_from_json(&mem, json_object_get(root, "memory"), err);
    } else {
        st = pipit_error_set(err, PIPIT_ERR_CORRUPT, "agent: load: %s: $.log is malformed", path);
    }
    /* ...and the device state (all-or-nothing by contract) last */
    if (st == PIPIT_OK && a->dev != NULL && json_is_object(device)) {
        st = a->dev->ops->set_state(a->dev->self, device, err);
    }
    if (st != PIPIT_OK) {
        for (int32_t k = 0; k < n_entries; k++) {
            json_decref(entries[k].snapshot);
        }
        free(entries);
        memory_free(&mem);
        json_decref(root);
        free(kv);
        return st;
    }
    for (int32_t k = 0; k < a->log_n; k++) {
        json_decref(a->log[k].snapshot);
    }
    free(a->log);
    a->log = entries;
    a->log_n = n_entries;
    for (int32_t k = 0; k < n_entries; k++) {
        a->turn_seq = entries[k].turn > a->turn_seq ? entries[k].turn : a->turn_seq;
        a->utt_seq = entries[k].utt > a->utt_seq ? entries[k].utt : a->utt_seq;
    }
    memory_free(&a->mem);
    a->mem = mem;
    policy_breaker_reset(&a->breaker);
    agent_followup_forget(a); /* a follow-up refers to an action of this process's turns */

    /* the KV state: only from the same model and the same prompt; else rebuilt from the CSO */
    json_int_t prompt_hash = json_integer_value(json_object_get(root, "prompt_hash"));
    json_int_t mine =
        (json_int_t)(fileio_fnv1a(FILEIO_FNV_OFFSET, a->system_text, strlen(a->system_text)) >> 1);
    uint64_t my_fp = a->model != NULL ? pipit_model_fingerprint(a->model) : 0;
    const char *why = NULL;
    if (fp != my_fp) {
        why = "the session was made with another model";
    } else if (prompt_hash != mine) {
        why = "the system prompt or tools changed";
    } else if (a->mem.n_cleaned > 0) {
        why = "the memory held text from outside (docs/memory.md)"; /* the KV holds it too */
    } else if (a->backend.ops->load_kv(a->backend.self, kv, kv_len) != PIPIT_OK) {
        why = "the KV state does not fit this context";
    }
    free(kv);
    /* the counts the session states must agree with the KV state it brought */
    json_int_t sys_tokens = json_integer_value(json_object_get(root, "system_tokens"));
    json_int_t superseded = json_integer_value(json_object_get(root, "superseded_at_rebuild"));
    if (why == NULL) {
        int32_t kv_np = 0, kv_ne = 0;
        a->backend.ops->lengths(a->backend.self, &kv_np, &kv_ne);
        if (sys_tokens <= 0 || sys_tokens > kv_np || superseded < 0 ||
            (size_t)superseded > a->mem.n_superseded) {
            why = "the session's token counts do not match its KV state";
        }
    }
    /* a session from an agent with more room (a longer context, a model trained on longer
     * prompts) may hold more memory than this agent's prompt limit allows: trim it now, or
     * every later turn would fail with a full context */
    size_t trimmed_at_load = 0;
    if (a->model != NULL) {
        char *text = agent_memory_prefix_text(a); /* counted as the prefix will hold it */
        int32_t n_sys = agent_count_tokens(a, a->system_text, true);
        int32_t n_mem = text != NULL && text[0] != '\0' ? agent_prefix_tokens(a, text) : 0;
        free(text);
        int32_t budget = agent_memory_budget(a);
        if (n_sys >= 0 && n_mem > 0 && n_sys + n_mem > budget) {
            int32_t room = budget - n_sys;
            size_t target =
                room > 0 ? (size_t)((double)memory_bytes(&a->mem) * 0.8 * room / n_mem) : 0;
            trimmed_at_load = memory_trim(&a->mem, target);
            if (why == NULL) {
                why = "its memory is longer than this agent's prompt limit";
            }
        }
    }
    if (why == NULL) {
        info->kv_restored = true;
        a->system_tokens = (int32_t)sys_tokens;
        a->superseded_at_rebuild = (size_t)superseded;
        st = agent_sync_tracker(a); /* the tracker's context is not saved: it reads the CSO */
        pipit_format(info->note, sizeof(info->note), "restored the KV state");
    } else {
        st = agent_rebuild_prefix(a);
        pipit_format(info->note, sizeof(info->note), "%s: rebuilt the context from the memory%s",
                     why, trimmed_at_load > 0 ? " (its oldest lines trimmed to fit)" : "");
    }
    int32_t np = 0, ne = 0;
    a->backend.ops->lengths(a->backend.self, &np, &ne);
    info->n_permanent = np;
    info->memory_lines = (int32_t)a->mem.n;
    json_decref(root);
    return st;
}

/* The public pair: a failure is in `err` (when given) and in pipit_agent_errmsg(). */
enum pipit_status
pipit_agent_save(struct pipit_agent *a, const char *path, struct pipit_error *err) {
    struct pipit_error local;
    err = err != NULL ? err : &local;
    enum pipit_status st = session_save(a, path, err);
    return st != PIPIT_OK && a != NULL ? agent_fail_err(a, st, err) : st;
}

enum pipit_status pipit_agent_load(struct pipit_agent *a,
                                   const char *path,
                                   struct pipit_session_info *info,
                                   struct pipit_error *err) {
    struct pipit_error local;
    err = err != NULL ? err : &local;
    enum pipit_status st = session_load(a, path, info, err);
    return st != PIPIT_OK && a != NULL ? agent_fail_err(a, st, err) : st;
}
