/*
 * client/cli/report.c
 *	  What fence tells the user besides its results, under its name: errors,
 *	  notes and, with --verbose, what it does; with --json, errors on
 *	  stdout too.
 *
 * Three kinds of message go to stderr.  An error ends fence with an exit
 * status and is always printed.  A note (a warning, a signal noted) is for
 * a person watching; --quiet drops it.  A trace (--verbose) says what
 * fence does: whom it connects to, the lease it took, renewals, the
 * release.  With --json a program reads stdout, so the error that ends
 * fence is also printed there, once, as one object with the same keys
 * whatever the verb:
 *
 *	  {"ok":false,"error":"busy","exit":75,"message":"..."}
 *
 * "error" names the exit status (usage, unavailable, busy, lost, stale,
 * config, state, io, error), so that a program need not know the numbers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char *progname = "fence";
int			cli_verbosity;		/* -1 --quiet, 0, 1 --verbose */
int			cli_json;			/* --json: errors on stdout too */

static int	json_reported;		/* one error object per run */

static const char *
error_name(int code)
{
	switch (code)
	{
		case EXIT_USAGE:
			return "usage";
		case EXIT_DATAERR:
			return "state";
		case EXIT_UNAVAIL:
			return "unavailable";
		case EXIT_IOERR:
			return "io";
		case EXIT_BUSY:
			return "busy";
		case EXIT_LOST:
			return "lost";
		case EXIT_STALE:
			return "stale";
		case EXIT_CONFIG:
			return "config";
		default:
			return "error";
	}
}

/*
 * The error that ends fence with "code": "msg" on stderr, and with --json
 * the object above on stdout ("hint", when not NULL, goes into both).
 * Returns "code".
 */
int
report_error(int code, const char *msg, const char *hint)
{
	fprintf(stderr, "%s: %s\n", progname, msg);
	if (hint != NULL)
		fprintf(stderr, "%s: hint: %s\n", progname, hint);
	if (cli_json && !json_reported)
	{
		json_reported = 1;
		printf("{\"ok\":false,\"error\":\"%s\",\"exit\":%d,\"message\":", error_name(code), code);
		json_string(stdout, msg);
		if (hint != NULL)
		{
			printf(",\"hint\":");
			json_string(stdout, hint);
		}
		printf("}\n");
		fflush(stdout);
	}
	return code;
}

/* "fence: " and the message on stderr, a line. */
static void
say(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* A note for a person: "fence: " and the message, unless --quiet. */
void
note(const char *fmt,...)
{
	va_list		ap;

	if (cli_verbosity < 0)
		return;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

/* What fence does, with --verbose only. */
void
trace(const char *fmt,...)
{
	va_list		ap;

	if (cli_verbosity <= 0)
		return;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}
