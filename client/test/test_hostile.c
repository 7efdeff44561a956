/*
 * client/test/test_hostile.c
 *	  Unit tests of what stands between fence and a hostile or unexpected
 *	  peer, without a server: where the credentials of a URL end and what
 *	  a mask hides (url.c), what a reply may announce (frame.c), and the
 *	  words of an ACL refusal, old and new (reply.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "fence.h"
#include "fence_int.h"
#include "tap.h"

/* Masking "in" gives "want", and the URL parser agrees on the password. */
static int
masks_to(const char *in, const char *want)
{
	char		out[512];

	fence_mask_url(in, out, sizeof(out));
	if (strcmp(out, want) != 0)
	{
		printf("#   mask of \"%s\": \"%s\", not \"%s\"\n", in, out, want);
		return 0;
	}
	return 1;
}

/* The login and the mask end the credentials at the same '@'. */
static int
test_mask_last_at(void)
{
	fence_url	u;
	char		err[256];
	size_t		start,
				colon,
				at;

	CHECK(masks_to("redis://:sec@ret@host", "redis://:***@host"));
	CHECK(masks_to("redis://us@er:hunter2pw@host:1/2", "redis://us@er:***@host:1/2"));
	CHECK(masks_to("--redis=rediss://u:p@w@h?tls-ca-cert-file=/a@b",
				   "--redis=rediss://u:***@h?tls-ca-cert-file=/a@b"));
	CHECK(masks_to("redis://a:x@h redis://b:y@z@h2", "redis://a:***@h redis://b:***@h2"));
	CHECK(masks_to("redis://user@host", "redis://user@host"));
	CHECK(masks_to("redis://host/0", "redis://host/0"));
	CHECK(masks_to("unix:///tmp/x@y.sock", "unix:///tmp/x@y.sock"));
	CHECK(masks_to("psql postgres://app:pg-secret@db/x", "psql postgres://app:***@db/x"));
	CHECK(masks_to("no url: here", "no url: here"));

	/* what the parser logs in with is what the mask hid */
	CHECK(fence_parse_url("redis://us@er:hunter2pw@host", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(strcmp(u.user, "us@er") == 0 && strcmp(u.password, "hunter2pw") == 0);
	fence_url_free(&u);
	CHECK(fence_parse_url("redis://:sec@ret@host", &u, err, sizeof(err)) == FENCE_OK);
	CHECK(u.user == NULL && strcmp(u.password, "sec@ret") == 0);
	fence_url_free(&u);
	CHECK(fence_url_credentials("redis://us@er:pw@h", 18, &start, &colon, &at) == 1);
	CHECK(start == 8 && colon == 13 && at == 16);
	CHECK(fence_url_credentials("redis://h:1", 11, &start, &colon, &at) == 0);
	CHECK(start == 8 && colon == 8 && at == 8);
	CHECK(fence_url_credentials("h:1@x", 5, &start, &colon, &at) == -1);

	/* a mask cut short by its buffer never ends in a piece of password */
	{
		char		small[12];

		fence_mask_url("redis://:abcdefgh@host", small, sizeof(small));
		CHECK(strstr(small, "abc") == NULL);
	}
	return 0;
fail:
	return 1;
}

/* A refused URL's message quotes it masked, the password's bytes nowhere. */
static int
test_url_errors_masked(void)
{
	static const char *const bad[] = {
		"redis://:Zq9pw@h:99999", "redis://u:Zq9pw@h/x", "redis://:Zq9pw@h?x=1",
		"redis-sentinel://:Zq9pw@h", "redis-cluster://:Zq9pw@h/1", "redisx://:Zq9pw@h",
		"redis://:Zq9?pw@h", "redis://:Zq9/pw@h", "redis://u@x:Zq9pw@h:0",
		"redis://h redis-sentinel://:Zq9pw@h/m", "rediss://:Zq9pw@h?tls-cert-file=/c",
		"redis://Zq9pw@h", "u:Zq9pw@h:1",
	};
	char		err[512];
	size_t		i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		CHECK(fence_check_url(bad[i], err, sizeof(err)) == FENCE_ERR);
		if (strstr(err, "Zq9") != NULL || strstr(err, "pw@") != NULL)
		{
			printf("#   %s: %s\n", bad[i], err);
			CHECK(!"a password in the message");
		}
	}
	return 0;
fail:
	return 1;
}

/* Feed "s" to a fresh framer in pieces of "step" bytes; 0 or -1. */
static int
frame_all(const char *s, size_t len, size_t step, char *err, size_t errlen)
{
	fence_frame f;
	size_t		i;

	fence_frame_reset(&f);
	for (i = 0; i < len; i += step)
		if (fence_frame_check(&f, s + i, len - i < step ? len - i : step, err, errlen) != 0)
			return -1;
	/* between replies: nothing half read */
	return f.type == 0 && f.depth == 0 && f.bulk == 0 ? 0 : 1;
}

/* Replies fence reads pass, split anywhere, pipelined; what no reply
 * needs is refused from its header alone. */
static int
test_frame_caps(void)
{
	static const char good[] =
		"+OK\r\n-ERR x\r\n:42\r\n$-1\r\n*-1\r\n*0\r\n$0\r\n\r\n"
		"$5\r\na\r\n\r\n\r\n"	/* a CRLF inside a bulk string */
		"*3\r\n$3\r\nfoo\r\n*2\r\n:1\r\n*1\r\n+x\r\n$-1\r\n"
		"*2\r\n$1\r\n0\r\n*2\r\n$4\r\nk:{1\r\n$4\r\nk:{2\r\n";
	char		err[256],
				big[64];
	size_t		step;
	int			n;

	for (step = 1; step <= sizeof(good); step++)
		CHECK(frame_all(good, sizeof(good) - 1, step, err, sizeof(err)) == 0);

	/* the issue's header, and its like for strings and nested arrays */
	CHECK(frame_all("*299999994\r\n", 12, 1, err, sizeof(err)) == -1);
	CHECK(strstr(err, "299999994 elements") != NULL);
	CHECK(frame_all("$2000000000\r\n", 13, 5, err, sizeof(err)) == -1);
	CHECK(strstr(err, "2000000000 bytes") != NULL);
	n = snprintf(big, sizeof(big), "*1\r\n*1\r\n*%d\r\n", FENCE_MAX_REPLY_ELEMENTS - 2);
	CHECK(frame_all(big, n, 3, err, sizeof(err)) == 1);	/* at the cap: waits for more */
	n = snprintf(big, sizeof(big), "*1\r\n*1\r\n*%d\r\n", FENCE_MAX_REPLY_ELEMENTS - 1);
	CHECK(frame_all(big, n, 3, err, sizeof(err)) == -1);
	n = snprintf(big, sizeof(big), "$%d\r\n", FENCE_MAX_REPLY_BYTES);
	CHECK(frame_all(big, n, 1, err, sizeof(err)) == -1);
	/* the count starts anew with each reply */
	n = snprintf(big, sizeof(big), "*0\r\n*%d\r\n", FENCE_MAX_REPLY_ELEMENTS);
	CHECK(frame_all(big, n, 2, err, sizeof(err)) == 1);

	/* not RESP2, or not a number */
	CHECK(frame_all("%1\r\n", 4, 1, err, sizeof(err)) == -1);
	CHECK(frame_all("*1x\r\n", 5, 1, err, sizeof(err)) == -1);
	CHECK(frame_all("$-2\r\n", 5, 1, err, sizeof(err)) == -1);
	CHECK(frame_all("*99999999999999999999\r\n", 24, 7, err, sizeof(err)) == -1);
	CHECK(frame_all("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n", 36, 4, err, sizeof(err)) == -1);
	return 0;
fail:
	return 1;
}

/* A command refused inside a script, in Redis 7.0's words and in 7.2+'s
 * (Redis 8, Valkey): both are the ACL saying no (exit 78). */
static int
test_acl_words(void)
{
	CHECK(fence_reply_refused("ERR The user executing the script can't run this command or subcommand script: 0a9f, on @user_script:1."));
	CHECK(fence_reply_refused("ERR The user executing the script can't access at least one of the keys mentioned in the command script: 0a9f, on @user_script:1."));
	CHECK(fence_reply_refused("ERR ACL failure in script: User u has no permissions to run the 'incr' command script: 0a9f, on @user_script:1."));
	CHECK(fence_reply_refused("ERR ACL failure in script: No permissions to access a key script: 0a9f, on @user_script:1."));
	CHECK(fence_reply_refused("NOPERM User u has no permissions to run the 'evalsha' command"));
	CHECK(fence_reply_refused("WRONGPASS invalid username-password pair or user is disabled."));
	CHECK(!fence_reply_refused("ERR Error running script: attempt to compare nil with number"));
	CHECK(!fence_reply_refused("LOADING Redis is loading the dataset in memory"));
	return 0;
fail:
	return 1;
}

/* A command's error inside a script: Redis 6.0 wraps it in an ERR of its
 * own, 7.0 and later answer with it.  Either way a demoted master's
 * READONLY is the failover's (transient), which a waiter rides; an error
 * of the script itself is not. */
static int
test_script_error_words(void)
{
	redisReply	r = {.type = REDIS_REPLY_ERROR};
	char		msg[256];

#define WITH(text) (snprintf(msg, sizeof(msg), "%s", (text)), r.str = msg, r.len = strlen(msg), &r)
	CHECK(fence_reply_transient(WITH("ERR Error running script (call to f_40f305584b8c8d7f2af719470ef58a5c18edd173): "
									 "@user_script:76: @user_script: 76: -READONLY You can't write against a read only replica. ")));
	CHECK(fence_reply_is(WITH("ERR Error running script (call to f_40f3): @user_script:76: @user_script: 76: "
							  "-READONLY You can't write against a read only replica. "), "READONLY"));
	CHECK(fence_reply_transient(WITH("READONLY You can't write against a read only replica. script: 40f3, on @user_script:76.")));
	CHECK(!fence_reply_transient(WITH("ERR Error running script (call to f_40f3): @user_script:12: user_script:12: "
									  "attempt to compare nil with number")));
	CHECK(!fence_reply_transient(WITH("ERR Error running script (call to f_40f3): @user_script:9: @user_script: 9: "
									  "-WRONGTYPE Operation against a key holding the wrong kind of value")));
	CHECK(!fence_reply_is(WITH("ERR unknown command 'READONLY'"), "READONLY"));
#undef WITH
	return 0;
fail:
	return 1;
}

int
main(void)
{
	TEST(mask_last_at);
	TEST(url_errors_masked);
	TEST(frame_caps);
	TEST(acl_words);
	TEST(script_error_words);
	printf("# hostile-peer C tests: %d passed, %d failed, %d skipped\n", tap_passed, tap_failed, tap_skipped);
	return tap_failed ? 1 : 0;
}
