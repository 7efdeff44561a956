/*
 * client/lease_set.c
 *	  A set of leases held together (one word for the idea: "set"; the
 *	  public names say "many" and "leases"): a transfer that debits one
 *	  account and credits another holds the lease of each.
 *
 * Order.  The members are taken one after the other in one canonical
 * order, the bytewise order of their names (strcmp), whatever order the
 * caller gave: two workers asking for {a,b} and {b,a} both queue for "a"
 * first, so neither can hold what the other waits for, and there is no
 * deadlock to break.  The same name twice is refused (FENCE_ERR_ARG).
 *
 * All or nothing.  When a member cannot be had (busy, the deadline passed,
 * an error), the members taken so far are given back at once, in reverse
 * order (in one pipeline on one master), and the call fails with that
 * member's error: FENCE_ERR_BUSY for
 * fence_acquire_many, FENCE_ERR_TIMEOUT for fence_acquire_many_wait.
 * Nobody is left holding half a set.
 *
 * One owner.  Every member carries the same owner id, so that one id
 * names the whole set in Redis, in fence.fences and in FENCE_OWNER_i; an
 * id only has to be unique per lock key, and each member has its own.
 *
 * Waiting.  The wait of each member is what is left of the one deadline.
 * A member taken early may have waited a long time for a later one; once
 * all are held, members taken more than a third of the TTL ago are
 * extended, so the set starts with every TTL whole (or fails, given back,
 * if one ran out meanwhile).
 *
 * Topologies.  Each member is an ordinary lease (lease.c), so a set works
 * wherever one lease does.  Where one master holds every key (single node,
 * Sentinel), the first attempt sends every member's acquire in one
 * pipeline and the release every member's compare-and-DEL in another: a
 * set of N costs one round trip to take and one to give back when all are
 * free (take_prefix says why that keeps the canonical order's promise).
 * On a Cluster the members' keys are in different slots (fence:{R}:...),
 * usually on different masters, and on a quorum each member needs its own
 * majority: there they cost one acquire each, one after the other (N round
 * trips, and N compare-and-DEL to give back), as when replicas are asked
 * for (each acquire waits for its own WAIT).
 *
 * The heartbeat.  fence_leases_heartbeat_start starts the heartbeat of
 * each member, each on its own Redis connection and its own schedule
 * (TTL/3), and reports the loss of any member, once, as the loss of the
 * set.
 *
 * PostgreSQL.  fence_leases_announce announces each member as
 * fence_announce does; fence_leases_exec is the set's fenced statement,
 * one transaction under every member's token (fence.advance_many and
 * fence.tokens), what fence_exec is for one lease.  A set of one is one
 * lease there: fence_exec, which every version of the extension has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pq.h"
#include "store/store.h"

struct fence_leases
{
	size_t		n;
	fence_lease **members;		/* canonical order */
	fence_leases_lost_fn lost_cb;
	void	   *lost_arg;
	int			lost_told;		/* the callback ran (atomic) */
};

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * Give back the "n" leases "ls", last first, as fence_release does each:
 * on one master in one pipeline (store.h), elsewhere one at a time.
 * FENCE_OK when every one was given back; else FENCE_ERR with the first
 * failure's error, in that order (FENCE_ERR_LOST: one was no longer held).
 * A lease whose release failed for an error stays as it was, as with
 * fence_release.
 */
static int
release_members(fence_ctx *ctx, fence_lease **ls, size_t n)
{
	const char **keys = malloc((n + 1) * sizeof(*keys));
	int		   *rcs = malloc((n + 1) * sizeof(*rcs));
	int			rc = FENCE_STORE_ONE_AT_A_TIME,
				result = FENCE_OK,
				err = 0;
	char		errstr[FENCE_ERRSTR_LEN] = "";
	size_t		i;

	fence_clear_error(ctx);
	for (i = 0; i < n; i++)
		fence_heartbeat_stop(ls[i]);
	if (n > 0 && keys != NULL && rcs != NULL)
	{
		for (i = 0; i < n; i++)
			keys[i] = ls[n - 1 - i]->keys.lock;
		rc = fence_store_release_many(ctx, (int) n, keys, fence_lease_owner(ls[0]), rcs);
	}
	if (rc == FENCE_OK)
	{
		/* the store's error is that of the first release that failed */
		err = ctx->err;
		memcpy(errstr, ctx->errstr, sizeof(errstr));
		for (i = 0; i < n; i++)
		{
			fence_lease *l = ls[n - 1 - i];

			if (rcs[i] >= 0)
				fence_lease_set_lost(l);
			if (rcs[i] == 1 || result != FENCE_OK)
				continue;
			result = FENCE_ERR;
			if (rcs[i] == 0)
			{
				snprintf(errstr, sizeof(errstr),
						 "lease on \"%s\" was no longer held by this owner", l->resource);
				err = FENCE_ERR_LOST;
			}
		}
	}
	else if (rc != FENCE_STORE_ONE_AT_A_TIME)
	{
		/*
		 * The pipeline broke: which releases ran is not known.  As for one
		 * lease whose release got no answer, the locks that are still ours
		 * run out with their TTL; the leases stay as they were.
		 */
		result = FENCE_ERR;
		err = ctx->err;
		memcpy(errstr, ctx->errstr, sizeof(errstr));
	}
	else
	{
		/* no pipeline on this topology: one at a time */
		for (i = n; i-- > 0;)
			if (fence_release(ctx, ls[i]) != FENCE_OK && result == FENCE_OK)
			{
				result = FENCE_ERR;
				err = ctx->err;
				memcpy(errstr, ctx->errstr, sizeof(errstr));
			}
	}
	fence_clear_error(ctx);
	if (result != FENCE_OK)
	{
		ctx->err = err;
		memcpy(ctx->errstr, errstr, sizeof(errstr));
	}
	free(keys);
	free(rcs);
	return result;
}

/*
 * Give back members "from" to "to" (excluded) of "set" and free them,
 * keeping ctx's error.
 */
static void
release_and_free(fence_ctx *ctx, fence_leases *set, size_t from, size_t to)
{
	int			err = ctx->err;
	char		errstr[FENCE_ERRSTR_LEN];
	size_t		i;

	memcpy(errstr, ctx->errstr, sizeof(errstr));
	if (to > from)
		(void) release_members(ctx, set->members + from, to - from);
	for (i = from; i < to; i++)
	{
		fence_lease_free(set->members[i]);
		set->members[i] = NULL;
	}
	ctx->err = err;
	memcpy(ctx->errstr, errstr, sizeof(errstr));
}

/*
 * The first attempt at a set on one master (single node, Sentinel): every
 * member's acquire, in canonical order, in one pipeline (store.h), rather
 * than one round trip each.  Returns how many members it leaves held, the
 * first "k" in canonical order (set->n = k), for the caller to go on from
 * member k one at a time; 0 also when the topology has no such pipeline
 * (Cluster, quorum) or replicas are asked for; -1 on failure, with
 * nothing held and the error set.
 *
 * The prefix rule.  Of the members taken, only the leading run is kept:
 * those taken after the first that was not (busy, or an error, which the
 * caller's own attempt at that member then reports) are given back at
 * once, in a second pipeline, before anything waits.  So a set never holds
 * anything but a canonical prefix of its members while it waits for the
 * next one, as when taken one after the other, and that is why {a,b} and
 * {b,a} cannot deadlock: a worker that waits for member m holds only
 * members that sort before m.  In a cycle of workers W1 ... Wk, each Wi
 * waiting for a member mi that W(i+1) holds, mi would sort before m(i+1),
 * and so m1 before m2 ... before m1: no such cycle can form.
 * What the pipeline adds is a member held for one round trip by a set
 * that then gives it back: another worker's fence_acquire (which does not
 * wait) may find it busy in that moment.  Every attempt here is a
 * FENCE_ATTEMPT_TRY, which takes no place in a queue: a set queues only
 * for the member it waits for, on the caller's path.
 *
 * When the pipeline broke, which acquires ran is not known.  As for one
 * lease whose acquire got no answer, the locks it may have taken are left
 * to their TTL, not chased on a connection that just failed (each attempt
 * would wait for a command timeout of its own).  The set fails with that
 * error, unless it waits on a topology that fails over (Sentinel): then
 * it goes on one member at a time under the same owner id, which
 * "*owner" receives (an acquire by the owner that holds a lock takes it
 * again), as one lease rides a failover (lease.c).
 */
static long
take_prefix(fence_ctx *ctx, fence_leases *set, const char **names, size_t n,
			long long ttl_ms, long long wait_ms, int64_t deadline, char *owner)
{
	int64_t		caller_deadline = ctx->conn->deadline_ns,
				t0;
	int		   *rcs = malloc(n * sizeof(*rcs));
	size_t		i,
				k,
				kept;
	int			rc,
				late;

	if (rcs == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++)
	{
		const char *owner = i == 0 ? NULL : fence_lease_owner(set->members[0]);

		if ((set->members[i] = fence_lease_new(ctx, names[i], ttl_ms, owner)) == NULL)
		{
			while (i-- > 0)
			{
				fence_lease_free(set->members[i]);
				set->members[i] = NULL;
			}
			free(rcs);
			return -1;
		}
	}
	/* as for one lease, a wait bounds its commands (fence_acquire_wait_as) */
	if (wait_ms > 0)
	{
		int64_t		bound = deadline + (int64_t) FENCE_WAIT_SLACK_MS * 1000000;

		if (caller_deadline == 0 || bound < caller_deadline)
			fence_conn_set_deadline(ctx, bound);
	}
	t0 = fence_now_ns();
	rc = fence_store_acquire_many(ctx, (int) n, set->members, FENCE_ATTEMPT_TRY, rcs);
	fence_conn_set_deadline(ctx, caller_deadline);
	if (rc != FENCE_OK)
	{
		int			go_on = rc == FENCE_STORE_ONE_AT_A_TIME ||
			(wait_ms > 0 && ctx->err == FENCE_ERR_IO && ctx->conn->ops->fails_over);

		if (rc != FENCE_STORE_ONE_AT_A_TIME && go_on)
			strcpy(owner, fence_lease_owner(set->members[0]));
		if (go_on)
			fence_clear_error(ctx);
		for (i = 0; i < n; i++)
		{
			fence_lease_free(set->members[i]);
			set->members[i] = NULL;
		}
		free(rcs);
		return go_on ? 0 : -1;
	}

	/*
	 * Answered later than the drift margin allows (a failover ridden
	 * inside the one write, a master frozen for a while): the members'
	 * local deadlines, counted from t0, are short or past.  A set that
	 * waits then keeps none of them and goes on one member at a time
	 * under the same owner id, as one lease asks again then (lease.c,
	 * taken_after), rather than be handed members lost before their
	 * first use.
	 */
	late = wait_ms > 0 && fence_now_ns() - t0 > fence_drift_ms(ttl_ms) * 1000000;
	if (late)
		strcpy(owner, fence_lease_owner(set->members[0]));
	for (k = 0; !late && k < n && rcs[k] == 1; k++)
		fence_lease_taken(set->members[k], t0);
	set->n = k;

	/* the members taken after the first one that was not (all, when late): back at once */
	for (i = kept = k; i < n; i++)
	{
		fence_lease *l = set->members[i];

		set->members[i] = NULL;
		if (rcs[i] == 1)
			set->members[kept++] = l;
		else
			fence_lease_free(l);
	}
	release_and_free(ctx, set, k, kept);
	free(rcs);
	fence_clear_error(ctx);
	return (long) k;
}

/*
 * Take the leases on "resources" ("n" names, any order) for "ttl_ms",
 * waiting up to "wait_ms" in all (0: each must be free now).  NULL on
 * failure, with nothing held.
 */
fence_leases *
fence_acquire_many_wait(fence_ctx *ctx, const char *const *resources, size_t n,
						long long ttl_ms, long long wait_ms)
{
	fence_leases *set;
	const char **names;
	int64_t		deadline,
				first_taken = 0;
	long		taken;
	char		owner_id[FENCE_OWNER_MAX + 1] = "";
	size_t		i;

	fence_clear_error(ctx);
	if (resources == NULL || n == 0)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "a set of leases needs at least one resource");
		return NULL;
	}
	if (wait_ms < 0 || wait_ms > FENCE_MAX_TTL_MS)
	{
		fence_set_error(ctx, FENCE_ERR_ARG, "wait must be between 0 and %lld ms",
						FENCE_MAX_TTL_MS);
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (fence_check_resource(resources[i], ctx->errstr, sizeof(ctx->errstr)) != FENCE_OK ||
			fence_check_ttl(ttl_ms, ctx->errstr, sizeof(ctx->errstr)) != FENCE_OK)
		{
			ctx->err = FENCE_ERR_ARG;
			return NULL;
		}
	names = malloc(n * sizeof(*names));
	set = calloc(1, sizeof(*set));
	if (names == NULL || set == NULL || (set->members = calloc(n, sizeof(fence_lease *))) == NULL)
	{
		free(names);
		free(set);
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		return NULL;
	}
	memcpy(names, resources, n * sizeof(*names));
	qsort(names, n, sizeof(*names), by_name);
	for (i = 1; i < n; i++)
		if (strcmp(names[i - 1], names[i]) == 0)
		{
			fence_set_error(ctx, FENCE_ERR_ARG, "resource \"%.200s\" is named twice", names[i]);
			free(names);
			fence_leases_free(set);
			return NULL;
		}

	deadline = fence_now_ns() + wait_ms * 1000000;
	taken = take_prefix(ctx, set, names, n, ttl_ms, wait_ms, deadline, owner_id);
	if (taken > 0)
		first_taken = fence_now_ns();
	for (i = taken < 0 ? n : (size_t) taken; i < n; i++)
	{
		const char *owner = i > 0 ? fence_lease_owner(set->members[0]) :
			owner_id[0] != '\0' ? owner_id : NULL;

		/*
		 * What is left of the one deadline (an exhausted one still makes a
		 * last try, as for one lease); a timeout names the whole wait
		 */
		set->members[i] = fence_acquire_wait_as(ctx, names[i], ttl_ms, wait_ms, deadline, owner);
		if (set->members[i] == NULL)
			break;
		if (i == 0)
			first_taken = fence_now_ns();
		set->n = i + 1;
	}
	free(names);
	if (taken < 0 || set->n < n)
	{
		release_and_free(ctx, set, 0, set->n);
		set->n = 0;
		fence_leases_free(set);
		return NULL;
	}

	/* long waits for later members: the early ones get their TTL whole again */
	if (fence_now_ns() - first_taken > ttl_ms * 1000000 / 3)
		for (i = 0; i + 1 < n; i++)
			if (fence_extend(ctx, set->members[i], ttl_ms) != FENCE_OK)
			{
				release_and_free(ctx, set, 0, n);
				set->n = 0;
				fence_leases_free(set);
				return NULL;
			}
	return set;
}

fence_leases *
fence_acquire_many(fence_ctx *ctx, const char *const *resources, size_t n, long long ttl_ms)
{
	return fence_acquire_many_wait(ctx, resources, n, ttl_ms, 0);
}

size_t
fence_leases_count(const fence_leases *set)
{
	return set == NULL ? 0 : set->n;
}

/* Member "i" in canonical order (NULL past the end). */
fence_lease *
fence_leases_member(const fence_leases *set, size_t i)
{
	return set == NULL || i >= set->n ? NULL : set->members[i];
}

/*
 * The set's state: the worst of its members' (LOST when any is lost,
 * SUSPECT when any is suspect).
 */
int
fence_leases_state(fence_leases *set)
{
	int			worst = FENCE_LEASE_HELD;
	size_t		i;

	for (i = 0; i < set->n; i++)
	{
		int			s = fence_lease_state(set->members[i]);

		if (s > worst)
			worst = s;
	}
	return worst;
}

/*
 * Extend every member for "ttl_ms" (0: each its current TTL).  Stops at the
 * first that fails, with its error: a set one member of which is lost is
 * lost.
 */
int
fence_leases_extend(fence_ctx *ctx, fence_leases *set, long long ttl_ms)
{
	size_t		i;

	for (i = 0; i < set->n; i++)
		if (fence_extend(ctx, set->members[i], ttl_ms) != FENCE_OK)
			return FENCE_ERR;
	return FENCE_OK;
}

/*
 * Give every member back (stopping the heartbeats first), last first.  All
 * are tried; the error is the first failure's (FENCE_ERR_LOST: a member was
 * no longer held).
 */
int
fence_leases_release(fence_ctx *ctx, fence_leases *set)
{
	fence_leases_heartbeat_stop(set);
	return release_members(ctx, set->members, set->n);
}

void
fence_leases_free(fence_leases *set)
{
	size_t		i;

	if (set == NULL)
		return;
	fence_leases_heartbeat_stop(set);
	for (i = 0; i < set->n; i++)
		fence_lease_free(set->members[i]);
	free(set->members);
	free(set);
}

/* A member's heartbeat lost it: the set is lost, said once. */
static void
member_lost(fence_lease *lease, void *arg)
{
	fence_leases *set = arg;

	if (__atomic_exchange_n(&set->lost_told, 1, __ATOMIC_ACQ_REL) == 0 && set->lost_cb != NULL)
		set->lost_cb(set, lease, set->lost_arg);
}

/*
 * Start the heartbeat of every member; "cb" (may be NULL) runs once, from
 * a heartbeat thread, when any member is lost, with that member.  On
 * failure none runs.
 */
int
fence_leases_heartbeat_start(fence_ctx *ctx, fence_leases *set, fence_leases_lost_fn cb,
							 void *arg)
{
	size_t		i;

	set->lost_cb = cb;
	set->lost_arg = arg;
	set->lost_told = 0;
	for (i = 0; i < set->n; i++)
		if (fence_heartbeat_start(ctx, set->members[i], member_lost, set) != FENCE_OK)
		{
			while (i-- > 0)
				fence_heartbeat_stop(set->members[i]);
			return FENCE_ERR;
		}
	return FENCE_OK;
}

void
fence_leases_heartbeat_stop(fence_leases *set)
{
	size_t		i;

	if (set == NULL)
		return;
	for (i = 0; i < set->n; i++)
		fence_heartbeat_stop(set->members[i]);
}

/*
 * Announce every member's token to PostgreSQL, in canonical order, each
 * with fence.advance in its own committed transaction (fence_announce):
 * what every version of the extension has, so a client of this release
 * works against an extension without fence.advance_many.  The first
 * failure stops it, with its error.
 */
int
fence_leases_announce(fence_ctx *ctx, fence_leases *set, PGconn *pg)
{
	size_t		i;

	for (i = 0; i < set->n; i++)
		if (fence_announce(ctx, set->members[i], pg) != FENCE_OK)
			return FENCE_ERR;
	return FENCE_OK;
}

/*
 * The fence.tokens value of "set": RESOURCE=TOKEN/OWNER for every member,
 * in canonical order (fence_format_tokens).  malloc'd; NULL when out of
 * memory.
 */
char *
fence_leases_tokens(const fence_leases *set)
{
	const char **resources = malloc((set->n + 1) * sizeof(char *));
	const char **owners = malloc((set->n + 1) * sizeof(char *));
	long long  *tokens = malloc((set->n + 1) * sizeof(long long));
	char	   *out = NULL;
	size_t		i;

	if (resources != NULL && owners != NULL && tokens != NULL)
	{
		for (i = 0; i < set->n; i++)
		{
			resources[i] = fence_lease_resource(set->members[i]);
			owners[i] = fence_lease_owner(set->members[i]);
			tokens[i] = fence_lease_token(set->members[i]);
		}
		out = fence_format_tokens(set->n, resources, tokens, owners);
	}
	free(resources);
	free(owners);
	free(tokens);
	return out;
}

/*
 * "{"a","b"}": the text[] literal of what "get" gives for each member, or
 * NULL (out of memory).
 */
static char *
array_literal(const fence_leases *set, const char *(*get) (const fence_lease *))
{
	size_t		cap = 3,
				i;
	char	   *out,
			   *p;

	for (i = 0; i < set->n; i++)
		cap += 2 * strlen(get(set->members[i])) + 3;
	if ((p = out = malloc(cap)) == NULL)
		return NULL;
	*p++ = '{';
	for (i = 0; i < set->n; i++)
	{
		const char *s = get(set->members[i]);

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
member_resource(const fence_lease *l)
{
	return l->resource;
}

static const char *
member_owner(const fence_lease *l)
{
	return l->owner;
}

/* "{1,2}": the bigint[] literal of the members' tokens, or NULL. */
static char *
token_literal(const fence_leases *set)
{
	char	   *out = malloc(set->n * 22 + 3);
	size_t		len = 1,
				i;

	if (out == NULL)
		return NULL;
	strcpy(out, "{");
	for (i = 0; i < set->n; i++)
		len += sprintf(out + len, "%s%lld", i ? "," : "", set->members[i]->token);
	strcpy(out + len, "}");
	return out;
}

/*
 * One attempt of fence_leases_exec, "own_tx" as fence_pg_own_tx said;
 * "*refused" tells whether fence.advance_many refused a token as stale.
 */
static PGresult *
leases_exec_once(fence_ctx *ctx, fence_leases *set, PGconn *pg, const char *sql,
				 int nparams, const char *const *params, int own_tx, int *refused)
{
	char	   *resources = NULL,
			   *owners = NULL,
			   *tokens = NULL,
			   *nums = NULL;
	const char *args[4];
	PGresult   *res = NULL,
			   *out = NULL;
	int			worst;

	*refused = 0;
	resources = array_literal(set, member_resource);
	owners = array_literal(set, member_owner);
	tokens = fence_leases_tokens(set);
	nums = token_literal(set);
	if (resources == NULL || owners == NULL || tokens == NULL || nums == NULL)
	{
		fence_set_error(ctx, FENCE_ERR_OOM, "out of memory");
		goto done;
	}
	args[0] = resources;
	args[1] = nums;
	args[2] = owners;
	args[3] = tokens;
	if (own_tx)
	{
		res = PQexec(pg, "BEGIN");
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
		{
			fence_pg_error(ctx, pg, res, "BEGIN", FENCE_SQL_THEIRS);
			res = NULL;
			goto done;
		}
		PQclear(res);
	}
	res = PQexecParams(pg, "SELECT fence.advance_many($1::text[], $2::bigint[], $3::text[]),"
					   " set_config('fence.tokens', $4, true)",
					   4, NULL, args, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
		int			no_function = state != NULL && strcmp(state, FENCE_SQLSTATE_NO_FUNCTION) == 0;

		fence_pg_error(ctx, pg, res, "fence.advance_many", FENCE_SQL_OURS);
		*refused = ctx->err == FENCE_ERR_STALE;
		res = NULL;
		/* the schema is there: an extension older than fence.advance_many */
		if (no_function)
			snprintf(ctx->conn->pg_hint, sizeof(ctx->conn->pg_hint),
					 "the fence extension is older than this client (no fence.advance_many):"
					 " ALTER EXTENSION fence UPDATE");
		goto rollback;
	}
	PQclear(res);
	res = fence_pg_statement(ctx, pg, sql, nparams, params, "fence_leases_exec");
	if (res == NULL)
		goto rollback;
	/* the statement may have outlived a lease: then it must not commit */
	if ((worst = fence_leases_state(set)) != FENCE_LEASE_HELD)
	{
		fence_set_error(ctx, worst == FENCE_LEASE_LOST ? FENCE_ERR_LOST : FENCE_ERR_SUSPECT,
						"a lease of the set was lost (or Redis is unreachable) while the statement ran%s",
						own_tx ? "; rolled back" : "");
		goto rollback;
	}
	out = res;
	res = NULL;
	if (own_tx)
	{
		res = PQexec(pg, "COMMIT");
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
		{
			fence_pg_error(ctx, pg, res, "COMMIT", FENCE_SQL_THEIRS);
			res = NULL;
			PQclear(out);
			out = NULL;
			goto rollback;
		}
	}
	goto done;

rollback:
	if (own_tx)
		fence_pg_rollback(ctx, pg);
done:
	PQclear(res);
	free(resources);
	free(owners);
	free(tokens);
	free(nums);
	return out;
}

/*
 * The set's fenced statement (fence.h): run "sql" with "params" under
 * every member's token, in one transaction.  fence.advance_many(resources,
 * tokens, owners) accepts every token or refuses them all (LF001, in the
 * order of the names, so two sets in opposite orders cannot deadlock in
 * PostgreSQL either), with fence.tokens set for the transaction, so that
 * the guards of the tables it writes find each row's token; then the
 * statement.  On an idle connection the transaction commits before this
 * returns, once every member is checked again (ROLLBACK and FENCE_ERR_LOST
 * or _SUSPECT when one is not held by then); inside the caller's
 * transaction the COMMIT is the caller's, and a member lost meanwhile is
 * reported.  It needs the extension of 0.3.0 (fence.advance_many); against
 * an older one the hint says so.  A set of one is fence_exec on its lease.
 */
PGresult *
fence_leases_exec(fence_ctx *ctx, fence_leases *set, PGconn *pg, const char *sql,
				  int nparams, const char *const *params)
{
	PGresult   *out;
	int			own_tx,
				refused,
				accepted = 1;
	size_t		i;

	fence_clear_error(ctx);
	if (pg == NULL || set == NULL || set->n == 0 || sql == NULL || nparams < 0 ||
		(nparams > 0 && params == NULL))
	{
		fence_set_error(ctx, FENCE_ERR_ARG,
						"fence_leases_exec needs a connection, a set and a statement");
		return NULL;
	}
	if (set->n == 1)
		return fence_exec(ctx, set->members[0], pg, sql, nparams, params);
	if (fence_pq_load(ctx) != FENCE_OK)
		return NULL;
	for (i = 0; i < set->n; i++)
		if (fence_lease_usable(ctx, set->members[i]) != FENCE_OK)
			return NULL;
	if ((own_tx = fence_pg_own_tx(ctx, pg)) < 0)
		return NULL;
	for (i = 0; i < set->n; i++)
		accepted &= set->members[i]->pg_accepted;
	/* the first statement under fresh leases is their announce (pg.c) */
	out = leases_exec_once(ctx, set, pg, sql, nparams, params, own_tx, &refused);
	if (out == NULL && fence_exec_heal(refused, accepted, own_tx) &&
		fence_leases_announce(ctx, set, pg) == FENCE_OK)
		out = leases_exec_once(ctx, set, pg, sql, nparams, params, own_tx, &refused);
	if (out != NULL)
		for (i = 0; i < set->n; i++)
			set->members[i]->pg_accepted = 1;
	return out;
}
