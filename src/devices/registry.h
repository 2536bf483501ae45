/*
 * registry.h - the device that runs a tool set, as a plain struct device (tooling).
 *
 * pipit_device_init() (pipit_tools.h) wraps this choice in a public handle; the training-data
 * generator plays its examples on the same device the agent would run the set on, so the
 * state line and the results in the memory lines it trains on are the ones the agent shows.
 *
 * The choice, in order: a pack named after a simulator with a declared state -> that simulator;
 * another pack with a declared state -> the generic pack device (devices/pack.h); no declared
 * state -> the simulator that runs every tool of the set; else no device.
 */
#ifndef PIPIT_DEVICE_REGISTRY_H
#define PIPIT_DEVICE_REGISTRY_H

#include "device.h"
#include "toolspec.h"

/* The device for `ts` into `out` (free it with device_free()). PIPIT_OK with out->ops == NULL
 * when no device runs the set: the agent then runs its tools through handlers only and shows
 * an empty state line. Errors: PIPIT_ERR_INVALID_ARG for NULL arguments, PIPIT_ERR_NOMEM, or a
 * simulator's own refusal of the set. */
enum pipit_status
device_for_toolset(const struct pipit_toolset *ts, struct device *out, struct pipit_error *err);

#endif /* PIPIT_DEVICE_REGISTRY_H */
