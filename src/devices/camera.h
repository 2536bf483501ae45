/*
 * camera.h - a simulated phone camera: the agent's first device.
 *
 * The camera has a typed state (zoom, flash, focus point, exposure, ...) and
 * one tool per control (take_photo, set_zoom, set_flash, ...). Its state keys,
 * defaults, tools, constraints and reason codes are a public contract, listed
 * in docs/camera.md: evaluations check them and the sentence templates quote
 * them.
 *
 * Usage:
 *
 *     struct device cam;
 *     if (camera_device_new(tools, &cam, &err) != PIPIT_OK) { ... }  // tools/camera.json
 *     struct device_result r = {0};
 *     json_t *args = json_pack("{s:f}", "level", 2.0);
 *     cam.ops->call(cam.self, "set_zoom", args, &r);  // r.ok, r.data {"zoom": 2.0}
 *     device_result_clear(&r);
 *     json_decref(args);
 *     device_free(&cam);
 */
#ifndef PIPIT_CAMERA_H
#define PIPIT_CAMERA_H

#include "device.h"

/* Create a camera for the tool set `ts` (borrowed during the call only; NULL: the camera's
 * built-in ranges and enums) in its initial state. The ranges (back-lens zoom, focus,
 * exposure, JPEG quality), the timer's values, the adjust_zoom step and the enums come from
 * `ts`: a pack's declared state key, else the tool argument's schema, else the built-in value;
 * a pack's declared initial values override the defaults. On success `out` holds the device
 * (free it with device_free() or out->ops->destroy(out->self)); on failure `out` is zeroed.
 * Errors (err may be NULL): PIPIT_ERR_INVALID_ARG for a NULL `out` or a spec the camera cannot
 * simulate (a flash mode, facing, record action or zoom direction it does not know; an initial
 * value outside the spec's range; too many or too long enum values), the message naming the
 * tool set, the tool and the value; PIPIT_ERR_JSON for an initial value out of the domain;
 * PIPIT_ERR_NOMEM when the allocation fails. */
enum pipit_status
camera_device_new(const struct pipit_toolset *ts, struct device *out, struct pipit_error *err);

#endif /* PIPIT_CAMERA_H */
