/*
 * client/cli/carry.c
 *	  What run's command carries: its leases' tokens, in PGOPTIONS for the
 *	  sessions it opens and in its environment for itself.
 *
 * One RESOURCE, nothing inherited: "-c fence.resource=R -c fence.token=T
 * -c fence.owner=O" appended to PGOPTIONS as fence found it, and
 * FENCE_RESOURCE, FENCE_TOKEN and FENCE_OWNER (what run always carried,
 * and an extension older than fence.tokens reads).  A set (-R, given once
 * or more) or settings inherited from another fence run: every (resource,
 * token, owner) triple in one "-c fence.tokens=..." in PGOPTIONS, and
 * FENCE_TOKENS, FENCE_COUNT, FENCE_RESOURCE_i, FENCE_TOKEN_i and
 * FENCE_OWNER_i in the environment (docs/writing-fenced-code.md,
 * "Transfers between accounts"; the format is the extension's
 * fence.tokens); a run that holds one lease adds its fence.resource,
 * fence.token and fence.owner and FENCE_RESOURCE, _TOKEN, _OWNER too,
 * which say the same as its entry.  With --pooler PGOPTIONS stays as it
 * was (pgoptions.c).
 *
 * Nesting.  "fence run acct:1 -- fence run acct:2 -- psql" must give psql
 * both tokens, or the debit of acct:1 fails with LF002.  So the inner
 * fence reads the fence settings it inherits in PGOPTIONS (a fence.tokens,
 * and a fence.resource with its fence.token and fence.owner), takes them
 * out, adds its own triples (its own wins for a resource it holds too) and
 * writes back one fence.tokens holding all of them, in the bytewise order
 * of the names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

static int
by_resource(const void *a, const void *b)
{
	return strcmp(((const triple *) a)->resource, ((const triple *) b)->resource);
}

/*
 * The lease of a run that holds one: its fence.resource, fence.token and
 * fence.owner appended to "*kept" (PGOPTIONS), FENCE_RESOURCE, _TOKEN and
 * _OWNER in the environment.  0, or -1 out of memory.
 */
static int
carry_one(fence_lease *l, char **kept)
{
	char		num[24];

	snprintf(num, sizeof(num), "%lld", fence_lease_token(l));
	if (add_setting(kept, "fence.resource", fence_lease_resource(l)) != 0 ||
		add_setting(kept, "fence.token", num) != 0 ||
		add_setting(kept, "fence.owner", fence_lease_owner(l)) != 0)
		return -1;
	return setenv("FENCE_RESOURCE", fence_lease_resource(l), 1) |
		setenv("FENCE_TOKEN", num, 1) | setenv("FENCE_OWNER", fence_lease_owner(l), 1);
}

/*
 * What the command carries for "set" (one RESOURCE is a set of one;
 * "as_set": -R was given), merged with the settings inherited in
 * PGOPTIONS (above).  On success 0, and the fence.tokens value in
 * "*tokens" (malloc'd) when one was written, NULL when the run carries
 * its one lease alone; -1 out of memory; -2 an inherited fence.tokens that
 * cannot be read (printed).
 */
int
carry_env(fence_leases *set, int as_set, char **tokens)
{
	const char *old = getenv("PGOPTIONS");
	carried		c = {0};
	char		err[256] = "",
				name[40],
				num[24];
	const char **res = NULL,
			  **own = NULL;
	long long  *tok = NULL;
	size_t		i,
				nown = fence_leases_count(set);
	int			rc = -1;

	*tokens = NULL;
	if (read_pgoptions(old ? old : "", &c, err, sizeof(err)) != 0)
	{
		if (err[0] == '\0')
			goto done;
		fprintf(stderr, "%s: PGOPTIONS: fence.tokens: %s\n", progname, err);
		rc = -2;
		goto done;
	}
	/* an inherited fence.resource joins the list, unless fence.tokens has it */
	if (c.single[0] != NULL && c.single[1] != NULL)
	{
		for (i = 0; i < c.n && strcmp(c.t[i].resource, c.single[0]) != 0; i++)
			;
		if (i == c.n && put_triple(&c, c.single[0], atoll(c.single[1]), c.single[2]) != 0)
			goto done;
	}
	if (!as_set && c.n == 0)
	{
		/* one lease, nothing inherited: PGOPTIONS as it was, and the lease */
		free(c.kept);
		c.kept = NULL;
		if (old != NULL && *old != '\0' && (c.kept = strdup(old)) == NULL)
			goto done;
		if (carry_one(fence_leases_member(set, 0), &c.kept) != 0 ||
			setenv("PGOPTIONS", c.kept, 1) != 0)
			goto done;
		rc = 0;
		goto done;
	}
	for (i = 0; i < nown; i++)
	{
		fence_lease *l = fence_leases_member(set, i);

		if (put_triple(&c, fence_lease_resource(l), fence_lease_token(l), fence_lease_owner(l)) != 0)
			goto done;
	}
	qsort(c.t, c.n, sizeof(triple), by_resource);
	res = malloc((c.n + 1) * sizeof(char *));
	own = malloc((c.n + 1) * sizeof(char *));
	tok = malloc((c.n + 1) * sizeof(long long));
	if (res == NULL || own == NULL || tok == NULL)
		goto done;
	for (i = 0; i < c.n; i++)
	{
		res[i] = c.t[i].resource;
		own[i] = c.t[i].owner;
		tok[i] = c.t[i].token;
	}
	if ((*tokens = fence_format_tokens(c.n, res, tok, own)) == NULL)
		goto done;

	/*
	 * PGOPTIONS: what was there, one fence.tokens, and a single lease's own
	 * (FENCE_RESOURCE, _TOKEN, _OWNER with it; an outer run's are gone)
	 */
	if (add_setting(&c.kept, "fence.tokens", *tokens) != 0)
		goto done;
	if (nown == 1)
	{
		if (carry_one(fence_leases_member(set, 0), &c.kept) != 0)
			goto done;
	}
	else
	{
		unsetenv("FENCE_RESOURCE");
		unsetenv("FENCE_TOKEN");
		unsetenv("FENCE_OWNER");
	}
	if (setenv("PGOPTIONS", c.kept, 1) != 0 || setenv("FENCE_TOKENS", *tokens, 1) != 0)
		goto done;
	snprintf(num, sizeof(num), "%zu", c.n);
	if (setenv("FENCE_COUNT", num, 1) != 0)
		goto done;
	for (i = 0; i < c.n; i++)
	{
		snprintf(num, sizeof(num), "%lld", c.t[i].token);
		snprintf(name, sizeof(name), "FENCE_RESOURCE_%zu", i + 1);
		rc = setenv(name, c.t[i].resource, 1);
		snprintf(name, sizeof(name), "FENCE_TOKEN_%zu", i + 1);
		rc |= setenv(name, num, 1);
		snprintf(name, sizeof(name), "FENCE_OWNER_%zu", i + 1);
		rc |= setenv(name, c.t[i].owner, 1);
		if (rc != 0)
		{
			rc = -1;
			goto done;
		}
	}
	/* numbered ones an outer run set beyond ours: gone */
	for (i = c.n + 1;; i++)
	{
		snprintf(name, sizeof(name), "FENCE_RESOURCE_%zu", i);
		if (getenv(name) == NULL)
			break;
		unsetenv(name);
		snprintf(name, sizeof(name), "FENCE_TOKEN_%zu", i);
		unsetenv(name);
		snprintf(name, sizeof(name), "FENCE_OWNER_%zu", i);
		unsetenv(name);
	}
	rc = 0;
done:
	if (rc < 0)
	{
		free(*tokens);
		*tokens = NULL;
	}
	free(res);
	free(own);
	free(tok);
	carried_free(&c);
	return rc;
}

/*
 * Whether sessions at "conninfo" opened with the command's PGOPTIONS see
 * what it carries: for one lease alone, fence.token (probe_pgoptions);
 * else fence.tokens: 0 when such a session shows "tokens", 1 when it works without (a warning
 * says why), -1 when it cannot connect with them, -2 when it cannot
 * connect at all (an error says so).
 */
int
carry_probe(const char *conninfo, fence_leases *set, const char *tokens)
{
	PGconn	   *pg;
	PGresult   *res;
	const char *why;
	char		msg[1024];
	int			rc,
				unreachable;

	if (tokens == NULL)
		return probe_pgoptions(conninfo, fence_leases_member(set, 0));
	if ((why = pq_load()) != NULL)
	{
		fprintf(stderr, "%s: %s\n", progname, why);
		return -1;
	}
	if ((pg = probe_connect(conninfo, &unreachable, msg, sizeof(msg))) == NULL)
	{
		if (unreachable)
			return probe_unreachable(msg);
		fprintf(stderr, "%s: PostgreSQL at --pg refuses the fence settings in PGOPTIONS\n"
				"(a connection pooler? PgBouncer refuses the options parameter): %s"
				"Run with --pooler and set fence.tokens per transaction instead\n"
				"(SET LOCAL fence.tokens = '$FENCE_TOKENS').\n",
				progname, msg);
		return -1;
	}
	res = PQexec(pg, "SHOW fence.tokens");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		note("warning: the fence extension at --pg has no fence.tokens (older than\n"
			 "0.3.0?): guarded writes of the command see only fence.resource, the lease of\n"
			 "the innermost fence run when it holds one; update the extension\n"
			 "(ALTER EXTENSION fence UPDATE).");
		rc = 1;
	}
	else if (PQntuples(res) != 1 || strcmp(PQgetvalue(res, 0, 0), tokens) != 0)
	{
		note("warning: sessions at --pg do not see fence.tokens in PGOPTIONS\n"
			 "(a connection pooler dropping them, or options in the connection string?):\n"
			 "guarded writes of the command will fail with LF002 unless it sets\n"
			 "fence.tokens itself (SET LOCAL fence.tokens = '$FENCE_TOKENS').");
		rc = 1;
	}
	else
		rc = 0;
	PQclear(res);
	PQfinish(pg);
	return rc;
}
