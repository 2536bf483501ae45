/*
 * phone.h - a simulated smartphone: the device behind tools/phone.json.
 *
 * The phone holds an address book, message threads, a photo gallery, notes,
 * alarms, timers, IT tickets, a file tree, the radios (Wi-Fi, Bluetooth,
 * airplane mode), per-capability permissions, and the navigation and ride
 * state. Its results carry identifiers ("T-1001", "TH-2", "TM-1", "N-3",
 * "P-106", "F-204", "A-2", "R-1") that later turns refer to, so multi-turn
 * memory is exercised: create_ticket answers {"ticket_id": "T-1001", ...} and
 * a later get_ticket_status {"ticket_id": "T-1001"} finds it.
 *
 * New identifiers come from per-kind counters in the state (`next_ids`), so
 * the same call sequence always yields the same IDs. State keys, defaults,
 * tools, data and reason codes are a public contract, listed in docs/phone.md.
 *
 * Unlike the camera, a success's `data` is a small result (the IDs and what
 * changed, or the facts a query asked for), not a set of state keys: undo goes
 * through the pack's `undo.keys` (alarms, timers, notes, wifi, ...), which all
 * name state keys.
 *
 * Usage:
 *
 *     struct device phone;
 *     if (phone_device_new(tools, &phone, &err) != PIPIT_OK) { ... }  // tools/phone.json
 *     struct device_result r = {0};
 *     json_t *args = json_pack("{s:s,s:s}", "summary", "VPN is down", "priority", "high");
 *     phone.ops->call(phone.self, "create_ticket", args, &r);
 *     // r.ok, r.data {"ticket_id": "T-1001", "status": "open", "priority": "high"}
 *     device_result_clear(&r);
 *     json_decref(args);
 *     char line[128];
 *     device_state_line(&phone, line, sizeof(line));  // "wifi=on bluetooth=off ..."
 *     device_free(&phone);
 *
 * Thread safety: one thread at a time per phone (see device.h).
 */
#ifndef PIPIT_PHONE_H
#define PIPIT_PHONE_H

#include "device.h"

/* Create a phone for the tool set `ts` (borrowed during the call only; NULL: the phone's
 * built-in limits) in its default state (docs/phone.md). From `ts` it takes the travel modes,
 * ride services and ticket priorities it allows (each a subset of the ones it simulates), the
 * timer's range (set_timer.minutes) and every string argument's maxLength that is stricter than
 * the phone's own capacity; contacts, messages, IDs and the rest stay its own. On success `out`
 * holds the device (free it with device_free() or out->ops->destroy(out->self)); on failure
 * `out` is zeroed. Errors (err may be NULL): PIPIT_ERR_INVALID_ARG for a NULL `out` or an enum
 * value the phone does not simulate (the message names the tool set, the tool and the value),
 * PIPIT_ERR_NOMEM when an allocation fails. */
enum pipit_status
phone_device_new(const struct pipit_toolset *ts, struct device *out, struct pipit_error *err);

#endif /* PIPIT_PHONE_H */
