/*
 * client/test/tap.h
 *	  The smallest test harness that prints what test/run.sh counts:
 *	  one "ok - NAME", "not ok - NAME" or "skip - NAME" line per test.
 *
 * A test is a function; CHECK() records the first failure with its line
 * and stops the test, so one broken case never hides the others.
 */
#ifndef FENCE_TAP_H
#define FENCE_TAP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int	tap_failed;			/* tests that failed */
static int	tap_passed;
static int	tap_skipped;
static char tap_why[512];		/* first failed check of the current test */
static int	tap_skip;			/* set by SKIP() */

#define CHECK(cond) \
	do { \
		if (!(cond)) \
		{ \
			snprintf(tap_why, sizeof(tap_why), "%s:%d: %s", __FILE__, __LINE__, #cond); \
			goto fail; \
		} \
	} while (0)

/* CHECK with the library's message appended. */
#define CHECKC(cond, ctx) \
	do { \
		if (!(cond)) \
		{ \
			snprintf(tap_why, sizeof(tap_why), "%s:%d: %s [err %d: %s]", __FILE__, __LINE__, #cond, \
					 (ctx)->err, (ctx)->errstr); \
			goto fail; \
		} \
	} while (0)

#define SKIP(reason) \
	do { \
		snprintf(tap_why, sizeof(tap_why), "%s", reason); \
		tap_skip = 1; \
		goto fail; \
	} while (0)

typedef int (*tap_fn) (void);

/*
 * Each test returns 0 when it passed (it fails by "goto fail").  While
 * iterating, FENCE_C_ONLY="NAME..." runs only the tests named.
 */
static void
tap_run(const char *name, tap_fn fn)
{
	const char *only = getenv("FENCE_C_ONLY");
	int			rc;

	if (only != NULL && *only != '\0')
	{
		const char *p = strstr(only, name);
		size_t		n = strlen(name);

		while (p != NULL && !((p == only || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ')))
			p = strstr(p + 1, name);
		if (p == NULL)
			return;
	}
	tap_why[0] = '\0';
	tap_skip = 0;
	fflush(stdout);
	rc = fn();
	if (tap_skip)
	{
		printf("skip - %s # %s\n", name, tap_why);
		tap_skipped++;
	}
	else if (rc == 0)
	{
		printf("ok - %s\n", name);
		tap_passed++;
	}
	else
	{
		printf("not ok - %s\n#   %s\n", name, tap_why[0] ? tap_why : "failed");
		tap_failed++;
	}
	fflush(stdout);
}

#define TEST(name) tap_run(#name, test_##name)

#endif							/* FENCE_TAP_H */
