/*
 * test_rng.h - the unit tests' pseudo-random numbers (xorshift64): the
 * same sequence on every machine, so a failing round can be replayed.
 */
#ifndef TEST_RNG_H
#define TEST_RNG_H

#include <stdint.h>

/* The next number after *state (nonzero), which it replaces. */
static inline uint64_t test_rng_next(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

#endif
