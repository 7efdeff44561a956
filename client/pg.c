/*
 * client/pg.c
 *	  The PostgreSQL side of a lease: announcing the token, fenced
 *	  statements, and healing a Redis counter that fell behind.
 *
 * The token always travels as a query parameter, never inside SQL text.
 * libpq is the caller's (the PGconn is); its functions are reached through
 * pq.h's table, which each public function here fills before its first
 * call, so that libfence links no libpq.
 *
 * Announce runs fence.advance(R, T, O) in its own committed transaction
 * right after the lease is acquired, so that every older token is refused
 * from then on, even for rows this holder has not written yet.
 *
 * If PostgreSQL answers LF001 to the announce, it has already accepted T
 * or more.  While we hold the lock that can only mean Redis handed out a
 * token it had handed out before (it restarted without its data, failed
 * over to a replica that missed the last INCRs, or a quorum lost the
 * counters of too many nodes).  The client then lifts the Redis counter to
 * PostgreSQL's mark (raise, never lower, and only while the lock is still
 * ours: scripts.c HEAL, or a claim on a majority in quorum.c), takes the
 * next token and announces again.  A resource whose mark fence.forget()
 * deleted, or a new one under a prefix with a floor, is refused the same
 * way until its counter is above the floor, which fence.mark() reports
 * for a resource without a mark: one heal lifts it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pq.h"
#include "store/store.h"

#define FENCE_HEAL_ATTEMPTS 5
#define ADVANCE_SQL "SELECT fence.advance($1::text, $2::bigint, $3::text)"

/*
 * The README's grant of an application role, the one grant that every verb
 * needs, for the edition that the database runs (fence.edition(), granted
 * to PUBLIC): the SQL edition has anycompatiblearray overloads where the
 * C extension has "any" ones, and a grant that names a function the
 * database does not have fails as a whole.  The C extension's when the
 * edition cannot be read (an extension older than fence.edition(), or a
 * transaction that failed).
 */
#define GRANT_C \
	"GRANT EXECUTE ON FUNCTION fence.advance(text, bigint, text), " \
	"fence.fenced_update(text, bigint, text), " \
	"fence.fenced_update(text, bigint, text, \"any\"), " \
	"fence.fenced_update(text, bigint, text, text[]), " \
	"fence.advance_many(text[], bigint[], text[]), " \
	"fence.fenced_update_many(text[], bigint[], text), " \
	"fence.fenced_update_many(text[], bigint[], text, \"any\"), " \
	"fence.fenced_update_many(text[], bigint[], text, text[]), " \
	"fence.mark(text)"
#define GRANT_SQL \
	"GRANT EXECUTE ON FUNCTION fence.advance(text, bigint, text), " \
	"fence.fenced_update(text, bigint, text), " \
	"fence.fenced_update(text, bigint, text, text[]), " \
	"fence.fenced_update(text, bigint, text, anycompatiblearray), " \
	"fence.advance_many(text[], bigint[], text[]), " \
	"fence.fenced_update_many(text[], bigint[], text), " \
	"fence.fenced_update_many(text[], bigint[], text, text[]), " \
	"fence.fenced_update_many(text[], bigint[], text, anycompatiblearray), " \
	"fence.mark(text)"

static const char *
grant_of(PGconn *pg)
{
	PGresult   *r = PQexec(pg, "SELECT fence.edition()");
	int			sql = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
		strcmp(PQgetvalue(r, 0, 0), "sql") == 0;

	PQclear(r);
	return sql ? GRANT_SQL : GRANT_C;
}

/*
 * The hint for a role without the grant.  The edition is asked on an
 * idle connection; inside fence_exec's transaction (a pipeline, or a
 * transaction that failed) it cannot be, so the C extension's grant is
 * written and the edition asked once the transaction is rolled back
 * (fence_pg_rollback()).
 */
static void
grant_hint(fence_ctx *ctx, PGconn *pg)
{
	char	   *who = PQuser(pg) ? PQescapeIdentifier(pg, PQuser(pg), strlen(PQuser(pg))) : NULL;
	int			idle = PQtransactionStatus(pg) == PQTRANS_IDLE;

	snprintf(ctx->conn->pg_hint, sizeof(ctx->conn->pg_hint),
			 "The role may not call fence's functions. As a superuser (or the "
			 "extension's owner), grant them: %s TO %s;",
			 idle ? grant_of(pg) : GRANT_C, who ? who : "ROLE");
	ctx->conn->pg_hint_grant = !idle;
	PQfreemem(who);
}

/*
 * An error of fence's own SQL that setting up the database fixes: say how
 * (fence_pg_hint).  By SQLSTATE, not by message, which the server's
 * language changes: 42501 (insufficient_privilege) is the missing grant
 * docs/install.md shows, 3F000 (invalid_schema_name) a database without the
 * extension (no schema "fence"), 42883 (undefined_function) one without
 * it or with an older version than this client needs, 25006
 * (read_only_sql_transaction) a standby where the primary was meant.
 * Only fence's own statements are read so: the caller's SQL may fail with
 * the same codes for reasons of its own.
 */
static void
setup_hint(fence_ctx *ctx, PGconn *pg, const char *state)
{
	const char *db = PQdb(pg) ? PQdb(pg) : "";

	if (strcmp(state, FENCE_SQLSTATE_PRIVILEGE) == 0)
		grant_hint(ctx, pg);
	else if (strcmp(state, FENCE_SQLSTATE_NO_SCHEMA) == 0)
		snprintf(ctx->conn->pg_hint, sizeof(ctx->conn->pg_hint),
				 "The extension is not installed in database \"%.200s\". "
				 "As a superuser, run in it: CREATE EXTENSION fence;", db);
	else if (strcmp(state, FENCE_SQLSTATE_READ_ONLY) == 0)
		snprintf(ctx->conn->pg_hint, sizeof(ctx->conn->pg_hint),
				 "The server is read-only (a standby, after a switchover or behind a "
				 "pooler that still points at it): tokens are announced to the primary. "
				 "Connect with target_session_attrs=read-write and every server of the "
				 "cluster in the connection string (host=pg1,pg2).");
	else if (strcmp(state, FENCE_SQLSTATE_NO_FUNCTION) == 0)
		snprintf(ctx->conn->pg_hint, sizeof(ctx->conn->pg_hint),
				 "The extension is missing from database \"%.200s\", or older than this "
				 "client. As a superuser, run in it: CREATE EXTENSION fence; "
				 "(or, where it is installed: ALTER EXTENSION fence UPDATE;)", db);
}

/*
 * Record a failed PostgreSQL call (here and in the set's fenced statement,
 * lease_set.c).  "res" may be NULL (then the connection's
 * message is used); it is cleared here.  "whose" says whether the
 * statement was fence's own (FENCE_SQL_OURS), whose setup errors get a
 * hint.
 */
void
fence_pg_error(fence_ctx *ctx, PGconn *pg, PGresult *res, const char *what, int whose)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = res ? PQresultErrorMessage(res) : PQerrorMessage(pg);
	size_t		len;

	if (msg == NULL || *msg == '\0')
		msg = PQerrorMessage(pg);
	fence_set_error(ctx, state && strcmp(state, FENCE_SQLSTATE_STALE) == 0 ? FENCE_ERR_STALE : FENCE_ERR_PG,
					"%s: %s", what, msg);
	/* libpq messages end in a newline; errstr should not */
	len = strlen(ctx->errstr);
	while (len > 0 && (ctx->errstr[len - 1] == '\n' || ctx->errstr[len - 1] == ' '))
		ctx->errstr[--len] = '\0';
	if (whose == FENCE_SQL_OURS && state != NULL)
		setup_hint(ctx, pg, state);
	PQclear(res);
}

/*
 * The fix for the last error, when it is a PostgreSQL error of fence's
 * own SQL that setting up the database makes (pg_error); NULL otherwise.
 */
const char *
fence_pg_hint(const fence_ctx *ctx)
{
	return ctx != NULL && ctx->conn != NULL && ctx->conn->pg_hint[0] != '\0' ?
		ctx->conn->pg_hint : NULL;
}

/* Run a statement that returns no rows; FENCE_OK if it worked. */
static int
simple_command(fence_ctx *ctx, PGconn *pg, const char *sql)
{
	PGresult   *res = PQexec(pg, sql);

	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		fence_pg_error(ctx, pg, res, sql, FENCE_SQL_THEIRS);
		return FENCE_ERR;
	}
	PQclear(res);
	return FENCE_OK;
}

/* SELECT fence.advance(R, T, O) in whatever transaction "pg" is in. */
static int
advance(fence_ctx *ctx, PGconn *pg, fence_lease *l)
{
	char		token[24];
	const char *params[3] = {l->resource, token, l->owner};
	PGresult   *res;

	snprintf(token, sizeof(token), "%lld", l->token);
	res = PQexecParams(pg, ADVANCE_SQL,
					   3, NULL, params, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		fence_pg_error(ctx, pg, res, "fence.advance failed", FENCE_SQL_OURS);
		return FENCE_ERR;
	}
	PQclear(res);
	return FENCE_OK;
}

/*
 * Read PostgreSQL's high-water mark for "resource" into "*token" (0 when
 * it has none), through fence.mark(): the role needs EXECUTE on it, as an
 * application role that announces tokens or a pg_monitor member has, and
 * not the SELECT on fence.fences that only administrators have.
 */
int
fence_pg_mark(fence_ctx *ctx, PGconn *pg, const char *resource, long long *token)
{
	const char *params[1] = {resource};
	PGresult   *res;

	fence_clear_error(ctx);
	if (pg == NULL || resource == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "no PostgreSQL connection or resource");
		return FENCE_ERR;
	}
	if (fence_pq_load(ctx) != FENCE_OK)
		return FENCE_ERR;
	res = PQexecParams(pg, "SELECT fence.mark($1::text)",
					   1, NULL, params, NULL, NULL, 0);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		fence_pg_error(ctx, pg, res, "could not read the fence", FENCE_SQL_OURS);
		return FENCE_ERR;
	}
	*token = 0;
	if (PQntuples(res) > 0 && !PQgetisnull(res, 0, 0))
	{
		const char *v = PQgetvalue(res, 0, 0);

		/* 0 is no mark: the resource was never announced, or was reset */
		if (fence_parse_counter(v, strlen(v), token) != 0)
		{
			fence_set_error(ctx, FENCE_ERR_PG, "fence.mark() returned an invalid token \"%s\"", v);
			PQclear(res);
			return FENCE_ERR;
		}
	}
	PQclear(res);
	return FENCE_OK;
}

/*
 * Lift the Redis counter to "mark" and take the next token, lock held.
 * When too few replicas acknowledged the healed token the lock was given
 * back (FENCE_ERR_REPLICAS): the lease is lost then, as when the lock was
 * not ours any more.
 */
static int
heal(fence_ctx *ctx, fence_lease *l, long long mark)
{
	int64_t		until_ns;
	long long	ttl_ms;
	int			rc;

	fence_lease_window(l, &ttl_ms, &until_ns);
	rc = fence_store_heal(ctx, l, mark, ttl_ms, until_ns);

	if (rc == 0)
	{
		fence_lease_set_lost(l);
		fence_set_error(ctx, FENCE_ERR_LOST, "lease on \"%s\" was lost before its token could be renewed",
						l->resource);
	}
	else if (rc < 0 && ctx->err == FENCE_ERR_REPLICAS)
		fence_lease_set_lost(l);
	return rc == 1 ? FENCE_OK : FENCE_ERR;
}

/*
 * Announce the lease's token to PostgreSQL in its own committed transaction
 * ("pg" must not be inside one).  Heals a Redis counter that is behind
 * PostgreSQL, which may change fence_lease_token().  Fails with
 * FENCE_ERR_STALE only when healing did not help, and with FENCE_ERR_LOST
 * (or _SUSPECT) when the lease is not surely held once the announce is done.
 */
int
fence_announce(fence_ctx *ctx, fence_lease *l, PGconn *pg)
{
	int			attempt;

	fence_clear_error(ctx);
	if (pg == NULL || l == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "no PostgreSQL connection or lease");
		return FENCE_ERR;
	}
	if (fence_pq_load(ctx) != FENCE_OK)
		return FENCE_ERR;
	if (PQtransactionStatus(pg) != PQTRANS_IDLE)
	{
		fence_set_error(ctx, PQstatus(pg) == CONNECTION_OK ? FENCE_ERR_ARG : FENCE_ERR_PG,
						"announce needs an idle PostgreSQL connection, outside any transaction");
		return FENCE_ERR;
	}
	for (attempt = 0; attempt < FENCE_HEAL_ATTEMPTS; attempt++)
	{
		long long	mark;

		if (fence_lease_usable(ctx, l) != FENCE_OK)
			return FENCE_ERR;
		if (advance(ctx, pg, l) == FENCE_OK)
		{
			/*
			 * The announce may have outlasted the lease (PostgreSQL was slow,
			 * or the fence row locked): then the token is announced, but the
			 * caller does not hold the lease and must not act as if it did.
			 */
			l->pg_accepted = 1;
			if (fence_lease_usable(ctx, l) != FENCE_OK)
			{
				if (ctx->err == FENCE_ERR_LOST)
					fence_set_error(ctx, FENCE_ERR_LOST, "lease on \"%s\" was lost while its token was announced",
									l->resource);
				return FENCE_ERR;
			}
			return FENCE_OK;
		}
		if (ctx->err != FENCE_ERR_STALE)
			return FENCE_ERR;
		/* PostgreSQL is ahead of Redis: catch up, then try again. */
		if (fence_pg_mark(ctx, pg, l->resource, &mark) != FENCE_OK)
			return FENCE_ERR;
		if (heal(ctx, l, mark) != FENCE_OK)
			return FENCE_ERR;
	}
	fence_set_error(ctx, FENCE_ERR_STALE,
					"token for \"%s\" still stale after %d attempts to catch up with PostgreSQL",
					l->resource, FENCE_HEAL_ATTEMPTS);
	return FENCE_ERR;
}

/*
 * Whether a fenced statement begins and ends its own transaction: 1 on an
 * idle connection, 0 inside the caller's transaction (the caller commits),
 * -1 with FENCE_ERR_PG in "ctx" for a failed transaction or a broken
 * connection, where no statement can run.
 */
int
fence_pg_own_tx(fence_ctx *ctx, PGconn *pg)
{
	switch (PQtransactionStatus(pg))
	{
		case PQTRANS_IDLE:
			return 1;
		case PQTRANS_INTRANS:
			return 0;
		default:
			fence_set_error(ctx, FENCE_ERR_PG, "PostgreSQL connection is not ready (failed transaction or broken connection)");
			return -1;
	}
}

/*
 * End the transaction fence_exec (or fence_leases_exec) began, if it is
 * still open; then the grant of a hint can name the database's edition
 * (grant_hint()).
 */
void
fence_pg_rollback(fence_ctx *ctx, PGconn *pg)
{
	if (PQtransactionStatus(pg) == PQTRANS_INTRANS ||
		PQtransactionStatus(pg) == PQTRANS_INERROR)
		PQclear(PQexec(pg, "ROLLBACK"));
	if (ctx->conn->pg_hint_grant && ctx->conn->pg_hint[0] != '\0' &&
		PQtransactionStatus(pg) == PQTRANS_IDLE)
		grant_hint(ctx, pg);
}

/*
 * A fenced statement ("who": fence_exec, fence_leases_exec) hands back one
 * result and streams no data, so it cannot run COPY.  End the COPY the
 * server began, so that nothing hangs: COPY FROM STDIN is failed (the
 * server aborts the statement), COPY TO STDOUT is read to its end and its
 * rows dropped.  The caller then rolls back.
 */
void
fence_pg_refuse_copy(fence_ctx *ctx, PGconn *pg, ExecStatusType st, int report, const char *who)
{
	char		why[64];

	if (st == PGRES_COPY_OUT)
	{
		char	   *row;

		while (PQgetCopyData(pg, &row, 0) > 0)
			PQfreemem(row);
	}
	else
	{
		snprintf(why, sizeof(why), "%s does not run COPY", who);
		(void) PQputCopyEnd(pg, why);
	}
	if (report)
		fence_set_error(ctx, FENCE_ERR_ARG,
						"COPY is not supported: %s returns one result and streams no data", who);
}

int
fence_pg_is_copy(ExecStatusType st)
{
	return st == PGRES_COPY_IN || st == PGRES_COPY_OUT || st == PGRES_COPY_BOTH;
}

/*
 * fence_pg_statement: the caller's statement, in one call (the fenced
 * statement of one lease stepwise, and of a set).  A COPY is refused and
 * ended, and a failed statement recorded as the caller's; both return NULL
 * with the connection idle again, the transaction for the caller to end.
 */
PGresult *
fence_pg_statement(fence_ctx *ctx, PGconn *pg, const char *sql,
				   int nparams, const char *const *params, const char *who)
{
	PGresult   *res = PQexecParams(pg, sql, nparams, NULL, params, NULL, NULL, 0);
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

	if (fence_pg_is_copy(st))
	{
		/* one result, no data streamed: end the COPY the server began */
		PQclear(res);
		fence_pg_refuse_copy(ctx, pg, st, 1, who);
		while ((res = PQgetResult(pg)) != NULL)
			PQclear(res);
		return NULL;
	}
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
	{
		fence_pg_error(ctx, pg, res, "fenced statement failed", FENCE_SQL_THEIRS);
		return NULL;
	}
	return res;
}

/*
 * The statement ran: whether it commits is the lease's to say, since it may
 * have run out while the statement did.  On an idle connection ("own_tx")
 * check the lease once more, then COMMIT, or ROLLBACK when it is suspect or
 * lost.  Inside the caller's transaction report a lease that is not held,
 * and leave the end of the transaction to the caller.
 */
static PGresult *
commit_if_held(fence_ctx *ctx, fence_lease *l, PGconn *pg, PGresult *res, int own_tx)
{
	if (fence_lease_usable(ctx, l) != FENCE_OK)
	{
		PQclear(res);
		if (own_tx)
			fence_pg_rollback(ctx, pg);
		return NULL;
	}
	if (own_tx && simple_command(ctx, pg, "COMMIT") != FENCE_OK)
	{
		PQclear(res);
		fence_pg_rollback(ctx, pg);
		return NULL;
	}
	return res;
}

#ifndef FENCE_USE_PIPELINE
/*
 * Without pipeline mode (libpq before 14): BEGIN, advance, the statement,
 * COMMIT, one round trip each.
 */
static PGresult *
exec_stepwise(fence_ctx *ctx, fence_lease *l, PGconn *pg, const char *sql,
			  int nparams, const char *const *params, int own_tx, int *refused)
{
	PGresult   *res;

	if (own_tx && simple_command(ctx, pg, "BEGIN") != FENCE_OK)
		return NULL;
	if (advance(ctx, pg, l) != FENCE_OK)
	{
		*refused = ctx->err == FENCE_ERR_STALE;
		goto fail;
	}
	res = fence_pg_statement(ctx, pg, sql, nparams, params, "fence_exec");
	if (res == NULL)
		goto fail;
	return commit_if_held(ctx, l, pg, res, own_tx);

fail:
	if (own_tx)
		fence_pg_rollback(ctx, pg);
	return NULL;
}
#endif

#ifdef FENCE_USE_PIPELINE
/*
 * fence.advance and the statement go out in a pipeline ended by a Sync:
 * after an error the server skips the rest, so the statement never runs
 * without the check, and the advance never commits without the statement.
 * On an idle connection a BEGIN goes first, so that the Sync leaves the
 * transaction open for commit_if_held: two round trips.  Inside the
 * caller's transaction, one.
 */
static PGresult *
exec_pipelined(fence_ctx *ctx, fence_lease *l, PGconn *pg, const char *sql,
			   int nparams, const char *const *params, int own_tx, int *refused)
{
	static const char *const what[] = {
		"could not begin a transaction", "fence.advance failed", "fenced statement failed"
	};
	char		token[24];
	const char *aparams[3] = {l->resource, token, l->owner};
	PGresult   *out = NULL;
	int			failed = 0,
				query = own_tx ? 0 : 1, /* 0: BEGIN, 1: advance, 2: statement */
				nulls = 0;

	snprintf(token, sizeof(token), "%lld", l->token);
	if (PQenterPipelineMode(pg) != 1)
	{
		fence_pg_error(ctx, pg, NULL, "could not enter pipeline mode", FENCE_SQL_THEIRS);
		return NULL;
	}
	if ((own_tx && PQsendQueryParams(pg, "BEGIN", 0, NULL, NULL, NULL, NULL, 0) != 1) ||
		PQsendQueryParams(pg, ADVANCE_SQL, 3, NULL, aparams, NULL, NULL, 0) != 1 ||
		PQsendQueryParams(pg, sql, nparams, NULL, params, NULL, NULL, 0) != 1)
	{
		fence_pg_error(ctx, pg, NULL, "could not send the fenced statement", FENCE_SQL_THEIRS);
		failed = 1;
	}
	/* Always end the pipeline, so that draining it cannot hang. */
	if (PQpipelineSync(pg) != 1)
	{
		if (!failed)
			fence_pg_error(ctx, pg, NULL, "could not send the fenced statement", FENCE_SQL_THEIRS);
		failed = 1;
	}

	/*
	 * Each query's results end with a NULL; the Sync's result ends the
	 * pipeline.  Two NULLs in a row mean nothing more is coming (a broken
	 * connection).
	 */
	for (;;)
	{
		PGresult   *res = PQgetResult(pg);
		ExecStatusType st;

		if (res == NULL)
		{
			if (++nulls >= 2 || PQstatus(pg) == CONNECTION_BAD)
				break;
			query++;
			continue;
		}
		nulls = 0;
		st = PQresultStatus(res);
		if (st == PGRES_PIPELINE_SYNC)
		{
			PQclear(res);
			break;
		}
		if (fence_pg_is_copy(st))
		{
			/* its end comes next: an error, or the COPY's command tag */
			fence_pg_refuse_copy(ctx, pg, st, !failed, "fence_exec");
			failed = 1;
			PQclear(res);
		}
		else if (st == PGRES_FATAL_ERROR && !failed)
		{
			/* query 1 is fence.advance, ours */
			fence_pg_error(ctx, pg, res, what[query < 2 ? query : 2],
					 query == 1 ? FENCE_SQL_OURS : FENCE_SQL_THEIRS);
			*refused = query == 1 && ctx->err == FENCE_ERR_STALE;
			failed = 1;
		}
		else if (query == 2 && !failed &&
				 (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK))
		{
			PQclear(out);
			out = res;
		}
		else if (query <= 2 && !failed && st != PGRES_TUPLES_OK &&
				 st != PGRES_COMMAND_OK && st != PGRES_PIPELINE_ABORTED)
		{
			PQclear(res);
			fence_set_error(ctx, FENCE_ERR_PG, "unexpected result status %s from the fenced statement",
							PQresStatus(st));
			failed = 1;
		}
		else
			PQclear(res);
	}
	if (PQexitPipelineMode(pg) != 1 && !failed)
	{
		fence_pg_error(ctx, pg, NULL, "could not leave pipeline mode", FENCE_SQL_THEIRS);
		failed = 1;
	}
	if (failed || out == NULL)
	{
		if (!failed)
			fence_set_error(ctx, FENCE_ERR_PG, "fenced statement returned no result");
		PQclear(out);
		if (own_tx)
			fence_pg_rollback(ctx, pg);
		return NULL;
	}
	return commit_if_held(ctx, l, pg, out, own_tx);
}
#endif

/*
 * One attempt of fence_exec: BEGIN, fence.advance, the statement, COMMIT;
 * "*refused" tells whether fence.advance refused the token as stale.
 */
static PGresult *
exec_once(fence_ctx *ctx, fence_lease *l, PGconn *pg, const char *sql,
		  int nparams, const char *const *params, int own_tx, int *refused)
{
	*refused = 0;
#ifdef FENCE_USE_PIPELINE
	return exec_pipelined(ctx, l, pg, sql, nparams, params, own_tx, refused);
#else
	return exec_stepwise(ctx, l, pg, sql, nparams, params, own_tx, refused);
#endif
}

/*
 * Run "sql" with "params" (text, $1..$n) fenced by the lease's token: one
 * transaction does fence.advance(R, T, O), then the statement.  On an idle
 * connection that transaction commits before this returns, once the lease
 * has been checked again after the statement (it is rolled back when the
 * lease is suspect or lost by then); inside the caller's transaction the
 * COMMIT is left to the caller, and a lease lost meanwhile is reported.
 * Refused while the lease is suspect or lost, and for COPY (FENCE_ERR_ARG).
 * Returns the statement's result (PQclear it), or NULL: FENCE_ERR_STALE
 * when PostgreSQL has seen a newer token.  With libpq 14 or later (pipeline
 * mode) this is two round trips, one inside the caller's transaction.
 * The first fenced statement under a fresh lease is its announce as well
 * (fence_exec_heal).
 */
PGresult *
fence_exec(fence_ctx *ctx, fence_lease *l, PGconn *pg, const char *sql,
		   int nparams, const char *const *params)
{
	PGresult   *res;
	int			own_tx,
				refused;

	fence_clear_error(ctx);
	if (pg == NULL || l == NULL || sql == NULL || nparams < 0 ||
		(nparams > 0 && params == NULL))
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "fence_exec needs a connection, a lease and a statement");
		return NULL;
	}
	if (fence_pq_load(ctx) != FENCE_OK || fence_lease_usable(ctx, l) != FENCE_OK)
		return NULL;
	if ((own_tx = fence_pg_own_tx(ctx, pg)) < 0)
		return NULL;
	res = exec_once(ctx, l, pg, sql, nparams, params, own_tx, &refused);
	if (res == NULL && fence_exec_heal(refused, l->pg_accepted, own_tx) &&
		fence_announce(ctx, l, pg) == FENCE_OK)
		res = exec_once(ctx, l, pg, sql, nparams, params, own_tx, &refused);
	if (res != NULL)
		l->pg_accepted = 1;
	return res;
}

/*
 * Whether a fenced statement whose fence.advance refused the token
 * ("refused") should heal and run again.  Its transaction began with that
 * advance, which moves the mark before the statement reads anything, as
 * an announce would: so the first statement under a fresh lease needs no
 * announce before it (README, "How it works").  But the announce also
 * heals a Redis counter that fell behind PostgreSQL (Redis lost its
 * data); a token PostgreSQL has never accepted, refused in a transaction
 * of the statement's own (rolled back by now), gets that: fence_announce
 * heals, and the statement runs again under the new token.  A token
 * refused after PostgreSQL took it once is stale for good (a newer holder
 * announced), and so is a refusal inside the caller's transaction, which
 * it has aborted, or one of the statement itself, which ran.
 */
int
fence_exec_heal(int refused, int pg_accepted, int own_tx)
{
	return refused && !pg_accepted && own_tx == 1;
}
