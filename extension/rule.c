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
 *	  the mark takes the exclusive one.  The mode is chosen from the version
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
 *	  Every check locks the fence row and may write it, so none is made in
 *	  a read-only transaction or on a standby: the SQL functions and the
 *	  guard refuse those with 25006 before they look at anything, as
 *	  PostgreSQL refuses a write (a plain write never reaches the guard
 *	  there, but one to a temporary table does).
 *
 *	  Applications have no privileges on fence.fences: the work here reads
 *	  and writes the table directly (index probe, tuple lock, insert,
 *	  update, delete), below the level where privileges are checked and
 *	  where the caller's search_path could redirect an operator, as the
 *	  executor itself does once it has checked a statement.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "compat.h"
#include "errcodes.h"
#include "fence_ext.h"

/* The high-water mark of one resource as read under its row lock. */
typedef struct Mark
{
	bool		exists;
	int64		token;
	char	   *owner;			/* NULL if the mark has no owner */
	ItemPointerData tid;		/* the locked version, if it exists */
} Mark;

/*
 * fence.fences during one check (open_fences() to close_fences()): the
 * table and its primary key, and, once the check writes, what the executor
 * needs to make index entries.  Setting that up (the indexes' IndexInfo,
 * an EState) costs more than an index probe, and a transaction may fence a
 * million resources: it is made once per transaction and kept (it holds no
 * reference to a relation, so DROP EXTENSION or TRUNCATE later in the
 * transaction still work).
 */
typedef struct FenceTable
{
	Relation	rel;			/* RowShareLock; RowExclusiveLock once writable */
	Relation	pkey;			/* its primary key */
	ResultRelInfo *rri;			/* once writable: its indexes, open */
	bool		own_indexes;	/* rri's indexes opened by ExecOpenIndices() */
	EState	   *estate;
	List	   *arbiters;		/* the primary key */
} FenceTable;

static void open_fences(FenceTable *ft);
static void writable_fences(FenceTable *ft);
static void close_fences(FenceTable *ft);

/* Columns of fence.fences, as sql/fence.sql creates it. */
#define Anum_fences_resource 1
#define Anum_fences_token 2
#define Anum_fences_owner 3
#define Anum_fences_updated_at 4

/*
 * Would accepting "token" (from "owner") over the mark "hw" (whose owner is
 * null when "hw_unowned") write the fence row?  A higher token moves the
 * mark; an equal one records an owner that the mark does not have yet.
 */
static bool
moves_mark(int64 hw, bool hw_unowned, int64 token, const char *owner)
{
	return token > hw || (token == hw && hw_unowned && owner != NULL);
}

static void
report_must_retry(const char *resource, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not serialize access to the fence of resource \"%s\"",
					resource),
			 errdetail_internal("%s", detail),
			 errhint("Retry the transaction.")));
}

/*
 * Read and row-lock the mark of "resource" for a check of "token" from
 * "owner", or for fence.reset() when "token" is 0 (always exclusive).
 * "held" says that this transaction holds the row's lock already.  The
 * lock mode and the waiting rules are those of the banner.
 *
 * This is SELECT ... WHERE resource = $1 FOR SHARE / FOR UPDATE done by
 * hand: an index probe and table_tuple_lock(), without the executor, which
 * costs more than the probe on every write.  The semantics are those of
 * ExecLockRows: under READ COMMITTED, a row updated by a transaction that
 * committed while we waited is followed to its newest version, which is the
 * one checked; under REPEATABLE READ and SERIALIZABLE such a row is a
 * serialization failure.  A row deleted meanwhile (fence.reset) reads as
 * no mark.  The relation locks are those of SELECT FOR UPDATE (taken by
 * open_fences()), kept until the transaction ends.
 */
static Mark
lock_mark(FenceTable *ft, const char *resource, int64 token, const char *owner,
		  bool held)
{
	Mark		mark = {false, 0, NULL};
	Relation	rel = ft->rel;
	Relation	idx = ft->pkey;
	ScanKeyData key;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	Snapshot	snapshot;
	TM_FailureData tmfd;
	TM_Result	result = TM_Invisible;
	bool		xact_snapshot = IsolationUsesXactSnapshot();
	bool		shared = false;

	/* see what this transaction did so far, as a new statement would */
	CommandCounterIncrement();
	PushCopiedSnapshot(GetTransactionSnapshot());
	UpdateActiveSnapshotCommandId();
	snapshot = GetActiveSnapshot();

	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_TEXTEQ,
				CStringGetTextDatum(resource));
	key.sk_collation = idx->rd_indcollation[0];

	slot = table_slot_create(rel, NULL);
	scan = index_beginscan(rel, idx, snapshot, 1, 0);
	index_rescan(scan, &key, 1, NULL, 0);
	if (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		ItemPointerData tid = slot->tts_tid;
		bool		isnull;
		bool		unowned;
		int64		probed;

		probed = DatumGetInt64(slot_getattr(slot, Anum_fences_token, &isnull));
		(void) slot_getattr(slot, Anum_fences_owner, &unowned);
		shared = token != 0 && !moves_mark(probed, unowned, token, owner);

		/* queue behind a waiting exclusive locker: see "Fairness" above */
		if (shared && !held)
		{
			LockTuple(rel, &tid, RowShareLock);
			UnlockTuple(rel, &tid, RowShareLock);
		}

		result = table_tuple_lock(rel, &tid, snapshot, slot,
								  GetCurrentCommandId(false),
								  shared ? LockTupleShare : LockTupleExclusive,
								  held ? LockWaitSkip : LockWaitBlock,
								  xact_snapshot ? 0 : TUPLE_LOCK_FLAG_FIND_LAST_VERSION,
								  &tmfd);
	}
	index_endscan(scan);

	switch (result)
	{
		case TM_Ok:
			{
				bool		isnull;
				Datum		owner_datum;

				mark.exists = true;
				mark.token = DatumGetInt64(slot_getattr(slot, Anum_fences_token, &isnull));
				owner_datum = slot_getattr(slot, Anum_fences_owner, &isnull);
				if (shared && moves_mark(mark.token, isnull, token, owner))
					report_must_retry(resource,
									  "The mark was lowered or changed by fence.reset() while this transaction waited for it.");
				if (!isnull)
					mark.owner = TextDatumGetCString(owner_datum);
				mark.tid = slot->tts_tid;
				break;
			}
		case TM_Invisible:
			break;				/* no row: no mark yet */
		case TM_WouldBlock:
			report_must_retry(resource,
							  "This transaction already holds the fence and has to move its mark, but another transaction holds the fence too.");
			break;
		case TM_Updated:
		case TM_Deleted:
			if (xact_snapshot)
				ereport(ERROR,
						(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
						 errmsg("could not serialize access due to concurrent update")));
			if (result == TM_Updated)
				elog(ERROR, "fence row was updated although its newest version was locked");	/* internal error */
			break;				/* deleted meanwhile: no mark */
		default:
			elog(ERROR, "unexpected result %d locking the fence row of \"%s\"",	/* internal error */
				 (int) result, resource);
	}

	ExecDropSingleTupleTableSlot(slot);
	PopActiveSnapshot();
	return mark;
}

/*
 * Create the mark; false if a concurrent transaction created it first, or,
 * with "blind", if any transaction did.
 *
 * This is INSERT ... ON CONFLICT (resource) DO NOTHING done by hand, as
 * lock_mark() does SELECT ... FOR UPDATE: the executor's start-up for a
 * one-row INSERT costs more than the insertion, and a worker that fences
 * one resource per item (a new mark each) pays it for every item.  The
 * protocol is the executor's speculative insertion: insert the row
 * speculatively, insert its index entry (waiting for the inserter of a
 * conflicting one), and confirm the insertion, or kill the row if another
 * transaction's entry came first.  The executor first looks for a
 * conflicting row with a dirty snapshot, which waits for its inserter;
 * here lock_mark() has just found none, a conflict is the rare race, and
 * that look is made only after one, before trying again (without it, a
 * conflict with an insertion still in progress would be retried at once,
 * and again, until the other transaction ends).  A conflict under
 * REPEATABLE READ or SERIALIZABLE is a row this transaction's snapshot does
 * not show (lock_mark() found none): a serialization failure, as ON
 * CONFLICT DO NOTHING raises it.
 *
 * "blind": lock_mark() has not looked (see fence_check_and_advance()), so
 * a conflict may be with any row, committed long ago or visible to this
 * transaction's snapshot: one attempt, and false on a conflict, after
 * which the caller looks with lock_mark() as usual.
 *
 * fence.fences has no triggers, rules or constraints beyond its key and
 * CHECK (token > 0), which the callers have made sure of.
 */
static bool
insert_mark(FenceTable *ft, const char *resource, int64 token,
			const char *owner, bool blind)
{
	Relation	rel = ft->rel;
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	bool		conflict = false;
	bool		checked;

	Assert(token > 0);
	writable_fences(ft);

	ExecClearTuple(slot);
	memset(slot->tts_isnull, 0, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	slot->tts_values[Anum_fences_resource - 1] = CStringGetTextDatum(resource);
	slot->tts_values[Anum_fences_token - 1] = Int64GetDatum(token);
	if (owner != NULL)
		slot->tts_values[Anum_fences_owner - 1] = CStringGetTextDatum(owner);
	else
		slot->tts_isnull[Anum_fences_owner - 1] = true;
	/* pg_catalog.now() */
	slot->tts_values[Anum_fences_updated_at - 1] =
		TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());
	ExecStoreVirtualTuple(slot);

	for (checked = false;; checked = true)
	{
		TransactionId xid = GetCurrentTransactionId();
		uint32		spec_token;
		ItemPointerData conflict_tid;

		/* after a conflict: wait for the other inserter, see who won */
		if (checked &&
			!FenceExecCheckIndexConstraints(ft->rri, slot, ft->estate,
											&conflict_tid, ft->arbiters))
			break;
		conflict = false;
		spec_token = SpeculativeInsertionLockAcquire(xid);
		table_tuple_insert_speculative(rel, slot, GetCurrentCommandId(true), 0,
									   NULL, spec_token);
		(void) FenceExecInsertIndexTuples(ft->rri, slot, ft->estate, true,
										  &conflict, ft->arbiters);
		table_tuple_complete_speculative(rel, slot, spec_token, !conflict);
		SpeculativeInsertionLockRelease(xid);
		ResetPerTupleExprContext(ft->estate);
		if (!conflict || checked || blind)
			break;
		conflict = true;
	}
	ExecDropSingleTupleTableSlot(slot);

	if (conflict && !blind && IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to concurrent update")));
	/* let the rest of the transaction see it, as a statement would */
	if (!conflict)
		CommandCounterIncrement();
	return !conflict;
}

/*
 * Move the mark whose newest version this transaction has locked
 * exclusively at "tid" to "token" and "owner".
 *
 * This is UPDATE fence.fences SET token = $2, owner = $3, updated_at =
 * now() WHERE resource = $1, done by hand for the reason lock_mark() gives.
 * The row is ours (FOR UPDATE), so the update cannot meet a concurrent
 * one.  When the new version fits on the row's page (fence.fences leaves
 * room for it: sql/fence.sql) and no indexed column changes, which is
 * always, it is a HOT update and adds no index entry; otherwise every
 * index of the table gets one, as the executor would make it.
 */
static void
update_mark(FenceTable *ft, ItemPointer tid, const char *resource,
			int64 token, const char *owner)
{
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	HeapTuple	tuple;
	bool		summarizing_only;

	Assert(token > 0);
	writable_fences(ft);
	values[Anum_fences_resource - 1] = CStringGetTextDatum(resource);
	values[Anum_fences_token - 1] = Int64GetDatum(token);
	values[Anum_fences_owner - 1] = owner != NULL ? CStringGetTextDatum(owner) : (Datum) 0;
	nulls[Anum_fences_owner - 1] = owner == NULL;
	/* pg_catalog.now() */
	values[Anum_fences_updated_at - 1] =
		TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());
	tuple = heap_form_tuple(RelationGetDescr(ft->rel), values, nulls);

	if (fence_simple_heap_update_ext(ft->rel, tid, tuple, &summarizing_only))
	{
		TupleTableSlot *slot = MakeSingleTupleTableSlot(RelationGetDescr(ft->rel),
														&TTSOpsHeapTuple);

		ExecStoreHeapTuple(tuple, slot, false);
		(void) FenceExecInsertIndexTuplesOf(ft->rri, slot, ft->estate, summarizing_only);
		ResetPerTupleExprContext(ft->estate);
		ExecDropSingleTupleTableSlot(slot);
	}
	/* let the rest of the transaction see it, as a statement would */
	CommandCounterIncrement();
}

/*
 * Remove the mark whose newest version this transaction has locked
 * exclusively at "tid" (DELETE, by hand, as update_mark()).
 */
static void
delete_mark(FenceTable *ft, ItemPointer tid)
{
	writable_fences(ft);
	simple_heap_delete(ft->rel, tid);
	CommandCounterIncrement();
}

/* fence.fences, whose rows this file reads and writes. */
static Oid
fences_relation(void)
{
	static Oid	known_relid = InvalidOid;
	static Oid	known_nsp = InvalidOid;
	Oid			nsp;
	Oid			relid;
	HeapTuple	tup;

	/*
	 * Every check comes here: look the table up by name only when the one
	 * found last is gone or is not fence.fences any more (the extension was
	 * dropped and made again).
	 */
	if (OidIsValid(known_relid))
	{
		tup = SearchSysCache1(RELOID, ObjectIdGetDatum(known_relid));
		if (HeapTupleIsValid(tup))
		{
			Form_pg_class form = (Form_pg_class) GETSTRUCT(tup);
			bool		same = form->relnamespace == known_nsp &&
				strcmp(NameStr(form->relname), "fences") == 0;

			ReleaseSysCache(tup);
			if (same)
				return known_relid;
		}
		known_relid = InvalidOid;
	}

	nsp = get_namespace_oid("fence", false);
	relid = get_relname_relid("fences", nsp);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table \"fence.fences\" does not exist"),
				 errhint("Reinstall the extension with DROP EXTENSION fence and CREATE EXTENSION fence.")));
	known_relid = relid;
	known_nsp = nsp;
	return relid;
}

/*
 * What a transaction keeps of fence.fences between checks, in
 * TopTransactionContext: the primary key's IndexInfo (when it is the
 * table's only index, as sql/fence.sql makes it) and an EState.
 */
static Oid	kept_relid = InvalidOid;
static IndexInfo *kept_pkey_info = NULL;
static EState *kept_estate = NULL;

/*
 * The table and primary key that this transaction has locked, for good:
 * their locks belong to the top-level transaction's resource owner, so
 * that a subtransaction's rollback does not release them, and later checks
 * open the relations without asking the lock manager again.
 */
static Oid	locked_relid = InvalidOid;
static Oid	locked_pkey = InvalidOid;
static bool locked_for_writes = false;

/* Run "code" as the top-level transaction's resource owner. */
#define AS_TOP_TRANSACTION(code) \
	do { \
		ResourceOwner saved_owner_ = CurrentResourceOwner; \
		CurrentResourceOwner = TopTransactionResourceOwner; \
		code; \
		CurrentResourceOwner = saved_owner_; \
	} while (0)

/*
 * Whether the last check of this transaction made a new mark: its next
 * check then inserts first and looks only if the row exists (see
 * fence_check_and_advance()).
 */
static bool made_mark_last = false;

/* A change of fence.fences (an index added or dropped): set up anew. */
static void
fences_invalidated(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == kept_relid)
		kept_relid = InvalidOid;
}

static void
fences_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			/* the memory goes with TopTransactionContext */
			kept_relid = InvalidOid;
			kept_pkey_info = NULL;
			kept_estate = NULL;
			locked_relid = locked_pkey = InvalidOid;
			locked_for_writes = false;
			made_mark_last = false;
			break;
		default:
			break;
	}
}

/*
 * open_fences: fence.fences and its primary key, locked as SELECT FOR
 * UPDATE locks them, until the transaction ends (see locked_relid).
 */
static void
open_fences(FenceTable *ft)
{
	static bool callbacks = false;
	Oid			relid;
	Oid			pkey;

	if (!callbacks)
	{
		CacheRegisterRelcacheCallback(fences_invalidated, (Datum) 0);
		RegisterXactCallback(fences_xact_callback, NULL);
		callbacks = true;
	}
	memset(ft, 0, sizeof(*ft));
	relid = fences_relation();
	if (relid != locked_relid)
	{
		AS_TOP_TRANSACTION(LockRelationOid(relid, RowShareLock));
		locked_relid = relid;
		locked_pkey = InvalidOid;
		locked_for_writes = false;
	}
	ft->rel = table_open(relid, NoLock);
	pkey = RelationGetPrimaryKeyIndex(ft->rel);
	if (pkey != locked_pkey)
	{
		AS_TOP_TRANSACTION(LockRelationOid(pkey, AccessShareLock));
		locked_pkey = pkey;
		locked_for_writes = false;
	}
	ft->pkey = index_open(pkey, NoLock);
}

/*
 * writable_fences: lock "ft" for writes and open its indexes for index
 * entries, with the IndexInfo and EState this transaction keeps.  A table
 * with other indexes than its primary key (an administrator's) gets them
 * all the executor's way, every time.
 */
static void
writable_fences(FenceTable *ft)
{
	Oid			relid = RelationGetRelid(ft->rel);
	List	   *indexes;

	if (ft->rri != NULL)
		return;
	if (!locked_for_writes)
	{
		AS_TOP_TRANSACTION(
			{
				LockRelationOid(relid, RowExclusiveLock);
				LockRelationOid(RelationGetRelid(ft->pkey), RowExclusiveLock);
			});
		locked_for_writes = true;
	}
	if (kept_estate == NULL)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(TopTransactionContext);

		kept_estate = CreateExecutorState();
		MemoryContextSwitchTo(oldcxt);
	}
	ft->estate = kept_estate;
	ft->arbiters = list_make1_oid(RelationGetRelid(ft->pkey));
	ft->rri = makeNode(ResultRelInfo);
	InitResultRelInfo(ft->rri, ft->rel, 1, NULL, 0);

	indexes = RelationGetIndexList(ft->rel);
	if (list_length(indexes) != 1 || linitial_oid(indexes) != RelationGetRelid(ft->pkey))
	{
		ExecOpenIndices(ft->rri, true);
		ft->own_indexes = true;
		return;
	}
	if (kept_relid != relid || kept_pkey_info == NULL)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(TopTransactionContext);

		kept_pkey_info = BuildIndexInfo(ft->pkey);
		BuildSpeculativeIndexInfo(ft->pkey, kept_pkey_info);
		MemoryContextSwitchTo(oldcxt);
		kept_relid = relid;
	}
	/* what ExecOpenIndices() would make, without building it again */
	ft->rri->ri_NumIndices = 1;
	ft->rri->ri_IndexRelationDescs = palloc(sizeof(Relation));
	ft->rri->ri_IndexRelationDescs[0] = index_open(RelationGetRelid(ft->pkey), NoLock);
	ft->rri->ri_IndexRelationInfo = palloc(sizeof(IndexInfo *));
	ft->rri->ri_IndexRelationInfo[0] = kept_pkey_info;
}

static void
close_fences(FenceTable *ft)
{
	/* ExecCloseIndices() also releases the lock ExecOpenIndices() took */
	if (ft->own_indexes)
		ExecCloseIndices(ft->rri);
	else if (ft->rri != NULL)
		index_close(ft->rri->ri_IndexRelationDescs[0], NoLock);
	index_close(ft->pkey, NoLock);
	table_close(ft->rel, NoLock);
}

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
}

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
	Mark		mark;
	MemoryContext oldcxt;

	fence_check_resource_name(resource);
	if (token <= 0)
	{
		fence_stats_refused(resource, FENCE_REFUSED_INVALID, token, true);
		report_invalid_token(resource, token);
	}

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
	open_fences(ft);

	/*
	 * A transaction that has just made a mark is likely making one for each
	 * of many new resources (a batch, a key-mode table being filled): try
	 * the insertion first, which finds an existing row as a conflict and
	 * saves the index probe when there is none.  A wrong guess costs a row
	 * inserted and killed, and the next check looks first again.
	 */
	if (made_mark_last && !held &&
		(fence_max_step == 0 || (uint64) token <= (uint64) fence_max_step) &&
		insert_mark(ft, resource, token, owner, true))
		mark = (Mark) {false, 0, NULL};
	else
	{
		for (;;)
		{
			mark = lock_mark(ft, resource, token, owner, held);
			if (mark.exists)
				break;
			if (fence_max_step > 0 && (uint64) token > (uint64) fence_max_step)
				break;			/* refused below, without creating a row */
			if (insert_mark(ft, resource, token, owner, false))
				break;
			/* lost the race to create the row: lock the winner's version */
		}
	}
	made_mark_last = !mark.exists;

	if (mark.exists && (token < mark.token ||
						(token == mark.token && owners_conflict(owner, mark.owner))))
	{
		int64		hw = mark.token;

		fence_stats_refused(resource, FENCE_REFUSED_STALE, token, true);
		if (token < hw)
			ereport(ERROR,
					(errcode(ERRCODE_FENCE_STALE_TOKEN),
					 errmsg("stale fencing token for resource \"%s\"", resource),
					 errdetail("Token %lld is lower than the highest accepted token %lld.",
							   (long long) token, (long long) hw),
					 errhint("Acquire a new lease and retry with its token.")));
		ereport(ERROR,
				(errcode(ERRCODE_FENCE_STALE_TOKEN),
				 errmsg("stale fencing token for resource \"%s\"", resource),
				 errdetail("Token %lld was already accepted for another owner.",
						   (long long) token),
				 errhint("The lock service issued this token twice; acquire a new lease.")));
	}

	if (fence_max_step > 0 && token > mark.token &&
		(uint64) token - (uint64) mark.token > (uint64) fence_max_step)
	{
		int64		hw = mark.token;

		fence_stats_refused(resource, FENCE_REFUSED_INVALID, token, true);
		ereport(ERROR,
				(errcode(ERRCODE_FENCE_INVALID_TOKEN),
				 errmsg("invalid fencing token for resource \"%s\"", resource),
				 errdetail("Token %lld is more than fence.max_step (%d) above the highest accepted token %lld.",
						   (long long) token, fence_max_step, (long long) hw)));
	}

	/*
	 * Accepted.  A higher token moves the mark; an equal one moves nothing,
	 * except that an owner seen for the first time is recorded so that the
	 * same token cannot later be accepted for somebody else.
	 */
	if (mark.exists &&
		(token > mark.token || (mark.owner == NULL && owner != NULL)))
		update_mark(ft, &mark.tid, resource, token, owner);

	close_fences(ft);

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
	fence_stats_refused(resource, FENCE_REFUSED_MISSING, 0, false);
	ereport(ERROR,
			(errcode(ERRCODE_FENCE_MISSING_TOKEN),
			 errmsg("missing fencing token for resource \"%s\"", resource),
			 errhint("Pass the token that came with the lease.")));
}

/* fence.advance(resource text, token bigint, owner text DEFAULT NULL) */
PG_FUNCTION_INFO_V1(fence_advance);

Datum
fence_advance(PG_FUNCTION_ARGS)
{
	char	   *resource;
	char	   *owner;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("resource name must not be null")));
	resource = text_to_cstring(PG_GETARG_TEXT_PP(0));
	PreventCommandIfReadOnly("fence.advance()");
	if (PG_ARGISNULL(1))
	{
		fence_refuse_missing(resource);
	}
	owner = PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2));

	PG_RETURN_INT64(fence_check_and_advance(resource, PG_GETARG_INT64(1), owner));
}

/*
 * fence.reset(resource text, token bigint DEFAULT 0)
 *	  Set a resource's mark to "token", or remove it when "token" is 0.
 *	  For administrators repairing a mark (say, after the token counter was
 *	  lost for good); it may lower the mark, which is why it is not granted
 *	  to anybody by default, and why it always leaves a line in the log.
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
	Mark		mark;
	MemoryContext oldcxt;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("resource name and token must not be null")));
	PreventCommandIfReadOnly("fence.reset()");
	resource = text_to_cstring(PG_GETARG_TEXT_PP(0));
	token = PG_GETARG_INT64(1);
	fence_check_resource_name(resource);
	if (token < 0)
		report_invalid_token(resource, token);

	name = fence_registry_hash(resource);
	held = fence_registry_find(&name, &held_token, &held_owner);
	oldcxt = MemoryContextSwitchTo(check_context());
	open_fences(ft);
	for (;;)
	{
		mark = lock_mark(ft, resource, 0, NULL, held);
		if (mark.exists || token == 0 || insert_mark(ft, resource, token, NULL, false))
			break;
	}
	if (mark.exists && token == 0)
		delete_mark(ft, &mark.tid);
	else if (mark.exists)
		update_mark(ft, &mark.tid, resource, token, NULL);
	close_fences(ft);
	MemoryContextSwitchTo(oldcxt);

	fence_registry_forget(&name);
	ereport(LOG,
			(errmsg("fence for resource \"%s\" reset from %lld to %lld by role \"%s\"",
					resource, (long long) mark.token, (long long) token,
					GetUserNameFromId(GetUserId(), false))));
	PG_RETURN_INT64(mark.token);
}
