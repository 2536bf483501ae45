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
 *     if (camera_device_new(&cam) != PIPIT_OK) { ... }
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

/* Create a camera in its default state. On success `out` holds the device
 * (free it with device_free() or out->ops->destroy(out->self)); on failure
 * `out` is zeroed. Returns PIPIT_ERR_INVALID_ARG for a NULL `out`,
 * PIPIT_ERR_NOMEM when the allocation fails. */
enum pipit_status camera_device_new(struct device *out);

#endif /* PIPIT_CAMERA_H */
