/*
 * extension/marks.h
 *	  The rows of fence.fences, one high-water mark per resource, read under
 *	  a row lock and written by hand for the fencing rule (rule.c), which
 *	  decides what to read and write.
 */
#ifndef FENCE_MARKS_H
#define FENCE_MARKS_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "storage/itemptr.h"
#include "utils/relcache.h"

/* The high-water mark of one resource as read under its row lock. */
typedef struct FenceMark
{
	bool		exists;
	int64		token;
	char	   *owner;			/* NULL if the mark has no owner */
	ItemPointerData tid;		/* the locked version, if it exists */
} FenceMark;

/*
 * fence.fences during one check (fence_table_open() to fence_table_close()): the
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

extern void fence_table_open(FenceTable *ft);
extern void fence_table_close(FenceTable *ft);

extern FenceMark fence_mark_lock(FenceTable *ft, const char *resource,
								 int64 token, const char *owner, bool held);
extern bool fence_mark_insert(FenceTable *ft, const char *resource,
							  int64 token, const char *owner, bool blind);
extern void fence_mark_update(FenceTable *ft, ItemPointer tid,
							  const char *resource, int64 token,
							  const char *owner);
extern void fence_mark_delete(FenceTable *ft, ItemPointer tid);
extern bool fence_mark_made_last(void);

#endif							/* FENCE_MARKS_H */
