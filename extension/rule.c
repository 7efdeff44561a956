/*
 * extension/rule.c
 *	  The fencing rule: check a token against a resource's high-water mark
 *	  and advance the mark, as one step of the caller's transaction.
 *
 *	  Invariant: for each resource R, the tokens under which transactions
 *	  commit writes never go down in commit order, and one token is never
 *	  accepted for two different owners.
 *
 *	  Why it holds.  Every check reads R's row of fence.fences under a row
 *	  lock (what SELECT ... FOR UPDATE, or FOR SHARE for a token that does
 *	  not move the mark, would take) and holds it from the check until its
 *	  transaction ends; the data write that the check guards happens inside
 *	  that window.  A transaction that moves the mark waits for every other
 *	  holder of the lock.  In READ COMMITTED the wait ends with a re-read of
 *	  the newest committed version of the row, so the second check is made against
 *	  what the first transaction committed, or against the old mark if it
 *	  rolled back.  In REPEATABLE READ and SERIALIZABLE that re-read is not
 *	  allowed and the wait ends in a serialization failure (40001) instead,
 *	  which callers retry; a stale token is never accepted.  A resource
 *	  without a row gets one from INSERT ... ON CONFLICT DO NOTHING; losing
 *	  that race means another transaction created the row, and the loop
 *	  goes back to locking it.  Because the advance is an ordinary row
 *	  update of the caller's transaction, a rollback undoes it together with
 *	  the data write.  No decision is ever taken from a plain snapshot read.
 *
 *	  Which lock.  Writers that present the current token need not queue
 *	  behind each other, so they take the shared lock; a token that moves
 *	  the mark takes the exclusive one.  The shared lock is, where it can
 *	  be, a lock in the lock manager keyed by the resource instead of a row
 *	  lock written into the mark's tuple (marks.c, "Unchanged marks", says
 *	  why and why it is equivalent); what follows holds for both.  The mode is chosen from the version
 *	  of the row that the index probe returns (in READ COMMITTED the newest
 *	  committed one) before it is locked, and the decision is then taken
 *	  again on the locked version.  Two rules keep this free of starvation
 *	  and of deadlocks between checks of one resource:
 *
 *	  - Fairness.  A shared lock does not conflict with the shared locks of
 *		the writers already there, so heap_lock_tuple() would grant it at
 *		once even while a new holder waits for the exclusive lock, and a
 *		steady stream of writers with the old token could keep the new
 *		holder waiting for ever.  PostgreSQL orders the waiters of a row by
 *		the heavyweight tuple lock, which the waiting exclusive locker
 *		holds; so before taking the shared row lock a check takes and
 *		releases that tuple lock in the mode heapam uses for FOR SHARE
 *		(RowShareLock), and queues behind the new holder.  The new holder
 *		gets the row once the transactions that held it when it began to
 *		wait are done; a later writer with the old token then finds the new
 *		mark and is refused (LF001, or 40001 under REPEATABLE READ).
 *	  - No upgrades.  A transaction never waits for the exclusive lock while
 *		it holds the shared one: two such transactions would wait for each
 *		other.  Under the shared lock the mark can only have moved in a way
 *		that needs a write if fence.reset() lowered or changed it meanwhile;
 *		the check then fails with 40001.  A transaction that already holds
 *		the row (it checked the resource earlier) and now has to move the
 *		mark asks for the exclusive lock without waiting, and fails with
 *		40001 if another transaction holds the row too.  Both are safe to
 *		retry, and rare: a worker announces its token in a transaction of
 *		its own before it writes with it.
 *
 *	  Forgotten marks.  fence.forget() deletes marks that have not moved for
 *	  a while, and raises the floor of each one's prefix to it (floors.c).
 *	  A resource without a mark accepts only a token above its prefix's
 *	  floor, which is read once the check has inserted the mark, and is
 *	  then known to be at least every mark of the resource ever forgotten
 *	  (floors.c says why); a refusal takes the insertion back.  A resource
 *	  with a mark never reads its floor, so only a first write pays for it.
 *
 *	  Every check locks the fence row and may write it, so none is made in
 *	  a read-only transaction or on a standby: the SQL functions and the
 *	  guard refuse those with 25006 before they look at anything, as
 *	  PostgreSQL refuses a write (a plain write never reaches the guard
 *	  there, but one to a temporary table does).
 *
 *	  Applications have no privileges on fence.fences: the rows are read
 *	  and written directly (index probe, tuple lock, insert, update,
 *	  delete: marks.c), below the level where privileges are checked.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "errcodes.h"
#include "fence_ext.h"
#include "marks.h"

/*
 * The memory of one check: the scan, slots and copies it makes are freed
 * when the next check begins, whatever context the caller runs in (a
 * guarded bulk statement, a loop of fence.advance calls).
 */
static MemoryContext
check_context(void)
{
	static MemoryContext cxt = NULL;

	if (cxt == NULL)
		cxt = AllocSetContextCreate(TopMemoryContext, "fence check",
									ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(cxt);
	return cxt;
}

void
fence_check_resource_name(const char *resource)
{
	size_t		len = strlen(resource);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("resource name must not be empty")));
	if (len > FENCE_MAX_RESOURCE_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("resource name is too long"),
				 errdetail("The name has %zu bytes; the limit is %d.",
						   len, FENCE_MAX_RESOURCE_LEN)));
	fence_check_text(resource, "resource name");
}

/*
 * fence.reset()'s negative token: an argument error of an administrator's
 * call, not a token presented for a write, so it is not counted.
 */
static void
report_invalid_token(const char *resource, int64 token)
{
	ereport(ERROR,
			(errcode(ERRCODE_FENCE_INVALID_TOKEN),
			 errmsg("invalid fencing token for resource \"%s\"", resource),
			 errdetail("Token %lld is not a positive number.", (long long) token)));
}

/* Two owners contradict each other only when both are known and differ. */
static bool
owners_conflict(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) != 0;
}

/*
 * fence_check_and_advance
 *	  Accept "token" (presented by "owner", which may be NULL) for
 *	  "resource", or raise LF001/LF003.  Returns the previous high-water
 *	  mark, 0 if the resource had none.  On return the caller's transaction
 *	  holds the resource's row lock and the token is in the registry.
 */
int64
fence_check_and_advance(const char *resource, int64 token, const char *owner)
{
	FenceHash128 name;
	bool		held;
	int64		held_token;
	const FenceHash128 *held_owner;
	FenceTable	ftd;
	FenceTable *ft = &ftd;
	FenceMark		mark;
	int64		hw;
	MemoryContext oldcxt;

	fence_check_resource_name(resource);
	if (owner != NULL)
		fence_check_text(owner, "owner");
	if (token <= 0)
		fence_refuse(resource, FENCE_REFUSED_INVALID, token, true,
					 psprintf("invalid fencing token for resource \"%s\"", resource),
					 psprintf("Token %lld is not a positive number.", (long long) token),
					 NULL);

	/* Accepted earlier in this transaction, and its row lock is still ours. */
	name = fence_registry_hash(resource);
	held = fence_registry_find(&name, &held_token, &held_owner);
	if (held && held_token == token)
	{
		FenceHash128 owner_name;

		if (owner == NULL)
			return token;
		owner_name = fence_registry_hash(owner);
		if (held_owner != NULL && held_owner->lo == owner_name.lo &&
			held_owner->hi == owner_name.hi)
			return token;
	}

	oldcxt = MemoryContextSwitchTo(check_context());
	fence_table_open(ft);

	/*
	 * A transaction that has just made a mark is likely making one for each
	 * of many new resources (a batch, a key-mode table being filled): try
	 * the insertion first, which finds an existing row as a conflict and
	 * saves the index probe when there is none.  A wrong guess costs a row
	 * inserted and killed, and the next check looks first again.
	 */
	if (fence_mark_made_last() && !held &&
		fence_mark_insert(ft, resource, token, owner, true))
		mark = (FenceMark) {false, 0, NULL};
	else
	{
		for (;;)
		{
			mark = fence_mark_lock(ft, resource, token, owner, held);
			if (mark.exists)
				break;
			if (fence_mark_insert(ft, resource, token, owner, false))
				break;
			/* lost the race to create the row: lock the winner's version */
		}
	}

	/*
	 * A first mark, now inserted: the resource may have had one that
	 * fence.forget() deleted, whose floor the token must be above.  Only
	 * now is the floor known to hold it (floors.c); a refusal below takes
	 * the insertion back with the statement.
	 */
	if (mark.exists)
		hw = mark.token;
	else
		hw = fence_floor_of(resource);

	if (mark.exists ? (token < hw ||
					   (token == hw && owners_conflict(owner, mark.owner))) :
		token <= hw)
	{
		char	   *message = psprintf("stale fencing token for resource \"%s\"",
										   resource);

		if (!mark.exists)
			fence_refuse(resource, FENCE_REFUSED_STALE, token, true, message,
						 psprintf("Token %lld is not above %lld, the floor of the marks forgotten under the resource's prefix.",
								  (long long) token, (long long) hw),
						 psprintf("Acquire a new lease with a token above %lld (fence.mark() reports it).",
								  (long long) hw));
		if (token < hw)
			fence_refuse(resource, FENCE_REFUSED_STALE, token, true, message,
						 psprintf("Token %lld is lower than the highest accepted token %lld.",
								  (long long) token, (long long) hw),
						 "Acquire a new lease and retry with its token.");
		fence_refuse(resource, FENCE_REFUSED_STALE, token, true, message,
					 psprintf("Token %lld was already accepted for another owner.",
							  (long long) token),
					 "The lock service issued this token twice; acquire a new lease.");
	}

	if (fence_max_step > 0 && token > hw &&
		(uint64) token - (uint64) hw > (uint64) fence_max_step)
		fence_refuse(resource, FENCE_REFUSED_INVALID, token, true,
					 psprintf("invalid fencing token for resource \"%s\"", resource),
					 psprintf("Token %lld is more than fence.max_step (%d) above the highest accepted token %lld.",
							  (long long) token, fence_max_step, (long long) hw),
					 NULL);

	/*
	 * Accepted.  A higher token moves the mark; an equal one moves nothing,
	 * except that an owner seen for the first time is recorded so that the
	 * same token cannot later be accepted for somebody else.
	 */
	if (mark.exists &&
		(token > mark.token || (mark.owner == NULL && owner != NULL)))
		fence_mark_update(ft, &mark.tid, resource, token, owner);

	fence_table_close(ft);

	owner = owner || token > mark.token ? owner : mark.owner;
	fence_registry_remember(&name, token, owner);
	MemoryContextSwitchTo(oldcxt);
	fence_stats_accepted(resource);
	return mark.exists ? mark.token : 0;
}

/*
 * fence_refuse_missing: refuse a call that names "resource" but passes no
 * token (LF002), counting the refusal.  fence.advance and fenced_update
 * share it; the guard, which reads its token from settings, says more.
 */
void
fence_refuse_missing(const char *resource)
{
	fence_refuse(resource, FENCE_REFUSED_MISSING, 0, false,
				 psprintf("missing fencing token for resource \"%s\"", resource),
				 NULL, "Pass the token that came with the lease.");
}

/*
 * fence_resource_token_args: the resource and the token, the first two
 * arguments of fence.advance and fence.fenced_update ("what"), which both
 * check the same way: a null resource is an error, a read-only server is
 * refused (the check locks and may write fence.fences), and a null token
 * is refused as missing (counted, with its resource named).
 */
char *
fence_resource_token_args(FunctionCallInfo fcinfo, const char *what, int64 *token)
{
	char	   *resource;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("resource name must not be null")));
	resource = text_to_cstring(PG_GETARG_TEXT_PP(0));
	fence_prevent_read_only(what);
	if (PG_ARGISNULL(1))
		fence_refuse_missing(resource);
	*token = PG_GETARG_INT64(1);
	return resource;
}

/* fence.advance(resource text, token bigint, owner text DEFAULT NULL) */
PG_FUNCTION_INFO_V1(fence_advance);

Datum
fence_advance(PG_FUNCTION_ARGS)
{
	int64		token;
	char	   *resource = fence_resource_token_args(fcinfo, "fence.advance()", &token);
	char	   *owner = PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2));

	PG_RETURN_INT64(fence_check_and_advance(resource, token, owner));
}

/*
 * fence.reset(resource text, token bigint DEFAULT 0)
 *	  Set a resource's mark to "token", or remove it when "token" is 0.
 *	  For administrators repairing a mark (say, after the token counter was
 *	  lost for good); it may lower the mark, which is why it is not granted
 *	  to anybody by default, and why it always leaves a line in the log.
 *	  It leaves fence.floors alone: a mark it sets counts even below its
 *	  prefix's floor, and a resource whose mark it removes starts above the
 *	  floor again, as one whose mark fence.forget() deleted.
 */
PG_FUNCTION_INFO_V1(fence_reset);

Datum
fence_reset(PG_FUNCTION_ARGS)
{
	char	   *resource;
	int64		token;
	FenceHash128 name;
	bool		held;
	int64		held_token;
	const FenceHash128 *held_owner;
	FenceTable	ftd;
	FenceTable *ft = &ftd;
	FenceMark		mark;
	MemoryContext oldcxt;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("resource name and token must not be null")));
	fence_prevent_read_only("fence.reset()");
	resource = text_to_cstring(PG_GETARG_TEXT_PP(0));
	token = PG_GETARG_INT64(1);
	fence_check_resource_name(resource);
	if (token < 0)
		report_invalid_token(resource, token);

	name = fence_registry_hash(resource);
	held = fence_registry_find(&name, &held_token, &held_owner);
	oldcxt = MemoryContextSwitchTo(check_context());
	fence_table_open(ft);
	for (;;)
	{
		mark = fence_mark_lock(ft, resource, 0, NULL, held);
		if (mark.exists || token == 0 || fence_mark_insert(ft, resource, token, NULL, false))
			break;
	}
	if (mark.exists && token == 0)
		fence_mark_delete(ft, &mark.tid);
	else if (mark.exists)
		fence_mark_update(ft, &mark.tid, resource, token, NULL);
	fence_table_close(ft);
	MemoryContextSwitchTo(oldcxt);

	fence_registry_forget(&name);
	ereport(LOG,
			(errmsg("fence for resource \"%s\" reset from %lld to %lld by role \"%s\"",
					resource, (long long) mark.token, (long long) token,
					GetUserNameFromId(GetUserId(), false))));
	PG_RETURN_INT64(mark.token);
}

/* A resource and its counter, for fence.resync(). */
typedef struct ResyncItem
{
	const char *resource;
	int64		counter;
} ResyncItem;

/* qsort comparator: resource names in bytewise order */
static int
resync_order(const void *a, const void *b)
{
	return strcmp(((const ResyncItem *) a)->resource,
				  ((const ResyncItem *) b)->resource);
}

/*
 * fence.resync(resources text[], counters bigint[])
 *	  Raise the mark of each resource to its lease's token counter in
 *	  Redis, creating the mark where there is none; a mark at or above its
 *	  counter is left alone, so a mark is never lowered.  Returns how many
 *	  marks it raised or made.
 *
 *	  The repair after a failover to a standby that missed acknowledged
 *	  announces (README: What it promises): such a standby brings back
 *	  older marks, under which the tokens of earlier holders pass again.
 *	  Redis's counter only grows and is at least every token it handed
 *	  out, so a mark raised to it refuses every token below the newest one,
 *	  and the newest holder's token still passes: a raised mark has no
 *	  owner, and the first token equal to it records its owner, as after
 *	  fence.reset().  "fence resync" reads the counters and calls this.
 *
 *	  The rows are locked exclusively in bytewise order of the names, as
 *	  fence.advance_many() takes them, so a repair and a transfer cannot
 *	  deadlock; a resource named twice is raised to the larger counter.
 *	  Administrators only (it writes marks no lease asked for), like
 *	  fence.reset(), and logged.
 */
PG_FUNCTION_INFO_V1(fence_resync);

Datum
fence_resync(PG_FUNCTION_ARGS)
{
	FenceResourceList list;
	ResyncItem *items;
	int64		changed = 0;
	int64		made = 0;
	FenceTable	ftd;
	FenceTable *ft = &ftd;
	MemoryContext oldcxt;
	int			i;
	int			n = 0;

	fence_prevent_read_only("fence.resync()");
	list = fence_resource_list(fcinfo, 0, 1, -1);

	items = palloc(sizeof(ResyncItem) * Max(list.n, 1));
	for (i = 0; i < list.n; i++)
	{
		if (list.tokens[i] <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("token counter of resource \"%s\" must be positive",
							list.resources[i]),
					 errdetail("Counter %lld was given.", (long long) list.tokens[i])));
		items[i].resource = list.resources[i];
		items[i].counter = list.tokens[i];
	}
	qsort(items, list.n, sizeof(ResyncItem), resync_order);
	/* a name given twice: the larger counter */
	for (i = 0; i < list.n; i++)
	{
		if (n > 0 && strcmp(items[i].resource, items[n - 1].resource) == 0)
		{
			items[n - 1].counter = Max(items[n - 1].counter, items[i].counter);
			continue;
		}
		items[n++] = items[i];
	}

	oldcxt = MemoryContextSwitchTo(check_context());
	fence_table_open(ft);
	for (i = 0; i < n; i++)
	{
		const char *resource = items[i].resource;
		int64		counter = items[i].counter;
		FenceHash128 name = fence_registry_hash(resource);
		bool		held;
		int64		held_token;
		const FenceHash128 *held_owner;
		FenceMark	mark;
		bool		inserted = false;

		CHECK_FOR_INTERRUPTS();
		held = fence_registry_find(&name, &held_token, &held_owner);
		for (;;)
		{
			mark = fence_mark_lock(ft, resource, 0, NULL, held);
			if (mark.exists)
				break;
			if (fence_mark_insert(ft, resource, counter, NULL, false))
			{
				inserted = true;
				break;
			}
		}
		if (inserted)
			made++;
		else if (mark.token < counter)
			fence_mark_update(ft, &mark.tid, resource, counter, NULL);
		else
			continue;
		changed++;
		/* a token this transaction accepted below the new mark must not pass */
		fence_registry_forget(&name);
	}
	fence_table_close(ft);
	MemoryContextSwitchTo(oldcxt);

	ereport(LOG,
			(errmsg("fence.resync raised %lld marks and made %lld of %d resources, by role \"%s\"",
					(long long) (changed - made), (long long) made, n,
					GetUserNameFromId(GetUserId(), false))));
	PG_RETURN_INT64(changed);
}
