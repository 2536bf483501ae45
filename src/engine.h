/*
 * engine.h - internal entry points of the engine (engine.c; the public ones are in pipit.h).
 */
#ifndef PIPIT_ENGINE_H
#define PIPIT_ENGINE_H

#include "pipit.h"

/* The model `ctx` was created on (borrowed; the model outlives its contexts). */
const struct pipit_model *engine_context_model(const struct pipit_context *ctx);

#endif /* PIPIT_ENGINE_H */
