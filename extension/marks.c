/*
 * extension/marks.c
 *	  The rows of fence.fences, read and written by hand: an index probe
 *	  and a row lock (SELECT ... FOR SHARE / FOR UPDATE), a speculative
 *	  insertion (INSERT ... ON CONFLICT DO NOTHING), an update and a
 *	  delete, with the semantics the executor gives those statements and
 *	  without its start-up cost, which a check would pay for every write.
 *	  What to read and write, and why that is safe, is the rule's (rule.c,
 *	  whose banner gives the lock modes and the waiting rules used here).
 *
 *	  Applications have no privileges on fence.fences: the work here is
 *	  below the level where privileges are checked and where the caller's
 *	  search_path could redirect an operator, as the executor itself does
 *	  once it has checked a statement.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "common/hashfn.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
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
#include "marks.h"


static void writable_fences(FenceTable *ft);
static void mark_locktag(LOCKTAG *tag, const char *resource);
static bool share_mark_aside(LOCKTAG *tag, TupleTableSlot *slot);
static bool version_held_exclusively(TupleTableSlot *slot);

/*
 * Checks of unchanged marks that kept their lock in the lock manager in
 * this transaction (see "Unchanged marks" at fence_mark_lock()): past
 * MAX_ASIDE, a check takes the row lock, so that a transaction that checks
 * millions of unchanged marks does not fill the shared lock table.
 */
#define MAX_ASIDE 16
static int	shared_aside = 0;

/* Columns of fence.fences, as sql/fence.sql creates it. */
#define Anum_fences_resource 1
#define Anum_fences_token 2
#define Anum_fences_owner 3
#define Anum_fences_updated_at 4

/*
 * Whether this transaction's last look at a mark ended in making it:
 * fence_check_and_advance() then inserts first for the next resource.
 */
static bool made_mark_last = false;

/*
 * Whether this transaction wrote a mark (made, moved, lowered or removed
 * one): its commit is then made durable, whatever the session asked for
 * (durable_commit()).
 */
static bool wrote_mark = false;

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
 * fence_table_open()), kept until the transaction ends.
 *
 * Unchanged marks.  A check whose token leaves the mark as it is (the
 * writers of the current holder, one after another) need not write a row
 * lock into the mark's tuple: that write takes the page's content lock
 * exclusively and WAL-logs it, and the marks of many resources share a
 * page, so writers of different resources queue on each other's pages.
 * Such a check instead holds a lock in the lock manager keyed by the
 * resource's name, the mark lock (mark_locktag(): a 64-bit hash of the
 * name; two names that collide only make a mover wait for a writer of the
 * other resource), in ShareLock until its transaction ends, after
 * checking that nobody has written, is writing or holds exclusively the
 * version it read (share_mark_aside()).  Every change of a mark goes
 * through the exclusive path below, which takes the mark lock in
 * ExclusiveLock before it locks the row and lets it go once it holds the
 * row (so that a transaction that moves a million marks holds none of
 * them in the lock table), and fence.forget() takes fence.floors in
 * EXCLUSIVE mode first; a check of an unchanged mark holds fence.floors
 * in ROW SHARE mode (taken without waiting; when it cannot be had, the
 * check takes the row lock as before).  Why nothing stale gets through,
 * interleaving by interleaving:
 *
 *  - A check (C, mark lock shared) and a move (M) of the same mark.  If C
 *    read the version before M locked it, M's ExclusiveLock waits for C's
 *    transaction to end: the move commits after C, as it waits for a row
 *    lock.  If M holds the row (its xmax is on the version C read) or has
 *    moved it, C finds that xmax once it holds the mark lock, and takes
 *    the row lock instead, which waits for M and then decides on the
 *    newest version (READ COMMITTED) or fails with 40001.  M holds the
 *    mark lock while it locks the row, so no check can see the version
 *    clean in between.  A check that comes while M waits for the mark
 *    lock queues behind M in the lock manager: the fairness of the row
 *    path, kept.
 *  - A check and fence.reset() or fence.resync(): both change marks
 *    through the exclusive path, as a move.
 *  - A check and fence.forget(), which deletes marks with a DELETE and so
 *    waits only for row locks: it first takes fence.floors in EXCLUSIVE
 *    mode, which waits for every transaction that holds an unchanged mark
 *    in the lock manager (they hold fence.floors in ROW SHARE) and, until
 *    it commits, turns every new check of an unchanged mark to the row
 *    lock, which its DELETE waits for as before.  So no check that read a
 *    mark commits after the forget that deleted it, and a resource made
 *    anew after the forget cannot be written under its old token.
 *  - This transaction already holds the mark (held): a move takes the
 *    mark lock in ExclusiveLock without waiting (kept if the transaction
 *    held it shared, else let go once the row is held, as above), and
 *    fails with 40001 if another transaction holds it ("No upgrades",
 *    rule.c), unless this
 *    transaction holds the version exclusively (made it, or locked it FOR
 *    UPDATE) and not the mark lock shared: then whoever holds the mark
 *    lock took it after that row lock, found its xmax, and waits for the
 *    row, having accepted nothing.  A transaction that holds the mark only
 *    by a row lock FOR SHARE (past MAX_ASIDE, or during a forget) is not
 *    excused: a check may hold the mark lock from before that row lock.
 *  - Savepoints: the mark lock and fence.floors' lock belong to the
 *    subtransaction that took them and go with its rollback, with the
 *    registry's entry (registry.c), as a row lock would.
 *  - A crash: locks in the lock manager are not kept across one, nor are
 *    the transactions that held them, whose uncommitted writes are gone;
 *    the marks are what committed, as after any crash.
 */
FenceMark
fence_mark_lock(FenceTable *ft, const char *resource, int64 token, const char *owner,
		  bool held)
{
	FenceMark	mark = {false, 0, NULL};
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
	LOCKTAG		marktag;
	bool		mark_locked = false;

	/* see what this transaction did so far, as a new statement would */
	CommandCounterIncrement();
	PushCopiedSnapshot(GetTransactionSnapshot());
	UpdateActiveSnapshotCommandId();
	snapshot = GetActiveSnapshot();

	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_TEXTEQ,
				CStringGetTextDatum(resource));
	key.sk_collation = idx->rd_indcollation[0];

	slot = table_slot_create(rel, NULL);
	scan = fence_index_beginscan(rel, idx, snapshot, 1, 0);
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

		mark_locktag(&marktag, resource);
		if (shared && !held && share_mark_aside(&marktag, slot))
			result = TM_Ok;		/* see "Unchanged marks" above */
		else
		{
			if (!shared && !held)
			{
				/* wait for the checks that hold the mark aside */
				(void) LockAcquire(&marktag, ExclusiveLock, false, false);
				mark_locked = true;
			}
			else if (!shared)
			{
				/* a move of a mark this transaction holds: see "held" above */
				bool		had_share = fence_lock_held_by_me(&marktag, ShareLock);

				if (LockAcquire(&marktag, ExclusiveLock, false, true) != LOCKACQUIRE_NOT_AVAIL)
					mark_locked = !had_share;	/* a new lock: let it go below */
				else if (had_share || !version_held_exclusively(slot))
					report_must_retry(resource,
									  "This transaction already holds the fence and has to move its mark, but another transaction holds the fence too.");
			}

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
			/* the row lock, or its absence, now does what the mark lock did */
			if (mark_locked)
				LockRelease(&marktag, ExclusiveLock, false);
		}
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
				made_mark_last = false;
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
 * The mark lock of "resource" (see "Unchanged marks" at fence_mark_lock()):
 * an advisory lock of this database, keyed by a 64-bit hash of the name,
 * with a fourth field ("fe") that pg_advisory_lock()'s keys never have.
 */
#define FENCE_MARK_LOCK_FIELD4 0x6665

static void
mark_locktag(LOCKTAG *tag, const char *resource)
{
	uint64		h = hash_bytes_extended((const unsigned char *) resource,
										strlen(resource), 0);

	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) (h >> 32), (uint32) h,
						 FENCE_MARK_LOCK_FIELD4);
}

/*
 * share_mark_aside: hold the mark whose version "slot" holds (pinned, as
 * the index probe left it) for an unchanged-mark check without a row lock:
 * fence.floors in ROW SHARE mode without waiting, the mark lock in
 * ShareLock (waiting, behind a mover that waits for it), then a look at
 * the version under its page's share lock.  True when the version is the
 * live one and nobody has updated, deleted or locked it since: the check
 * then needs nothing more.  False, with the locks kept (a check that goes
 * on to take the row lock holds them harmlessly), when the row lock is
 * needed: a forget is running, the transaction holds MAX_ASIDE marks this
 * way already, or the version has an xmax that is not over.
 */
static bool
share_mark_aside(LOCKTAG *tag, TupleTableSlot *slot)
{
	BufferHeapTupleTableSlot *bslot = (BufferHeapTupleTableSlot *) slot;
	Oid			floors = fence_floors_relation();
	TM_Result	result;

	Assert(TTS_IS_BUFFERTUPLE(slot));
	if (shared_aside >= MAX_ASIDE || !OidIsValid(floors) ||
		!ConditionalLockRelationOid(floors, RowShareLock))
		return false;
	(void) LockAcquire(tag, ShareLock, false, false);
	shared_aside++;

	LockBuffer(bslot->buffer, BUFFER_LOCK_SHARE);
	result = HeapTupleSatisfiesUpdate(bslot->base.tuple, GetCurrentCommandId(false),
									  bslot->buffer);
	LockBuffer(bslot->buffer, BUFFER_LOCK_UNLOCK);
	return result == TM_Ok;
}

/*
 * version_held_exclusively: whether this transaction made the version that
 * "slot" holds (pinned, as the index probe left it) or holds it locked FOR
 * UPDATE: a row lock that no other transaction's check can share.
 */
static bool
version_held_exclusively(TupleTableSlot *slot)
{
	BufferHeapTupleTableSlot *bslot = (BufferHeapTupleTableSlot *) slot;
	HeapTupleHeader tup = bslot->base.tuple->t_data;
	bool		ours;

	Assert(TTS_IS_BUFFERTUPLE(slot));
	LockBuffer(bslot->buffer, BUFFER_LOCK_SHARE);
	ours = TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tup)) ||
		(!(tup->t_infomask & (HEAP_XMAX_INVALID | HEAP_XMAX_IS_MULTI)) &&
		 HEAP_XMAX_IS_EXCL_LOCKED(tup->t_infomask) &&
		 TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetRawXmax(tup)));
	LockBuffer(bslot->buffer, BUFFER_LOCK_UNLOCK);
	return ours;
}

/*
 * Create the mark; false if a concurrent transaction created it first, or,
 * with "blind", if any transaction did.
 *
 * This is INSERT ... ON CONFLICT (resource) DO NOTHING done by hand, as
 * fence_mark_lock() does SELECT ... FOR UPDATE: the executor's start-up for a
 * one-row INSERT costs more than the insertion, and a worker that fences
 * one resource per item (a new mark each) pays it for every item.  The
 * protocol is the executor's speculative insertion: insert the row
 * speculatively, insert its index entry (waiting for the inserter of a
 * conflicting one), and confirm the insertion, or kill the row if another
 * transaction's entry came first.  The executor first looks for a
 * conflicting row with a dirty snapshot, which waits for its inserter;
 * here fence_mark_lock() has just found none, a conflict is the rare race, and
 * that look is made only after one, before trying again (without it, a
 * conflict with an insertion still in progress would be retried at once,
 * and again, until the other transaction ends).  A conflict under
 * REPEATABLE READ or SERIALIZABLE is a row this transaction's snapshot does
 * not show (fence_mark_lock() found none): a serialization failure, as ON
 * CONFLICT DO NOTHING raises it.
 *
 * "blind": fence_mark_lock() has not looked (see fence_check_and_advance()), so
 * a conflict may be with any row, committed long ago or visible to this
 * transaction's snapshot: one attempt, and false on a conflict, after
 * which the caller looks with fence_mark_lock() as usual.
 *
 * fence.fences has no triggers, rules or constraints beyond its key and
 * CHECK (token > 0), which the callers have made sure of.
 */
bool
fence_mark_insert(FenceTable *ft, const char *resource, int64 token,
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
	{
		CommandCounterIncrement();
		made_mark_last = true;
		wrote_mark = true;
	}
	return !conflict;
}

/*
 * Move the mark whose newest version this transaction has locked
 * exclusively at "tid" to "token" and "owner".
 *
 * This is UPDATE fence.fences SET token = $2, owner = $3, updated_at =
 * now() WHERE resource = $1, done by hand for the reason fence_mark_lock() gives.
 * The row is ours (FOR UPDATE), so the update cannot meet a concurrent
 * one.  When the new version fits on the row's page (fence.fences leaves
 * room for it: sql/fence.sql) and no indexed column changes, which is
 * always, it is a HOT update and adds no index entry; otherwise every
 * index of the table gets one, as the executor would make it.
 */
void
fence_mark_update(FenceTable *ft, ItemPointer tid, const char *resource,
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
	wrote_mark = true;
	/* let the rest of the transaction see it, as a statement would */
	CommandCounterIncrement();
}

/*
 * Remove the mark whose newest version this transaction has locked
 * exclusively at "tid" (DELETE, by hand, as fence_mark_update()).
 */
void
fence_mark_delete(FenceTable *ft, ItemPointer tid)
{
	writable_fences(ft);
	simple_heap_delete(ft->rel, tid);
	wrote_mark = true;
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

/* A change of fence.fences (an index added or dropped): set up anew. */
static void
fences_invalidated(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == kept_relid)
		kept_relid = InvalidOid;
}

/*
 * durable_commit: make the commit of a transaction that wrote a mark wait
 * for its WAL to be flushed here and, where synchronous_standby_names is
 * set, on the synchronous standbys: synchronous_commit at least "on" for
 * this commit.
 *
 * A mark that a commit acknowledged must survive a crash and a failover to
 * a synchronous standby: the new holder was told that its token is in
 * force, and a mark that comes back lower after a crash lets the old
 * holder's stale token through.  synchronous_commit = off (or local, or
 * remote_write) is a setting any role may choose for its own transactions,
 * so it is raised here, at commit (in the pre-commit callback, after the
 * last deferred trigger and the last statement of the transaction), where
 * nothing the session does can lower it again: a SET LOCAL made after the
 * write has run by then.  The setting is a transaction-local one and is put
 * back when the transaction ends, as SET LOCAL would be.  RecordTransaction-
 * Commit() reads synchronous_commit after the pre-commit callbacks, and
 * SyncRepWaitForLSN() reads the wait mode that its assign hook sets, so
 * both the local flush and the wait for the standbys follow (PostgreSQL 13
 * to 18 alike).  Transactions that only checked an unchanged mark wrote
 * no mark and keep the session's setting.
 */
static void
durable_commit(void)
{
	if (synchronous_commit >= SYNCHRONOUS_COMMIT_REMOTE_FLUSH)
		return;
	(void) set_config_option("synchronous_commit", "on", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_LOCAL, true, ERROR,
							 false);
}

static void
fences_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			if (wrote_mark)
				durable_commit();
			break;
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
			wrote_mark = false;
			shared_aside = 0;
			break;
		default:
			break;
	}
}

/*
 * fence_table_open: fence.fences and its primary key, locked as SELECT FOR
 * UPDATE locks them, until the transaction ends (see locked_relid).
 */
void
fence_table_open(FenceTable *ft)
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
	pkey = fence_primary_key_index(ft->rel);
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

void
fence_table_close(FenceTable *ft)
{
	/* ExecCloseIndices() also releases the lock ExecOpenIndices() took */
	if (ft->own_indexes)
		ExecCloseIndices(ft->rri);
	else if (ft->rri != NULL)
		index_close(ft->rri->ri_IndexRelationDescs[0], NoLock);
	index_close(ft->pkey, NoLock);
	table_close(ft->rel, NoLock);
}

bool
fence_mark_made_last(void)
{
	return made_mark_last;
}
