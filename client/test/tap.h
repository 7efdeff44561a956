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

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int	tap_failed;			/* tests that failed */
static int	tap_passed;
static int	tap_skipped;
static char tap_why[512];		/* first failed check of the current test */
static int	tap_skip;			/* set by SKIP() */
static const char *tap_current; /* name of the test running */

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
	tap_current = name;
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

/*
 * A test that hangs must still be counted as failed: after "seconds" the
 * watchdog reports the test running as "not ok" and ends the program.
 */
static void
tap_alarm(int sig)
{
	static const char msg[] = "#   timed out\n";
	ssize_t		n;

	(void) sig;
	n = write(1, "not ok - ", 9);
	n = write(1, tap_current ? tap_current : "?", strlen(tap_current ? tap_current : "?"));
	n = write(1, "\n", 1);
	n = write(1, msg, sizeof(msg) - 1);
	(void) n;
	_exit(1);
}

static void
tap_watchdog(unsigned seconds)
{
	signal(SIGALRM, tap_alarm);
	alarm(seconds);
}

#endif							/* FENCE_TAP_H */
