/*
 * client/cli/main.c
 *	  The fence command: leases, tokens and fenced commands from a shell.
 *
 *	  fence acquire RESOURCE [--ttl D] [--wait D] [--pg CONNINFO]
 *	  fence release RESOURCE OWNER
 *	  fence extend  RESOURCE OWNER [--ttl D]
 *	  fence run     RESOURCE [--ttl D] [--wait D] [--pg CONNINFO] [--grace D]
 *	                [--death-signal SIG] {[--] CMD [ARG...] | -c STRING}
 *	  fence exec    RESOURCE --pg CONNINFO [--] SQL [PARAM...]
 *	  fence show    RESOURCE [--pg CONNINFO]
 *	  fence list    [PATTERN]
 *	  fence resync  --pg CONNINFO [--prefix PREFIX]
 *	  (acquire, release, extend, run, exec: -R RESOURCE, repeated, for a set;
 *	  one RESOURCE is a set of one: sets.c)
 *	  fence help    [VERB]
 *
 * Exit status (DESIGN.md section 4): 0 success (for run, the command's own
 * status), 64 usage error, 69 Redis or PostgreSQL unreachable, 75 lease not
 * acquired before --wait ran out, 76 lease lost, 77 stale token (LF001),
 * 1 anything else; and from sysexits.h as well, 65 for fence keys in a
 * state fence never writes, 78 for a configuration the servers refuse (a
 * Redis login; for run --pg, the options in PGOPTIONS, at a pooler).
 *
 * This file is the door, as git's main program is: it parses the command
 * line with the options table (options.c, which also holds the verbs
 * table that sends each verb to its cmd_*), makes the checks that run
 * before anything is contacted, and calls the verb.  The verbs live one
 * family to a file: acquire.c (acquire, release, extend), hold.c (acquire
 * --hold), run.c, exec.c, show.c and list.c, on take.c (taking a set of
 * leases, guarded against signals), name.c, output.c and common.c; the help is
 * help.c's, durations are read by durations.c, passwords kept out of
 * argv by secret.c, messages printed by report.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/*
 * Usage errors, all reported before anything is contacted ("err" is the
 * first one parsing found).  Returns 0 when the command line is good, and
 * fills in the Redis URL.
 */
static int
check_command_line(options *o, const verb *v, const char *err, int nargs, char **args)
{
	char		errbuf[256];
	int			rc;

	if (*err)
		return usage_error("%s", err);
	if (v == NULL)
		return usage_error("no command given (acquire, release, extend, run, exec, show, list or resync)%s", "");
	if (o->shell != NULL && v->fn != cmd_run)
		return usage_error("-c is for run only%s", "");
	if (o->hold && v->fn != cmd_acquire)
		return usage_error("--hold is for acquire only%s", "");
	if (o->hold && o->nresources > 0)
		return usage_error("--hold takes one RESOURCE, not -R%s", "");
	if (o->inherit_password && v->fn != cmd_run)
		return usage_error("--inherit-password is for run only%s", "");
	if ((o->no_pg || o->pooler) && v->fn != cmd_run)
		return usage_error("%s is for run only", o->no_pg ? "--no-pg" : "--pooler");
	if (o->no_pg && (o->pg != NULL || o->pooler))
		return usage_error("--no-pg does not go with %s", o->pg != NULL ? "--pg" : "--pooler");
	if (o->shell != NULL && nargs != (o->nresources > 0 ? 0 : 1))
		return usage_error("run -c STRING takes RESOURCE (or -R) and no COMMAND%s", "");
	if (o->nresources > 0)
	{
		/* -R names the resources: no RESOURCE argument (sets.c) */
		if ((rc = set_usage(o, v->name, nargs)) != 0)
			return rc;
	}
	else if ((o->shell == NULL && nargs < v->fixed) || (!v->variadic && nargs > v->fixed + v->optional) ||
			 ((v->fn == cmd_exec || v->fn == cmd_resync) && o->pg == NULL))
	{
		snprintf(errbuf, sizeof(errbuf), "%s needs %s", v->name, v->needs);
		return usage_error("%s", errbuf);
	}
	/* RESOURCE comes first; list's PATTERN is optional */
	if (o->prefix != NULL && v->fn != cmd_resync)
		return usage_error("--prefix is for resync only%s", "");
	if (o->nresources > 0 || v->fn == cmd_resync)
		rc = FENCE_OK;
	else if (v->fn == cmd_list)
		rc = nargs == 0 ? FENCE_OK : fence_check_pattern(args[0], errbuf, sizeof(errbuf));
	else
		rc = fence_check_resource(args[0], errbuf, sizeof(errbuf));
	if (rc != FENCE_OK || fence_check_ttl(o->ttl_ms, errbuf, sizeof(errbuf)) != FENCE_OK)
		return usage_error("%s", errbuf);
	if (o->wait_ms > FENCE_MAX_TTL_MS)
	{
		snprintf(errbuf, sizeof(errbuf), "--wait must be at most %lld ms (or inf)", FENCE_MAX_TTL_MS);
		return usage_error("%s", errbuf);
	}
	if (o->timeout_ms <= 0 || o->timeout_ms > FENCE_MAX_TTL_MS)
		return usage_error("--timeout must be at least 1ms%s", "");
	if ((v->fn == cmd_release || v->fn == cmd_extend) && *args[o->nresources > 0 ? 0 : 1] == '\0')
		return usage_error("OWNER must not be empty%s", "");
	if (o->name != NULL && fence_check_owner_name(o->name, errbuf, sizeof(errbuf)) != FENCE_OK)
		return usage_error("--name: %s", errbuf);

	if (v->fn == cmd_run)
		run_pg_target(o);
	if (o->redis == NULL)
		o->redis = getenv("FENCE_REDIS_URL");
	if (o->redis == NULL || *o->redis == '\0')
		o->redis = FENCE_DEFAULT_URL;
	if ((rc = apply_password(o)) != 0)
		return rc;
	if (fence_check_url(o->redis, errbuf, sizeof(errbuf)) != FENCE_OK)
		return usage_error("%s", errbuf);
	if (fence_url_skips_verify(o->redis))
		note("warning: tls-insecure-skip-verify=yes: the Redis server's certificate is not checked, so anyone on the way can pose as it (for tests only)");
	if (o->min_replicas > 0 && is_quorum(o->redis))
		return usage_error("--min-replicas needs one master (one node, Sentinel or Cluster), not a quorum%s", "");
	if (o->min_replicas > 0 &&
		(o->replica_timeout_ms <= 0 || o->replica_timeout_ms >= FENCE_DEFAULT_COMMAND_TIMEOUT_MS))
	{
		snprintf(errbuf, sizeof(errbuf), "--replica-timeout must be between 1 ms and %d ms",
				 FENCE_DEFAULT_COMMAND_TIMEOUT_MS - 1);
		return usage_error("%s", errbuf);
	}
	return 0;
}

/*
 * A standard descriptor that was closed (">&-") would be the first socket
 * fence opens, and what it prints would go to Redis or PostgreSQL.  Hold
 * each closed one with /dev/null, opened read-only, so that writing to it
 * still fails as it would have.
 */
static void
hold_std_fds(void)
{
	int			fd;

	for (fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
			open("/dev/null", O_RDONLY) != fd)
			exit(EXIT_FAIL);	/* cannot happen: the lowest free one */
}

int
main(int argc, char **argv)
{
	options		o;
	char		usage_err[320] = "";
	const verb *v = NULL;
	fence_ctx  *ctx;
	int			code = 0,
				nargs = 0;
	char	  **args;

	hold_std_fds();
	args = calloc(argc + 4, sizeof(char *));
	/* parse a copy: the arguments themselves are shown with passwords masked */
	if (args == NULL || (argv = hide_secrets(argc, argv)) == NULL)
	{
		fprintf(stderr, "%s: out of memory\n", progname);
		return EXIT_FAIL;
	}
	memset(&o, 0, sizeof(o));
	o.ttl_ms = DEFAULT_TTL_MS;
	o.grace_ms = DEFAULT_GRACE_MS;
	o.replica_timeout_ms = DEFAULT_REPLICA_TIMEOUT_MS;
	o.death_signal = SIGTERM;
	o.timeout_ms = FENCE_DEFAULT_COMMAND_TIMEOUT_MS;
	if (parse_command_line(argc, argv, &o, args, &nargs, &v, usage_err, sizeof(usage_err)) != 0)
	{
		fprintf(stderr, "%s: out of memory\n", progname);
		code = EXIT_FAIL;
	}
	/* fence help [VERB], fence VERB --help: as with pg_isready, they win */
	else if ((nargs > 0 && strcmp(args[0], "help") == 0) || o.help)
	{
		if (!o.help && nargs > 2)
			code = usage_error("help takes at most one argument: VERB%s", "");
		else if (!o.help)
			code = print_help(nargs == 2 ? args[1] : NULL);
		else
			code = print_help(v != NULL ? v->name : NULL);
	}
	else if (o.version)
		printf("fence (pgfence) %s\n", FENCE_VERSION);
	else if ((code = check_command_line(&o, v, usage_err, nargs - 1, args + 1)) == 0)
	{
		if (o.shell != NULL)
		{
			/* run -c STRING: the command is the shell's */
			args[nargs++] = "/bin/sh";
			args[nargs++] = "-c";
			args[nargs++] = (char *) o.shell;
		}
		if ((ctx = redis_connect(&o, &code)) != NULL)
		{
			code = (o.hold ? cmd_hold : v->fn) (ctx, &o, nargs - 1, args + 1);
			fence_free(ctx);
		}
	}
	free(args);
	free(o.redis_list);
	free(o.resources);
	if (o.redis_auth != NULL)	/* it holds the password */
		memset(o.redis_auth, 0, strlen(o.redis_auth));
	free(o.redis_auth);
	fflush(stdout);
	return code;
}
