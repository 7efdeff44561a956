/*
 * extension/compat.h
 *	  The one place where differences between PostgreSQL versions are
 *	  bridged.  pgfence supports PostgreSQL 13 and later.
 */
#ifndef FENCE_COMPAT_H
#define FENCE_COMPAT_H

#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "catalog/namespace.h"

#if PG_VERSION_NUM < 130000
#error "pgfence requires PostgreSQL 13 or later"
#endif

/*
 * The OIDs of the catalogs' indexes (TriggerRelidNameIndexId and the like)
 * moved from catalog/indexing.h to each catalog's header in PostgreSQL 14.
 */
#if PG_VERSION_NUM < 140000
#include "catalog/indexing.h"
#endif

/*
 * PostgreSQL 18 removed pg_attribute_noreturn(), which went after a
 * declaration; its pg_noreturn goes before it.
 */
#if PG_VERSION_NUM >= 180000
#define FENCE_NORETURN_BEFORE pg_noreturn
#define FENCE_NORETURN_AFTER
#else
#define FENCE_NORETURN_BEFORE
#define FENCE_NORETURN_AFTER pg_attribute_noreturn()
#endif

/*
 * PostgreSQL 18 gave index_beginscan() the scan's instrumentation (NULL:
 * none) and RelationGetPrimaryKeyIndex() whether a deferrable primary key
 * will do (fence's tables have an immediate one).
 */
#if PG_VERSION_NUM >= 180000
#define fence_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), (norderbys))
#define fence_primary_key_index(rel) RelationGetPrimaryKeyIndex((rel), false)
#else
#define fence_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), (norderbys))
#define fence_primary_key_index(rel) RelationGetPrimaryKeyIndex(rel)
#endif

/*
 * PostgreSQL 17 let LockHeldByMe() count a stronger mode as held; fence
 * asks about one mode exactly.
 */
#if PG_VERSION_NUM >= 170000
#define fence_lock_held_by_me(tag, mode) LockHeldByMe((tag), (mode), false)
#else
#define fence_lock_held_by_me(tag, mode) LockHeldByMe((tag), (mode))
#endif

/* PostgreSQL 15 renamed the placeholder check and made it reserve a prefix. */
#if PG_VERSION_NUM < 150000
#define MarkGUCPrefixReserved(prefix) EmitWarningsOnPlaceholders(prefix)
#endif

/*
 * PostgreSQL 15 renamed the parser setup for parameters whose types are
 * inferred (PREPARE without types); the arguments are the same.
 */
#if PG_VERSION_NUM < 150000
#define setup_parse_variable_parameters(pstate, types, ntypes) \
	parse_variable_parameters((pstate), (types), (ntypes))
#endif

/*
 * PostgreSQL 16 renamed the search path that the plan cache keeps with a
 * statement, and the check whether it still is the current one.
 */
#if PG_VERSION_NUM >= 160000
typedef SearchPathMatcher FenceSearchPath;
#define GetFenceSearchPath(context) GetSearchPathMatcher(context)
#define FenceSearchPathMatches(path) SearchPathMatchesCurrentEnvironment(path)
#else
typedef OverrideSearchPath FenceSearchPath;
#define GetFenceSearchPath(context) GetOverrideSearchPath(context)
#define FenceSearchPathMatches(path) OverrideSearchPathMatchesCurrent(path)
#endif

/*
 * From PostgreSQL 15 on, an extension asks for shared memory and LWLocks in
 * shmem_request_hook; before, directly in _PG_init.
 */
#if PG_VERSION_NUM >= 150000
#define FENCE_SHMEM_REQUEST_HOOK 1
#endif

/* PostgreSQL 16 replaced the per-catalog ownership checks by one function. */
#if PG_VERSION_NUM >= 160000
#define fence_rel_ownercheck(relid, roleid) \
	object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define fence_rel_ownercheck(relid, roleid) \
	pg_class_ownercheck((relid), (roleid))
#endif

/*
 * PostgreSQL 16 added "onlySummarizing" to ExecInsertIndexTuples(), and 18
 * the row being updated ("tupleid") to ExecCheckIndexConstraints(); fence
 * inserts a new row (marks.c), for which every index gets an entry.
 */
#if PG_VERSION_NUM >= 180000
#define FenceExecCheckIndexConstraints(rri, slot, estate, conflictTid, arbiters) \
	ExecCheckIndexConstraints((rri), (slot), (estate), (conflictTid), NULL, (arbiters))
#elif PG_VERSION_NUM >= 140000
#define FenceExecCheckIndexConstraints(rri, slot, estate, conflictTid, arbiters) \
	ExecCheckIndexConstraints((rri), (slot), (estate), (conflictTid), (arbiters))
#else
/* PostgreSQL 13: the result relation is the executor state's current one. */
#define FenceExecCheckIndexConstraints(rri, slot, estate, conflictTid, arbiters) \
	((estate)->es_result_relation_info = (rri), \
	 ExecCheckIndexConstraints((slot), (estate), (conflictTid), (arbiters)))
#endif
#if PG_VERSION_NUM >= 160000
#define FenceExecInsertIndexTuples(rri, slot, estate, noDupErr, specConflict, arbiters) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, (noDupErr), (specConflict), (arbiters), false)
#define FenceExecInsertIndexTuplesOf(rri, slot, estate, summarizing_only) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, false, NULL, NIL, (summarizing_only))
#elif PG_VERSION_NUM >= 140000
#define FenceExecInsertIndexTuples(rri, slot, estate, noDupErr, specConflict, arbiters) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, (noDupErr), (specConflict), (arbiters))
#define FenceExecInsertIndexTuplesOf(rri, slot, estate, summarizing_only) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, false, NULL, NIL)
#else
/*
 * PostgreSQL 13: no result relation argument (the executor state's current
 * one) and no "update" flag.
 */
#define FenceExecInsertIndexTuples(rri, slot, estate, noDupErr, specConflict, arbiters) \
	((estate)->es_result_relation_info = (rri), \
	 ExecInsertIndexTuples((slot), (estate), (noDupErr), (specConflict), (arbiters)))
#define FenceExecInsertIndexTuplesOf(rri, slot, estate, summarizing_only) \
	((estate)->es_result_relation_info = (rri), \
	 ExecInsertIndexTuples((slot), (estate), false, NULL, NIL))
#endif

/*
 * PostgreSQL 16 has simple_heap_update() say which indexes need an entry
 * for the new version (TU_Summarizing: only BRIN and the like, after a HOT
 * update); before, only a HOT update needed none.
 * fence_simple_heap_update_ext() updates and says whether the new version
 * needs index entries, and in "summarizing_only" whether only summarizing
 * indexes need them; FenceExecInsertIndexTuplesOf() makes those entries
 * (for a version the caller updated: no speculative insertion).
 */
#if PG_VERSION_NUM >= 160000
static inline bool
fence_simple_heap_update_ext(Relation rel, ItemPointer otid, HeapTuple tup,
							 bool *summarizing_only)
{
	TU_UpdateIndexes update_indexes;

	simple_heap_update(rel, otid, tup, &update_indexes);
	*summarizing_only = update_indexes == TU_Summarizing;
	return update_indexes != TU_None;
}
#else
static inline bool
fence_simple_heap_update_ext(Relation rel, ItemPointer otid, HeapTuple tup,
							 bool *summarizing_only)
{
	simple_heap_update(rel, otid, tup);
	*summarizing_only = false;
	return !HeapTupleIsHeapOnly(tup);
}
#endif

/*
 * The "extra" of a GUC check hook must come from guc_malloc() since 16,
 * which frees it with pfree() in its own context; before, PostgreSQL frees it
 * with free() and its guc_malloc() is static.  Both report no error: a
 * check hook fails with GUC_check_errcode() instead.
 */
#if PG_VERSION_NUM >= 160000
#define fence_guc_malloc(size) guc_malloc(LOG, (size))
#define fence_guc_free(ptr) guc_free(ptr)
#else
#define fence_guc_malloc(size) malloc(size)
#define fence_guc_free(ptr) free(ptr)
#endif

#endif							/* FENCE_COMPAT_H */
