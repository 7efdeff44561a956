/*
 * extension/floors.c
 *	  Floors: what fence.forget() leaves behind of the marks it deletes.
 *
 *	  fence.forget() (sql/fence.sql) deletes marks that have not moved for
 *	  a while and raises, in the same transaction, the floor of each
 *	  deleted resource's prefix to at least its mark: fence.floors holds,
 *	  per prefix, the highest mark ever forgotten under it, and is never
 *	  lowered.  The rule (rule.c) checks a resource that has no mark
 *	  against the floor of its prefix, and accepts only a token above it,
 *	  so that no token at or below a forgotten mark is accepted again: the
 *	  floor has no owner, and an equal token may come from a holder that
 *	  the forgotten mark's owner was not.
 *
 *	  Why per prefix.  One floor for every resource would make a new
 *	  resource anywhere start above the highest mark ever forgotten, and
 *	  every new lease would have to lift its Redis counter first; a floor
 *	  per resource would be the mark again.  The rows of a key-mode table
 *	  are named B ':' key (key_resource.c), so their prefix is the table's
 *	  resource B: one floor per table, whatever number of keys it forgets.
 *
 *	  The prefix of a name is what comes before its last ':' that no
 *	  backslash escapes (a ':' after an odd run of backslashes is part of
 *	  an escaped key), or '' when it has none.  Any function of the name
 *	  would be safe, since a floor is read and raised under the same
 *	  prefix; this one makes each key-mode table one prefix, keys with ':'
 *	  included, and "app:orders:7" a resource of "app:orders".
 *
 *	  Why reading a floor without a lock is safe.  The rule reads the floor
 *	  of a resource only once its own insertion of the resource's mark has
 *	  gone in (INSERT ... ON CONFLICT DO NOTHING without a conflict), and
 *	  reads it with a snapshot taken then.  No other mark of the resource
 *	  was live at that moment, or the insertion would have met it (a row
 *	  that fence.forget() is deleting still counts, and is waited for).
 *	  So every earlier mark of the resource was deleted by a transaction
 *	  that had committed before that snapshot (fence.forget() with its
 *	  floor; fence.reset() on purpose without one); and no
 *	  later one can be made or forgotten before this transaction ends,
 *	  since its insertion would meet ours.  The floor read is therefore at
 *	  least every forgotten mark of the resource, at every isolation level.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "fence_ext.h"

/* Columns of fence.floors, as sql/fence.sql creates it. */
#define Anum_floors_token 2

/*
 * floor_prefix_len: the length of the prefix of "resource" (of
 * "len" bytes): up to its last unescaped ':', or 0 when it has none.
 */
static size_t
floor_prefix_len(const char *resource, size_t len)
{
	size_t		prefix = 0;
	size_t		i;

	for (i = 0; i < len; i++)
	{
		if (resource[i] == '\\')
			i++;				/* the next byte is escaped, ':' included */
		else if (resource[i] == ':')
			prefix = i;
	}
	return prefix;
}

/*
 * fence.floors, or InvalidOid where it does not exist (a database whose
 * extension is older than the library).  Found by name once and kept
 * until the relation changes (dropped with the extension, renamed): the
 * first write of every resource comes here.  A table that is missing is
 * looked for again each time, since an update of the extension makes it.
 */
static Oid	floors_relid = InvalidOid;

static void
floors_invalidated(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == floors_relid)
		floors_relid = InvalidOid;
}

Oid
fence_floors_relation(void)
{
	static bool registered = false;
	Oid			nsp;

	if (OidIsValid(floors_relid))
		return floors_relid;
	if (!registered)
	{
		CacheRegisterRelcacheCallback(floors_invalidated, (Datum) 0);
		registered = true;
	}
	nsp = get_namespace_oid("fence", true);
	if (OidIsValid(nsp))
		floors_relid = get_relname_relid("floors", nsp);
	return floors_relid;
}

/*
 * fence_floor_of: the floor under which "resource", which has no mark,
 * refuses every token; 0 when its prefix has none.  See the banner for
 * why a fresh snapshot, and no lock, is enough: the caller must have
 * inserted the resource's mark already.
 *
 * A table that never held a floor has no pages: then there is nothing to
 * probe (a floor is never deleted by pgfence, and a forget that matters
 * here has committed, its page with it), which keeps the first writes of a
 * database that never forgot a mark at the cost of a size lookup.
 */
int64
fence_floor_of(const char *resource)
{
	Oid			relid;
	Relation	rel;
	Relation	idx;
	ScanKeyData key;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	Snapshot	snapshot;
	int64		floor = 0;

	relid = fence_floors_relation();
	if (!OidIsValid(relid))
		return 0;
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
	{
		/* dropped since it was found: look again */
		floors_relid = InvalidOid;
		return fence_floor_of(resource);
	}
	if (RelationGetNumberOfBlocks(rel) == 0)
	{
		relation_close(rel, AccessShareLock);
		return 0;
	}

	idx = index_open(fence_primary_key_index(rel), AccessShareLock);
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_TEXTEQ,
				PointerGetDatum(cstring_to_text_with_len(resource,
														 floor_prefix_len(resource, strlen(resource)))));
	key.sk_collation = idx->rd_indcollation[0];

	snapshot = RegisterSnapshot(GetLatestSnapshot());
	slot = table_slot_create(rel, NULL);
	scan = fence_index_beginscan(rel, idx, snapshot, 1, 0);
	index_rescan(scan, &key, 1, NULL, 0);
	if (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		bool		isnull;

		floor = DatumGetInt64(slot_getattr(slot, Anum_floors_token, &isnull));
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
	index_close(idx, AccessShareLock);
	relation_close(rel, AccessShareLock);
	return floor;
}

/*
 * fence.floor_prefix(resource text) → text: the prefix whose floor
 * "resource" falls back to once its mark is forgotten.  fence.forget() and
 * fence.mark() use it, so that SQL and the rule agree on the prefix.
 */
PG_FUNCTION_INFO_V1(fence_floor_prefix);

Datum
fence_floor_prefix(PG_FUNCTION_ARGS)
{
	text	   *resource = PG_GETARG_TEXT_PP(0);

	PG_RETURN_TEXT_P(cstring_to_text_with_len(VARDATA_ANY(resource),
											  floor_prefix_len(VARDATA_ANY(resource),
															   VARSIZE_ANY_EXHDR(resource))));
}
