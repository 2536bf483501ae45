/*
 * rng.c - the seeded random numbers of the training data (rng.h).
 */
#include "rng.h"

uint64_t train_rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t train_rng_below(uint64_t *state, uint32_t n) {
    return n <= 1 ? 0 : (uint32_t)(train_rng_next(state) % n);
}

double train_rng_unit(uint64_t *state) {
    return (double)(train_rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t train_split_seed(uint64_t seed, int split) {
    return seed * 0x2545F4914F6CDD1Dull + (uint64_t)split * 7919u + 1;
}
