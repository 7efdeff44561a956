/*
 * extension/siphash.c
 *	  SipHash-2-4 with a 128-bit output, as specified by Aumasson and
 *	  Bernstein ("SipHash: a fast short-input PRF", 2012, and the 128-bit
 *	  variant of the reference implementation).
 *
 *	  SipHash is a pseudorandom function: to whoever does not know its
 *	  128-bit key, its outputs look like independent random numbers, so two
 *	  inputs chosen by anybody, however cleverly, collide with probability
 *	  2^-128.  The registry of accepted tokens (registry.c) names resources
 *	  by this hash under a key that never leaves the backend, and relies on
 *	  exactly that.
 *
 *	  The output is the reference implementation's 16 bytes read as two
 *	  little-endian 64-bit words.  For the key 00 01 ... 0f and the empty
 *	  message it is a3 81 7f 04 ba 25 a8 e6 6d f6 72 14 c7 55 02 93.
 */
#include "postgres.h"

#include "siphash.h"

#define ROTL(x, b) (uint64) (((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND \
	do { \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2; \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0; \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
	} while (0)

/* The 8 bytes at "p" as a little-endian number, whatever the CPU's order. */
static inline uint64
load_le64(const unsigned char *p)
{
	return (uint64) p[0] | (uint64) p[1] << 8 | (uint64) p[2] << 16 |
		(uint64) p[3] << 24 | (uint64) p[4] << 32 | (uint64) p[5] << 40 |
		(uint64) p[6] << 48 | (uint64) p[7] << 56;
}

/*
 * fence_siphash128: SipHash-2-4-128 of the "len" bytes at "data" under
 * "key" (the reference key's bytes 0-7 and 8-15, little-endian).
 */
FenceHash128
fence_siphash128(const uint64 key[2], const void *data, size_t len)
{
	const unsigned char *in = data;
	const unsigned char *end = in + (len - len % 8);
	uint64		v0 = UINT64CONST(0x736f6d6570736575) ^ key[0];
	uint64		v1 = UINT64CONST(0x646f72616e646f6d) ^ key[1];
	uint64		v2 = UINT64CONST(0x6c7967656e657261) ^ key[0];
	uint64		v3 = UINT64CONST(0x7465646279746573) ^ key[1];
	uint64		b = (uint64) len << 56;
	FenceHash128 out;
	int			left = len % 8;

	v1 ^= 0xee;					/* 128-bit output */
	for (; in != end; in += 8)
	{
		uint64		m = load_le64(in);

		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	while (left-- > 0)
		b |= (uint64) in[left] << (8 * left);

	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;

	v2 ^= 0xee;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	out.lo = v0 ^ v1 ^ v2 ^ v3;

	v1 ^= 0xdd;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	out.hi = v0 ^ v1 ^ v2 ^ v3;
	return out;
}
