/*
 * extension/siphash.h
 *	  SipHash-2-4 with a 128-bit output (siphash.c): a keyed hash that no
 *	  one who does not know the key can steer to a collision.
 */
#ifndef FENCE_SIPHASH_H
#define FENCE_SIPHASH_H

#include "postgres.h"

typedef struct FenceHash128
{
	uint64		lo;
	uint64		hi;
} FenceHash128;

extern FenceHash128 fence_siphash128(const uint64 key[2], const void *data,
									 size_t len);

#endif							/* FENCE_SIPHASH_H */
