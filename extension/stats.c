/*
 * extension/stats.c
 *	  Counts of accepted and refused tokens per resource, kept in shared
 *	  memory so that refusals are visible although their transactions
 *	  abort: the fence.stats view, fence.stats_reset(), and the setting
 *	  fence.log_refusals.
 *
 *	  The counters live in a fixed-size hash table keyed by database and
 *	  resource name (two databases' resources of one name are two fences),
 *	  created at server start when the library is in
 *	  shared_preload_libraries (that is the only time an extension can get
 *	  shared memory).  fence.stats_max_resources sets its capacity, shared
 *	  by every database of the server.  When it is full, resources not in
 *	  it yet are counted together, per database, in one row whose resource
 *	  is NULL (kept in the table under the empty name, which no resource
 *	  has, in room set aside for STATS_OVERFLOW_DATABASES databases; beyond
 *	  that, in one row for the whole server).  Entries are never evicted,
 *	  so the counts of a resource never jump back to zero behind an
 *	  administrator's back, and fence.stats_reset() empties the table of
 *	  every database.  fence.stats shows the rows of the database it is
 *	  read in.
 *
 *	  Counters are bumped where the rule decides, before the error is
 *	  raised, outside any transaction's control: a refusal aborts its
 *	  transaction, and would leave no trace in a table.  "accepted" counts
 *	  the checks that accepted a token, including ones whose transaction
 *	  later rolled back; a check answered from this transaction's registry
 *	  (rule.c) is not counted again.
 *
 *	  The write path pays one shared lock of one LWLock, a hash probe and
 *	  an atomic add: accepted counts are pg_atomic_uint64 so that writers
 *	  share the lock.  Refusals and new entries take it exclusively; they
 *	  are rare.  Without preloading every call returns at once, and the SQL
 *	  functions say how to enable them.
 */
#include "postgres.h"

#include <limits.h>

#include "common/hashfn.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "errcodes.h"
#include "fence_ext.h"

#define STATS_TRANCHE "fence stats"

/* The counts of one resource, or of all that found the table full. */
typedef struct StatsCounts
{
	pg_atomic_uint64 accepted;
	/* the rest change under the exclusive lock */
	int64		refused[FENCE_REFUSAL_KINDS];
	TimestampTz last_refusal;	/* 0: none yet */
	int64		last_token;
	bool		last_token_known;	/* false after a missing token */
} StatsCounts;

/* How many databases get an overflow row of their own. */
#define STATS_OVERFLOW_DATABASES 64

typedef struct StatsKey
{
	Oid			dbid;
	char		resource[FENCE_MAX_RESOURCE_LEN + 1];	/* "": the overflow row */
} StatsKey;

typedef struct StatsEntry
{
	StatsKey	key;			/* hash key */
	StatsCounts counts;
} StatsEntry;

typedef struct StatsShared
{
	LWLock	   *lock;
	int			resources;		/* entries that are not overflow rows */
	StatsCounts overflow;		/* databases beyond STATS_OVERFLOW_DATABASES */
} StatsShared;

/* the two settings: static, only this file reads them (PostgreSQL 18 builds
 * with -Wmissing-variable-declarations) */
static int	fence_stats_max_resources = 1000;
static bool fence_log_refusals = false;

static StatsShared *stats = NULL;
static HTAB *stats_hash = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

#ifdef FENCE_SHMEM_REQUEST_HOOK
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif

static const char *const refusal_names[FENCE_REFUSAL_KINDS] = {
	"stale", "missing", "invalid"
};

static const int refusal_codes[FENCE_REFUSAL_KINDS] = {
	ERRCODE_FENCE_STALE_TOKEN, ERRCODE_FENCE_MISSING_TOKEN,
	ERRCODE_FENCE_INVALID_TOKEN
};

static Size
stats_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(StatsShared)),
					hash_estimate_size(fence_stats_max_resources + STATS_OVERFLOW_DATABASES,
									   sizeof(StatsEntry)));
}

/* Hash and compare keys by the name's bytes, not the whole buffer. */
static uint32
stats_key_hash(const void *key, Size keysize)
{
	const StatsKey *k = (const StatsKey *) key;

	return hash_combine(murmurhash32((uint32) k->dbid),
						string_hash(k->resource, FENCE_MAX_RESOURCE_LEN + 1));
}

static int
stats_key_match(const void *key1, const void *key2, Size keysize)
{
	const StatsKey *a = (const StatsKey *) key1;
	const StatsKey *b = (const StatsKey *) key2;

	return a->dbid == b->dbid ? strcmp(a->resource, b->resource) : 1;
}

static void *
stats_key_copy(void *dest, const void *src, Size keysize)
{
	StatsKey   *d = (StatsKey *) dest;
	const StatsKey *k = (const StatsKey *) src;

	d->dbid = k->dbid;
	strlcpy(d->resource, k->resource, sizeof(d->resource));
	return dest;
}

/*
 * stats_key: the key of "resource" in this database, in "key".  A name over
 * the limit never gets a row (stats_counts_enter), so cutting it is fine.
 */
static void
stats_key(StatsKey *key, const char *resource)
{
	key->dbid = MyDatabaseId;
	strlcpy(key->resource, resource, sizeof(key->resource));
}

static void
stats_shmem_request(void)
{
#ifdef FENCE_SHMEM_REQUEST_HOOK
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
#endif
	RequestAddinShmemSpace(stats_shmem_size());
	RequestNamedLWLockTranche(STATS_TRANCHE, 1);
}

static void
stats_counts_init(StatsCounts *c)
{
	pg_atomic_init_u64(&c->accepted, 0);
	memset(c->refused, 0, sizeof(c->refused));
	c->last_refusal = 0;
	c->last_token = 0;
	c->last_token_known = false;
}

static void
stats_shmem_startup(void)
{
	HASHCTL		ctl;
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	stats = ShmemInitStruct("fence stats", sizeof(StatsShared), &found);
	if (!found)
	{
		stats->lock = &(GetNamedLWLockTranche(STATS_TRANCHE))->lock;
		stats->resources = 0;
		stats_counts_init(&stats->overflow);
	}
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(StatsKey);
	ctl.entrysize = sizeof(StatsEntry);
	ctl.hash = stats_key_hash;
	ctl.match = stats_key_match;
	ctl.keycopy = stats_key_copy;
	stats_hash = ShmemInitHash("fence stats hash",
							   fence_stats_max_resources + STATS_OVERFLOW_DATABASES,
							   fence_stats_max_resources + STATS_OVERFLOW_DATABASES,
							   &ctl, HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_KEYCOPY);
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init: the settings, and shared memory when preloaded. */
void
fence_stats_init(void)
{
	DefineCustomBoolVariable("fence.log_refusals",
							 "Logs each refused fencing token with application_name and process id.",
							 NULL,
							 &fence_log_refusals,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	/* a server-wide setting can only be made while the server starts */
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("fence.stats_max_resources",
							"Number of resources fence.stats counts one by one.",
							"Resources beyond it are counted together in one row. Needs fence in shared_preload_libraries.",
							&fence_stats_max_resources,
							1000, 0, 100000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

#ifdef FENCE_SHMEM_REQUEST_HOOK
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = stats_shmem_request;
#else
	stats_shmem_request();
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = stats_shmem_startup;
}

/*
 * The counts of "resource" in this database, created if need be, or the
 * database's overflow counts when the table is full.  A name the rule
 * would refuse (empty, too long: a missing token is refused before the
 * name is looked at) gets no row of its own either.  Needs the lock held
 * exclusively.
 */
static StatsCounts *
stats_counts_enter(const char *resource)
{
	StatsKey	key;
	StatsEntry *entry;
	bool		found;

	if (resource[0] != '\0' && strlen(resource) <= FENCE_MAX_RESOURCE_LEN)
	{
		stats_key(&key, resource);
		entry = hash_search(stats_hash, &key, HASH_FIND, NULL);
		if (entry != NULL)
			return &entry->counts;
		if (stats->resources < fence_stats_max_resources)
		{
			entry = hash_search(stats_hash, &key, HASH_ENTER_NULL, &found);
			if (entry != NULL)
			{
				stats->resources++;
				stats_counts_init(&entry->counts);
				return &entry->counts;
			}
		}
	}

	/* this database's overflow row, if there is room for one */
	stats_key(&key, "");
	entry = hash_search(stats_hash, &key, HASH_ENTER_NULL, &found);
	if (entry == NULL)
		return &stats->overflow;
	if (!found)
		stats_counts_init(&entry->counts);
	return &entry->counts;
}

/* A check accepted a token for "resource". */
void
fence_stats_accepted(const char *resource)
{
	StatsKey	key;
	StatsEntry *entry;

	if (stats == NULL)
		return;

	stats_key(&key, resource);
	LWLockAcquire(stats->lock, LW_SHARED);
	entry = hash_search(stats_hash, &key, HASH_FIND, NULL);
	if (entry != NULL)
	{
		pg_atomic_fetch_add_u64(&entry->counts.accepted, 1);
		LWLockRelease(stats->lock);
		return;
	}
	LWLockRelease(stats->lock);

	/* first acceptance for this resource since start or reset */
	LWLockAcquire(stats->lock, LW_EXCLUSIVE);
	pg_atomic_fetch_add_u64(&stats_counts_enter(resource)->accepted, 1);
	LWLockRelease(stats->lock);
}

/*
 * A token for "resource" is about to be refused: count it and, with
 * fence.log_refusals, log it.  "token" is what was presented, when there
 * was one.  Called before the error is raised, so the count survives the
 * transaction's abort.
 */
static void
stats_refused(const char *resource, FenceRefusal kind,
			  int64 token, bool token_known)
{
	if (fence_log_refusals)
	{
		char		tokenbuf[32];

		if (token_known)
			snprintf(tokenbuf, sizeof(tokenbuf), INT64_FORMAT, token);
		else
			strlcpy(tokenbuf, "none", sizeof(tokenbuf));
		ereport(LOG,
				(errmsg("fencing token for resource \"%s\" refused as %s",
						resource, refusal_names[kind]),
				 errdetail("Token %s, application_name \"%s\", process %d.",
						   tokenbuf,
						   application_name ? application_name : "",
						   MyProcPid),
				 errhidestmt(true)));
	}

	if (stats != NULL)
	{
		StatsCounts *c;

		LWLockAcquire(stats->lock, LW_EXCLUSIVE);
		c = stats_counts_enter(resource);
		c->refused[kind]++;
		c->last_refusal = GetCurrentTimestamp();
		c->last_token = token;
		c->last_token_known = token_known;
		LWLockRelease(stats->lock);
	}
}

/*
 * fence_refuse: refuse the token presented for "resource": count the
 * refusal and log it (stats_refused), then raise the SQLSTATE of "kind"
 * with "message", and "detail" and "hint" when not NULL.  Every refusal of
 * a token goes through here, so that none is raised uncounted; the texts
 * come formatted (psprintf) because each call site says something else.
 */
void
fence_refuse(const char *resource, FenceRefusal kind,
			 int64 token, bool token_known,
			 const char *message, const char *detail, const char *hint)
{
	stats_refused(resource, kind, token, token_known);
	ereport(ERROR,
			(errcode(refusal_codes[kind]),
			 errmsg_internal("%s", message),
			 detail != NULL ? errdetail_internal("%s", detail) : 0,
			 hint != NULL ? errhint("%s", hint) : 0));
	pg_unreachable();
}

static void
stats_require_preload(void)
{
	if (stats == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fence statistics are not being collected"),
				 errdetail("They live in shared memory, which the fence library gets only when it is preloaded."),
				 errhint("Add fence to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/* One row of fence.stats_counts(), copied out under the lock. */
typedef struct StatsRow
{
	char	   *resource;		/* NULL: the overflow row */
	uint64		accepted;
	int64		refused[FENCE_REFUSAL_KINDS];
	TimestampTz last_refusal;
	int64		last_token;
	bool		last_token_known;
} StatsRow;

static void
stats_row_copy(StatsRow *row, const char *resource, StatsCounts *c)
{
	row->resource = resource ? pstrdup(resource) : NULL;
	row->accepted = pg_atomic_read_u64(&c->accepted);
	memcpy(row->refused, c->refused, sizeof(row->refused));
	row->last_refusal = c->last_refusal;
	row->last_token = c->last_token;
	row->last_token_known = c->last_token_known;
}

static bool
stats_counts_empty(StatsCounts *c)
{
	int			k;

	if (pg_atomic_read_u64(&c->accepted) != 0)
		return false;
	for (k = 0; k < FENCE_REFUSAL_KINDS; k++)
		if (c->refused[k] != 0)
			return false;
	return true;
}

/*
 * fence.stats_counts() RETURNS SETOF record: what the fence.stats view
 * shows, without the marks.  The whole table is copied under one shared
 * lock on the first call, then handed out row by row.
 */
PG_FUNCTION_INFO_V1(fence_stats_counts);

Datum
fence_stats_counts(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	StatsRow   *rows;

	if (SRF_IS_FIRSTCALL())
	{
		MemoryContext oldcxt;
		HASH_SEQ_STATUS seq;
		StatsEntry *entry;
		TupleDesc	tupdesc;
		int			n = 0;

		stats_require_preload();
		funcctx = SRF_FIRSTCALL_INIT();
		oldcxt = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
			elog(ERROR, "return type must be a row type");	/* internal error */
		funcctx->tuple_desc = BlessTupleDesc(tupdesc);

		LWLockAcquire(stats->lock, LW_SHARED);
		rows = palloc(sizeof(StatsRow) * (hash_get_num_entries(stats_hash) + 1));
		hash_seq_init(&seq, stats_hash);
		while ((entry = hash_seq_search(&seq)) != NULL)
			if (entry->key.dbid == MyDatabaseId)
				stats_row_copy(&rows[n++],
							   entry->key.resource[0] != '\0' ? entry->key.resource : NULL,
							   &entry->counts);
		if (!stats_counts_empty(&stats->overflow))
			stats_row_copy(&rows[n++], NULL, &stats->overflow);
		LWLockRelease(stats->lock);

		funcctx->user_fctx = rows;
		funcctx->max_calls = n;
		MemoryContextSwitchTo(oldcxt);
	}

	funcctx = SRF_PERCALL_SETUP();
	rows = funcctx->user_fctx;
	if (funcctx->call_cntr < funcctx->max_calls)
	{
		StatsRow   *row = &rows[funcctx->call_cntr];
		Datum		values[7];
		bool		nulls[7] = {false};
		int			k;

		if (row->resource)
			values[0] = CStringGetTextDatum(row->resource);
		else
			nulls[0] = true;
		values[1] = Int64GetDatum((int64) row->accepted);
		for (k = 0; k < FENCE_REFUSAL_KINDS; k++)
			values[2 + k] = Int64GetDatum(row->refused[k]);
		values[5] = TimestampTzGetDatum(row->last_refusal);
		nulls[5] = row->last_refusal == 0;
		values[6] = Int64GetDatum(row->last_token);
		nulls[6] = !row->last_token_known;
		SRF_RETURN_NEXT(funcctx,
						HeapTupleGetDatum(heap_form_tuple(funcctx->tuple_desc,
														  values, nulls)));
	}
	SRF_RETURN_DONE(funcctx);
}

/* fence.stats_reset(): forget every count, of every database. */
PG_FUNCTION_INFO_V1(fence_stats_reset);

Datum
fence_stats_reset(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS seq;
	StatsEntry *entry;

	stats_require_preload();
	LWLockAcquire(stats->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, stats_hash);
	while ((entry = hash_seq_search(&seq)) != NULL)
		hash_search(stats_hash, &entry->key, HASH_REMOVE, NULL);
	stats->resources = 0;
	stats_counts_init(&stats->overflow);
	LWLockRelease(stats->lock);
	PG_RETURN_VOID();
}
