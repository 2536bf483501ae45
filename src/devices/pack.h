/*
 * pack.h - the generic device: a simulated device built from a pack's declaration.
 *
 * A pack (docs/toolspec.md, "Packs") declares its state keys (type, initial value, range or
 * enum, state line label, words) and what each tool does to them (effect: set keys, step a
 * number, read, cloud, nothing). This device runs any such pack with no C code of its own:
 * - the state starts at the declared initial values and always stays inside the declared
 *   domain: a call that would leave it is refused (reason code "<key>_out_of_range" and a
 *   message naming the range), never clamped, and a failed call changes nothing;
 * - a success's `data` holds exactly the keys the call wrote, with their new values, so undo
 *   (set_state with the previous values) restores them;
 * - set_state is all-or-nothing, and its errors name the key and the value;
 * - a tool the set does not have, and a cloud tool (the cloud runs it, not the device), is
 *   "unknown_tool"; arguments that fail the tool's schema are "invalid_argument".
 *
 * Usage:
 *
 *     struct pipit_toolset *ts;                       // tools/home.json
 *     struct device dev;
 *     struct pipit_error err;
 *     if (pack_device_new(ts, &dev, &err) != PIPIT_OK) { ... err.text ... }
 *     struct device_result r = {0};
 *     json_t *args = json_pack("{s:f}", "celsius", 22.0);
 *     dev.ops->call(dev.self, "set_thermostat", args, &r);  // r.data {"thermostat": 22}
 *     device_result_clear(&r);
 *     json_decref(args);
 *     device_free(&dev);
 *
 * The toolset is borrowed: it must outlive the device. Thread safety: one thread at a time per
 * device (see device.h).
 */
#ifndef PIPIT_PACK_DEVICE_H
#define PIPIT_PACK_DEVICE_H

#include "device.h"
#include "toolspec.h"

/* Create the device for `ts`'s declared state. On success `out` holds the device (free it with
 * device_free()); on failure `out` is zeroed and `err` (may be NULL) says why:
 * PIPIT_ERR_INVALID_ARG for NULL `ts`/`out`, or a tool set without a pack or without a declared
 * state ("<file>: no declared state ..."); PIPIT_ERR_NOMEM. */
enum pipit_status
pack_device_new(const struct pipit_toolset *ts, struct device *out, struct pipit_error *err);

#endif /* PIPIT_PACK_DEVICE_H */
