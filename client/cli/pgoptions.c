/*
 * client/cli/pgoptions.c
 *	  run and PostgreSQL: where it announces (--pg, FENCE_PG, libpq's
 *	  variables), PGOPTIONS kept as fence found it (for --pooler), and a
 *	  probe that sessions at --pg really see what its command carries
 *	  (carry.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/*
 * Where run announces the token when no --pg was given: FENCE_PG (a
 * connection string), else, as libpq programs do, the PostgreSQL that
 * PGSERVICE, PGHOST or PGDATABASE name (an empty connection string: libpq
 * reads them).  A run that announces nowhere lets a stale holder's writes
 * land wherever the command writes without the token, so it is said
 * (cmd_run), unless --no-pg says that is meant.
 */
void
run_pg_target(options *o)
{
	static const char *const libpq_vars[] = {"PGSERVICE", "PGHOST", "PGDATABASE"};
	const char *v;
	size_t		i;

	if (o->pg != NULL)
	{
		o->pg_from = "--pg";
		return;
	}
	if (o->no_pg)
		return;
	if ((v = getenv("FENCE_PG")) != NULL && *v != '\0')
	{
		o->pg = v;
		o->pg_from = "FENCE_PG";
		return;
	}
	for (i = 0; i < sizeof(libpq_vars) / sizeof(libpq_vars[0]); i++)
		if ((v = getenv(libpq_vars[i])) != NULL && *v != '\0')
		{
			o->pg = "";
			o->pg_from = libpq_vars[i];
			return;
		}
}

/* PGOPTIONS as fence found it, before run added the fence settings */
static char *pgoptions_before;
static int	pgoptions_kept;

void
pgoptions_keep(void)
{
	const char *v = getenv("PGOPTIONS");

	pgoptions_before = v != NULL ? strdup(v) : NULL;
	pgoptions_kept = 1;
}

/*
 * run --pooler: the command connects through a pooler that refuses or
 * drops the "options" startup parameter (PgBouncer), so it gets PGOPTIONS
 * as fence found it, and sets the token per transaction from FENCE_*.
 */
int
pgoptions_restore(void)
{
	if (!pgoptions_kept)
		return 0;
	if (pgoptions_before != NULL)
		return setenv("PGOPTIONS", pgoptions_before, 1);
	return unsetenv("PGOPTIONS");
}

/*
 * Open a session at "conninfo" as the command will, with the command's
 * PGOPTIONS (already in our environment).  When that fails, the fence
 * settings are not necessarily why: a server that is slow, stalled or in
 * a failover fails the same way.  So try once more with PGOPTIONS as fence
 * found it: if that fails too, PostgreSQL is unreachable ("*unreachable"
 * set, and the message says so); if it works, the settings are refused.
 * NULL on failure, "why" holding libpq's message.
 */
PGconn *
probe_connect(const char *conninfo, int *unreachable, char *why, size_t whylen)
{
	PGconn	   *pg = PQconnectdb(conninfo);
	char	   *child;
	size_t		len;

	*unreachable = 0;
	if (pg != NULL && PQstatus(pg) == CONNECTION_OK)
		return pg;
	snprintf(why, whylen, "%s", pg ? PQerrorMessage(pg) : "out of memory\n");
	PQfinish(pg);
	if (!pgoptions_kept || (child = getenv("PGOPTIONS")) == NULL ||
		(child = strdup(child)) == NULL)
		return NULL;
	if (pgoptions_before != NULL)
		setenv("PGOPTIONS", pgoptions_before, 1);
	else
		unsetenv("PGOPTIONS");
	pg = PQconnectdb(conninfo);
	if (pg == NULL || PQstatus(pg) != CONNECTION_OK)
	{
		*unreachable = 1;
		snprintf(why, whylen, "%s", pg ? PQerrorMessage(pg) : "out of memory\n");
	}
	PQfinish(pg);
	setenv("PGOPTIONS", child, 1);
	free(child);
	len = strlen(why);
	if (len == 0 || why[len - 1] != '\n')
		snprintf(why + len, whylen - len, "\n");
	return NULL;
}

/* Say that PostgreSQL at --pg could not be reached, with or without the
 * fence settings: an outage (69), not a configuration to change. */
int
probe_unreachable(const char *why)
{
	fprintf(stderr, "%s: could not connect to PostgreSQL at --pg (neither with the fence\n"
			"settings in PGOPTIONS nor without them): %s", progname, why);
	return -2;
}

/*
 * The "options" that "conninfo" sets itself, or NULL (malloc'd).  libpq
 * takes them instead of PGOPTIONS, which is only the default.
 */
static char *
conninfo_options(const char *conninfo)
{
	PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
	PQconninfoOption *o;
	char	   *found = NULL;

	for (o = opts; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, "options") == 0 && o->val != NULL && *o->val != '\0')
			found = strdup(o->val);
	PQconninfoFree(opts);
	return found;
}

/*
 * Whether sessions opened with the child's PGOPTIONS carry the token: a
 * connection pooler may refuse the "options" startup parameter (PgBouncer
 * does, unless told to ignore it) or drop it silently (with
 * ignore_startup_parameters = options), and an "options" inside "conninfo"
 * itself wins over PGOPTIONS; then the child's guarded writes fail, with a
 * connection error or with LF002, far from the cause.  Probe once, the way
 * the child connects with "conninfo" (PGOPTIONS set in the environment,
 * which is already the child's): returns 0 when SHOW fence.token gives the
 * lease's token, 1 when the connection works but the token is not there (a
 * warning says why and what to change), -1 when the connection fails with
 * the options although it works without them, -2 when it fails without
 * them too (probe_connect; an error is printed).
 */
int
probe_pgoptions(const char *conninfo, fence_lease *l)
{
	const char *advice =
		"Run with --pooler and set the token per transaction instead (SET LOCAL\n"
		"fence.resource and fence.token from $FENCE_RESOURCE and $FENCE_TOKEN, which\n"
		"the command gets), or pass it to fence.fenced_update(), or connect the command\n"
		"directly to PostgreSQL.\n";
	char		token[24],
				why[1024];
	char	   *own;
	PGconn	   *pg;
	PGresult   *res;
	int			rc,
				unreachable;

	/* take_lease's pg_connect opened libpq for "conninfo" already */
	if ((pg = probe_connect(conninfo, &unreachable, why, sizeof(why))) == NULL)
	{
		if (unreachable)
			return probe_unreachable(why);
		fprintf(stderr, "%s: PostgreSQL at --pg refuses the fence settings in PGOPTIONS\n"
				"(a connection pooler? PgBouncer refuses the options parameter): %s%s",
				progname, why, advice);
		return -1;
	}
	snprintf(token, sizeof(token), "%lld", fence_lease_token(l));
	res = PQexec(pg, "SHOW fence.token");
	rc = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		strcmp(PQgetvalue(res, 0, 0), token) == 0 ? 0 : 1;
	if (rc != 0 && (own = conninfo_options(conninfo)) != NULL)
	{
		if (cli_verbosity >= 0)
			fprintf(stderr, "%s: warning: the connection string of --pg sets options (\"%s\"),\n"
				"which libpq uses instead of PGOPTIONS: a command that connects with it gets\n"
				"no fence settings, and its guarded writes will fail with LF002.  Move those\n"
				"options into PGOPTIONS (fence run appends the fence settings to it) and leave\n"
				"options out of the connection string, or add -c fence.resource=$FENCE_RESOURCE\n"
				"-c fence.token=$FENCE_TOKEN -c fence.owner=$FENCE_OWNER to them where the\n"
				"command connects.\n", progname, own);
		free(own);
	}
	else if (rc != 0 && cli_verbosity >= 0)
		fprintf(stderr, "%s: warning: sessions at --pg do not see the fence settings in PGOPTIONS\n"
				"(a connection pooler dropping them?): guarded writes of the command will fail\n"
				"with LF002 unless it sets the token itself.\n%s", progname, advice);
	PQclear(res);
	PQfinish(pg);
	return rc;
}
