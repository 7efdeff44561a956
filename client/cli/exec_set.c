/*
 * client/cli/exec_set.c
 *	  fence exec -R A -R B: one SQL statement under every token of a set.
 *
 * One transaction: fence.advance_many(resources, tokens, owners), which
 * accepts every token or refuses them all (LF001, in the order of the
 * names, so two of these in opposite orders cannot deadlock in PostgreSQL
 * either), with fence.tokens set for the transaction, so that the guards
 * of the tables it writes find each row's token; then the statement; then
 * COMMIT, once every lease of the set is checked again (ROLLBACK and exit
 * 76 when one was lost meanwhile).  It needs the extension of 0.3.0
 * (fence.advance_many); against an older one the error says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* "{"a","b"}": a text[] literal of "n" strings, or NULL (out of memory). */
static char *
array_literal(size_t n, const char *(*get) (fence_lease *), fence_leases *set)
{
	size_t		cap = 3,
				i;
	char	   *out,
			   *p;

	for (i = 0; i < n; i++)
		cap += 2 * strlen(get(fence_leases_member(set, i))) + 3;
	if ((p = out = malloc(cap)) == NULL)
		return NULL;
	*p++ = '{';
	for (i = 0; i < n; i++)
	{
		const char *s = get(fence_leases_member(set, i));

		if (i > 0)
			*p++ = ',';
		*p++ = '"';
		for (; *s; s++)
		{
			if (*s == '"' || *s == '\\')
				*p++ = '\\';
			*p++ = *s;
		}
		*p++ = '"';
	}
	*p++ = '}';
	*p = '\0';
	return out;
}

static const char *
member_resource(fence_lease *l)
{
	return fence_lease_resource(l);
}

static const char *
member_owner(fence_lease *l)
{
	return fence_lease_owner(l);
}

/* A failed call: print it, and say how fence exits (77 for LF001). */
static int
sql_failed(PGconn *pg, PGresult *res, const char *what)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = res ? PQresultErrorMessage(res) : PQerrorMessage(pg);
	int			code;

	fprintf(stderr, "%s: %s: %s", progname, what, msg && *msg ? msg : PQerrorMessage(pg));
	if (state != NULL && strcmp(state, FENCE_SQLSTATE_NO_FUNCTION) == 0)
		fprintf(stderr, "%s: hint: the fence extension is older than this client (no fence.advance_many):"
				" ALTER EXTENSION fence UPDATE\n", progname);
	code = PQstatus(pg) != CONNECTION_OK ? EXIT_UNAVAIL :
		state != NULL && strcmp(state, FENCE_SQLSTATE_STALE) == 0 ? EXIT_STALE : EXIT_FAIL;
	PQclear(res);				/* "state" is in it */
	return code;
}

/*
 * Run "sql" with "params" under the set's tokens on the idle connection
 * "pg"; the result (PQclear it), or NULL with the exit status in "*code".
 */
PGresult *
exec_set(fence_leases *set, PGconn *pg, const char *sql, int nparams,
		 const char *const *params, int *code)
{
	size_t		n = fence_leases_count(set),
				i;
	char	   *resources = array_literal(n, member_resource, set),
			   *owners = array_literal(n, member_owner, set),
			   *tokens = fence_leases_tokens(set),
			   *nums = malloc(n * 22 + 3);
	const char *args[4];
	PGresult   *res = NULL,
			   *out = NULL;
	ExecStatusType st;

	*code = EXIT_FAIL;
	if (resources == NULL || owners == NULL || tokens == NULL || nums == NULL)
	{
		fprintf(stderr, "%s: out of memory\n", progname);
		goto done;
	}
	strcpy(nums, "{");
	for (i = 0; i < n; i++)
		sprintf(nums + strlen(nums), "%s%lld", i ? "," : "",
				fence_lease_token(fence_leases_member(set, i)));
	strcat(nums, "}");
	args[0] = resources;
	args[1] = nums;
	args[2] = owners;
	args[3] = tokens;
	res = PQexec(pg, "BEGIN");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		*code = sql_failed(pg, res, "BEGIN");
		res = NULL;
		goto done;
	}
	PQclear(res);
	res = PQexecParams(pg, "SELECT fence.advance_many($1::text[], $2::bigint[], $3::text[]),"
					   " set_config('fence.tokens', $4, true)",
					   4, NULL, args, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		*code = sql_failed(pg, res, "fence.advance_many");
		res = NULL;
		goto rollback;
	}
	PQclear(res);
	res = PQexecParams(pg, sql, nparams, NULL, params, NULL, NULL, 0);
	st = PQresultStatus(res);
	if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT || st == PGRES_COPY_BOTH)
	{
		/* one result, no data streamed: end the COPY the server began */
		PQclear(res);
		if (st == PGRES_COPY_IN)
			(void) PQputCopyEnd(pg, "fence exec does not run COPY");
		else
		{
			char	   *row;

			while (PQgetCopyData(pg, &row, 0) > 0)
				PQfreemem(row);
		}
		while ((res = PQgetResult(pg)) != NULL)
			PQclear(res);
		fprintf(stderr, "%s: COPY is not supported: fence exec returns one result and streams no data\n",
				progname);
		*code = EXIT_USAGE;
		goto rollback;
	}
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
	{
		*code = sql_failed(pg, res, "fenced statement failed");
		res = NULL;
		goto rollback;
	}
	/* the statement may have outlived a lease: then it must not commit */
	if (fence_leases_state(set) != FENCE_LEASE_HELD)
	{
		fprintf(stderr, "%s: a lease of the set was lost (or Redis is unreachable) while the statement ran;"
				" rolled back\n", progname);
		*code = EXIT_LOST;
		goto rollback;
	}
	out = res;
	res = PQexec(pg, "COMMIT");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		*code = sql_failed(pg, res, "COMMIT");
		res = out;
		out = NULL;
		goto rollback;
	}
	*code = 0;
	goto done;

rollback:
	if (PQtransactionStatus(pg) == PQTRANS_INTRANS || PQtransactionStatus(pg) == PQTRANS_INERROR)
		PQclear(PQexec(pg, "ROLLBACK"));
done:
	PQclear(res);
	free(resources);
	free(owners);
	free(tokens);
	free(nums);
	return out;
}
