/*
 * client/frame.c
 *	  The size of a Redis reply, checked from its headers before hiredis's
 *	  reader sees them.
 *
 * hiredis's reader believes what a header announces: "*299999994" makes
 * it allocate the array of that many pointers (2.4 GB) before a single
 * element has come, and hiredis 0.14 has no limit at all (1.x's
 * maxelements is 2^32 - 1).  So a hostile server, or anyone on the way
 * of a plain redis:// connection, would choose how much memory fence
 * takes.  Every byte a link reads passes through this framer first: it
 * follows RESP2 (fence never asks for RESP3) and fails the link as soon
 * as a header announces more than any reply of fence's can need:
 *
 *	 FENCE_MAX_REPLY_ELEMENTS  elements of arrays in one reply, all levels
 *	 together (the largest: the waiting room's ZRANGE WITHSCORES, two
 *	 per waiter; CLUSTER SLOTS of 16384 ranges; a SCAN page of ~1000);
 *	 at 8 bytes a pointer, what hiredis allocates ahead stays below 8 MB
 *
 *	 FENCE_MAX_REPLY_BYTES  bytes of one reply, and so of each bulk
 *	 string in it (owner ids and names are at most a few KB; a SCAN page
 *	 of long names a few MB); a simple string or an error line counts
 *	 as it comes
 *
 * and for depths above FENCE_FRAME_DEPTH (hiredis 0.14's own limit is 7).
 * The framer only counts: the bytes go on to hiredis unchanged.
 */
#include <stdio.h>
#include <string.h>

#include "fence_int.h"

void
fence_frame_reset(fence_frame *f)
{
	memset(f, 0, sizeof(*f));
}

/* An item is complete: count it against the aggregates that hold it. */
static void
item_done(fence_frame *f)
{
	while (f->depth > 0)
	{
		if (--f->left[f->depth - 1] > 0)
			return;
		f->depth--;				/* the aggregate is an item of its parent */
	}
	/* a whole reply: the next one starts from nothing */
	f->elements = 0;
	f->bytes = 0;
}

/* The number of a header line: -1 for none (a null), -2 when not one. */
static long long
header_number(const char *s, int len)
{
	long long	v = 0;
	int			i;

	if (len == 2 && s[0] == '-' && s[1] == '1')
		return -1;
	if (len == 0 || len > 18)
		return -2;
	for (i = 0; i < len; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return -2;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/*
 * The header line of type "f->type" is complete: check what it
 * announces.  0, or -1 with the reason in "err".
 */
static int
header_done(fence_frame *f, char *err, size_t errlen)
{
	long long	n;

	if (f->type == '+' || f->type == '-' || f->type == ':')
	{
		item_done(f);
		return 0;
	}
	n = header_number(f->line, f->linelen);
	if (n == -2)
	{
		snprintf(err, errlen, "protocol error: bad length in a '%c' header", f->type);
		return -1;
	}
	if (f->type == '$')
	{
		if (n > FENCE_MAX_REPLY_BYTES - f->bytes)
		{
			snprintf(err, errlen,
					 "reply refused: the server announced a string of %lld bytes, more than fence ever reads (%d)",
					 n, FENCE_MAX_REPLY_BYTES);
			return -1;
		}
		if (n < 0)
			item_done(f);
		else
			f->bulk = n + 2;	/* and its CRLF */
		return 0;
	}
	/* '*' */
	if (n > FENCE_MAX_REPLY_ELEMENTS - f->elements)
	{
		snprintf(err, errlen,
				 "reply refused: the server announced %lld elements, more than fence ever reads (%d)",
				 n + f->elements, FENCE_MAX_REPLY_ELEMENTS);
		return -1;
	}
	if (n <= 0)
	{
		item_done(f);
		return 0;
	}
	if (f->depth == FENCE_FRAME_DEPTH)
	{
		snprintf(err, errlen, "protocol error: a reply nested deeper than %d arrays", FENCE_FRAME_DEPTH);
		return -1;
	}
	f->elements += n;
	f->left[f->depth++] = n;
	return 0;
}

/*
 * Follow the "n" bytes at "buf", the next ones the server sent.  0 when
 * they may go to the reader; -1 with the reason in "err" when the reply
 * is refused (the link must then fail: the stream cannot be resumed).
 */
int
fence_frame_check(fence_frame *f, const char *buf, size_t n, char *err, size_t errlen)
{
	size_t		i = 0;

	while (i < n)
	{
		if (f->bytes >= FENCE_MAX_REPLY_BYTES)
		{
			snprintf(err, errlen,
					 "reply refused: it grew past %d bytes, more than fence ever reads",
					 FENCE_MAX_REPLY_BYTES);
			return -1;
		}
		if (f->bulk > 0)
		{
			/* the body of a bulk string, skipped whole */
			size_t		take = n - i < (size_t) f->bulk ? n - i : (size_t) f->bulk;

			f->bulk -= take;
			f->bytes += take;
			i += take;
			if (f->bulk == 0)
				item_done(f);
			continue;
		}
		f->bytes++;
		if (f->type == 0)
		{
			f->type = buf[i++];
			f->linelen = 0;
			if (strchr("+-:$*", f->type) == NULL || f->type == 0)
			{
				snprintf(err, errlen, "protocol error: unexpected reply type byte 0x%02x",
						 (unsigned char) f->type);
				return -1;
			}
			continue;
		}
		if (buf[i] == '\n')
		{
			int			rc;

			if (f->linelen > 0 && f->linelen <= (int) sizeof(f->line) &&
				f->line[f->linelen - 1] == '\r')
				f->linelen--;
			rc = header_done(f, err, errlen);
			f->type = 0;
			i++;
			if (rc != 0)
				return -1;
			continue;
		}
		/* keep what a length needs; one byte more marks a longer line */
		if (f->linelen < (int) sizeof(f->line))
			f->line[f->linelen++] = buf[i];
		else
			f->linelen = (int) sizeof(f->line) + 1;
		i++;
	}
	return 0;
}
