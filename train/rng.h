/*
 * rng.h - the seeded random numbers every training-data generator draws from (train/datagen.c,
 * train/packgen.c, train/undosay.c): splitmix64, one state per split, so that a seed decides
 * the data. Its own file pair so that a phrase bank (undosay.c) needs no generator.
 */
#ifndef PIPIT_TRAIN_RNG_H
#define PIPIT_TRAIN_RNG_H

#include <stdint.h>

/* splitmix64 */
uint64_t train_rng_next(uint64_t *state);
/* uniform in [0, n) (n >= 1) */
uint32_t train_rng_below(uint64_t *state, uint32_t n);
/* uniform in [0, 1) */
double train_rng_unit(uint64_t *state);
/* The RNG state a generator starts `split` (0 train, 1 valid) with for `seed`. */
uint64_t train_split_seed(uint64_t seed, int split);

#endif /* PIPIT_TRAIN_RNG_H */
