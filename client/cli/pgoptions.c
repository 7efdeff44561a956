/*
 * client/cli/pgoptions.c
 *	  What run's command gets to carry the token into PostgreSQL:
 *	  FENCE_RESOURCE, FENCE_TOKEN and FENCE_OWNER in its environment, the
 *	  same as "-c fence.*=..." settings appended to PGOPTIONS, and a probe
 *	  that sessions at --pg really see them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/*
 * Append "-c NAME=VALUE" to "buf", escaping what libpq's options parser
 * would split on: whitespace and backslashes get a backslash.
 */
static int
append_option(char **buf, size_t *len, size_t *cap, const char *name, const char *value)
{
	size_t		need = strlen(name) + 2 * strlen(value) + 8;
	const char *p;

	if (*len + need >= *cap)
	{
		size_t		ncap = (*len + need) * 2;
		char	   *n = realloc(*buf, ncap);

		if (n == NULL)
			return -1;
		*buf = n;
		*cap = ncap;
	}
	if (*len > 0)
		(*buf)[(*len)++] = ' ';
	*len += sprintf(*buf + *len, "-c %s=", name);
	for (p = value; *p; p++)
	{
		if (*p == '\\' || *p == ' ' || *p == '\t' || *p == '\n' ||
			*p == '\r' || *p == '\f' || *p == '\v')
			(*buf)[(*len)++] = '\\';
		(*buf)[(*len)++] = *p;
	}
	(*buf)[*len] = '\0';
	return 0;
}

int
set_child_env(fence_lease *l)
{
	char		token[24];
	const char *old = getenv("PGOPTIONS");
	char	   *buf = NULL;
	size_t		len = 0,
				cap = 0;
	int			rc;

	snprintf(token, sizeof(token), "%lld", fence_lease_token(l));
	if (old != NULL && *old != '\0')
	{
		cap = strlen(old) + 1;
		if ((buf = malloc(cap)) == NULL)
			return -1;
		memcpy(buf, old, cap);
		len = cap - 1;
	}
	if (append_option(&buf, &len, &cap, "fence.resource", fence_lease_resource(l)) != 0 ||
		append_option(&buf, &len, &cap, "fence.token", token) != 0 ||
		append_option(&buf, &len, &cap, "fence.owner", fence_lease_owner(l)) != 0)
	{
		free(buf);
		return -1;
	}
	rc = setenv("PGOPTIONS", buf, 1) |
		setenv("FENCE_RESOURCE", fence_lease_resource(l), 1) |
		setenv("FENCE_TOKEN", token, 1) |
		setenv("FENCE_OWNER", fence_lease_owner(l), 1);
	free(buf);
	return rc;
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
 * the options although it worked without them (an error is printed).
 */
int
probe_pgoptions(const char *conninfo, fence_lease *l)
{
	const char *advice =
		"Set the token per transaction instead (SET LOCAL fence.resource and fence.token\n"
		"from $FENCE_RESOURCE and $FENCE_TOKEN, which the command gets), or pass it to\n"
		"fence.fenced_update(), or connect the command directly to PostgreSQL.\n";
	char		token[24];
	char	   *own;
	PGconn	   *pg;
	PGresult   *res;
	int			rc;

	/* take_lease's pg_connect opened libpq for "conninfo" already */
	pg = PQconnectdb(conninfo);
	if (pg == NULL || PQstatus(pg) != CONNECTION_OK)
	{
		fprintf(stderr, "%s: PostgreSQL at --pg refuses the fence settings in PGOPTIONS\n"
				"(a connection pooler? PgBouncer refuses the options parameter): %s%s",
				progname, pg ? PQerrorMessage(pg) : "out of memory\n", advice);
		PQfinish(pg);
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
