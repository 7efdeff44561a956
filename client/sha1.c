/*
 * client/sha1.c
 *	  SHA-1, only to name the Lua scripts the way Redis does.
 *
 * With the digest computed here, the very first call of a script is an
 * EVALSHA, which succeeds when any earlier client already loaded it: a
 * short-lived "fence acquire" then costs one round trip, not two.  Not used
 * for anything that needs a secure hash.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fence_int.h"

#define ROL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

static void
sha1_block(uint32_t h[5], const unsigned char *p)
{
	uint32_t	w[80],
				a,
				b,
				c,
				d,
				e,
				f,
				k,
				t;
	int			i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 |
			(uint32_t) p[4 * i + 2] << 8 | (uint32_t) p[4 * i + 3];
	for (i = 16; i < 80; i++)
		w[i] = ROL(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = h[0];
	b = h[1];
	c = h[2];
	d = h[3];
	e = h[4];
	for (i = 0; i < 80; i++)
	{
		if (i < 20)
		{
			f = (b & c) | (~b & d);
			k = 0x5A827999;
		}
		else if (i < 40)
		{
			f = b ^ c ^ d;
			k = 0x6ED9EBA1;
		}
		else if (i < 60)
		{
			f = (b & c) | (b & d) | (c & d);
			k = 0x8F1BBCDC;
		}
		else
		{
			f = b ^ c ^ d;
			k = 0xCA62C1D6;
		}
		t = ROL(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = ROL(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

/* Write the lower-case hex SHA-1 of "len" bytes at "data" into "hex" (41). */
void
fence_sha1_hex(const void *data, size_t len, char hex[41])
{
	uint32_t	h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
	const unsigned char *p = data;
	unsigned char tail[128];
	size_t		rest = len % 64,
				full = len - rest,
				i,
				n;
	uint64_t	bits = (uint64_t) len * 8;

	for (i = 0; i < full; i += 64)
		sha1_block(h, p + i);
	memset(tail, 0, sizeof(tail));
	memcpy(tail, p + full, rest);
	tail[rest] = 0x80;
	n = rest + 1 + 8 <= 64 ? 64 : 128;
	for (i = 0; i < 8; i++)
		tail[n - 1 - i] = (unsigned char) (bits >> (8 * i));
	sha1_block(h, tail);
	if (n == 128)
		sha1_block(h, tail + 64);
	for (i = 0; i < 5; i++)
		snprintf(hex + 8 * i, 9, "%08x", h[i]);
}
