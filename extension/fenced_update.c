/*
 * extension/fenced_update.c
 *	  fence.fenced_update: check-and-advance a token, then run one statement
 *	  with its parameters, in one round trip and in the caller's transaction.
 *
 *	  The statement runs with the caller's privileges; only the check runs
 *	  as the owner of fence.fences (see rule.c).  Parameters are bound with
 *	  the types of the arguments as the caller wrote them, so
 *	  fenced_update(r, t, 'UPDATE stock SET qty = qty - $1 WHERE id = $2', 1, 7)
 *	  binds two integers.  An untyped literal ('abc') is bound as text.
 *
 *	  Each distinct (statement, parameter types) is prepared once per backend
 *	  and kept in a small cache, so that a worker repeating the same write
 *	  pays for parsing and planning once; the plan cache replans by itself
 *	  after DDL or a change of search_path.
 *
 *	  The statement may call fenced_update again, directly, from a function
 *	  or from a trigger, and those calls fill the cache too.  A plan must not
 *	  be freed while a call further up the stack still runs it, so each slot
 *	  counts the calls running its plan and only an unused slot is ever
 *	  evicted; the count is dropped again on the way out, by error too.
 *	  When every slot is in use, the plan is used once and not kept.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "tcop/cmdtag.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"

#include "errcodes.h"
#include "fence.h"

#define QUERY_CACHE_SIZE 32

typedef struct CachedQuery
{
	char	   *query;			/* NULL if the slot is free */
	int			nargs;
	Oid		   *argtypes;
	SPIPlanPtr	plan;
	int			users;			/* calls running the plan right now */
} CachedQuery;

static CachedQuery query_cache[QUERY_CACHE_SIZE];
static int	query_cache_victim = 0;

/* The parameters of one call, as SPI takes them. */
typedef struct Params
{
	int			nargs;
	Oid		   *types;
	Datum	   *values;
	char	   *nulls;
} Params;

/*
 * Collect the variadic arguments from "first" on.  They arrive either one
 * by one, each with its own type, or as one array after VARIADIC.
 */
static Params
collect_params(FunctionCallInfo fcinfo, int first)
{
	Params		p = {0, NULL, NULL, NULL};
	int			i;

	if (PG_NARGS() <= first)
		return p;

	if (get_fn_expr_variadic(fcinfo->flinfo))
	{
		ArrayType  *arr;
		Oid			elemtype;
		int16		typlen;
		bool		typbyval;
		char		typalign;
		bool	   *isnull;

		if (PG_ARGISNULL(first))
			return p;
		arr = PG_GETARG_ARRAYTYPE_P(first);
		elemtype = ARR_ELEMTYPE(arr);
		get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
		deconstruct_array(arr, elemtype, typlen, typbyval, typalign,
						  &p.values, &isnull, &p.nargs);
		p.types = palloc(sizeof(Oid) * Max(p.nargs, 1));
		p.nulls = palloc(Max(p.nargs, 1));
		for (i = 0; i < p.nargs; i++)
		{
			p.types[i] = elemtype;
			p.nulls[i] = isnull[i] ? 'n' : ' ';
		}
		return p;
	}

	p.nargs = PG_NARGS() - first;
	p.types = palloc(sizeof(Oid) * p.nargs);
	p.values = palloc(sizeof(Datum) * p.nargs);
	p.nulls = palloc(p.nargs);
	for (i = 0; i < p.nargs; i++)
	{
		Oid			type = get_fn_expr_argtype(fcinfo->flinfo, first + i);
		bool		isnull = PG_ARGISNULL(first + i);

		if (!OidIsValid(type))
			elog(ERROR, "could not determine the type of parameter $%d", i + 1);	/* internal error */
		p.nulls[i] = isnull ? 'n' : ' ';
		p.values[i] = isnull ? (Datum) 0 : PG_GETARG_DATUM(first + i);
		if (type == UNKNOWNOID)
		{
			/* an untyped literal arrives as a C string: bind it as text */
			type = TEXTOID;
			if (!isnull)
				p.values[i] = CStringGetTextDatum(DatumGetCString(p.values[i]));
		}
		p.types[i] = type;
	}
	return p;
}

static bool
allowed_command(CommandTag tag)
{
	switch (tag)
	{
		case CMDTAG_INSERT:
		case CMDTAG_UPDATE:
		case CMDTAG_DELETE:
		case CMDTAG_SELECT:
#if PG_VERSION_NUM >= 150000
		case CMDTAG_MERGE:
#endif
			return true;
		default:
			return false;
	}
}

/* Prepare "query", or refuse it unless it is exactly one DML statement. */
static SPIPlanPtr
prepare_query(const char *query, const Params *p)
{
	SPIPlanPtr	plan = SPI_prepare(query, p->nargs, p->types);
	List	   *sources;
	CachedPlanSource *source;

	if (plan == NULL)
		elog(ERROR, "could not prepare query: %s",	/* internal error */
			 SPI_result_code_string(SPI_result));

	sources = SPI_plan_get_plan_sources(plan);
	if (list_length(sources) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("query must be exactly one SQL statement"),
				 errdetail("The query has %d statements.", list_length(sources))));
	source = linitial(sources);
	if (!allowed_command(source->commandTag))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("query must be an INSERT, UPDATE, DELETE, MERGE or SELECT statement"),
				 errdetail("The query is a %s statement.",
						   GetCommandTagName(source->commandTag))));
	return plan;
}

/* The cached slot for (query, parameter types), or NULL. */
static CachedQuery *
find_cached(const char *query, const Params *p)
{
	int			i;

	for (i = 0; i < QUERY_CACHE_SIZE; i++)
	{
		CachedQuery *slot = &query_cache[i];

		if (slot->query != NULL && slot->nargs == p->nargs &&
			memcmp(slot->argtypes, p->types, sizeof(Oid) * p->nargs) == 0 &&
			strcmp(slot->query, query) == 0)
			return slot;
	}
	return NULL;
}

/*
 * Keep "plan" in a slot, evicting the least recently filled slot that no
 * call is running; NULL when all of them are running (the plan then stays
 * in SPI's memory and goes with SPI_finish).  The slot is chosen only once
 * the plan is prepared: preparing it may have filled slots too.
 */
static CachedQuery *
cache_plan(const char *query, const Params *p, SPIPlanPtr plan)
{
	CachedQuery *slot = NULL;
	int			i;

	for (i = 0; i < QUERY_CACHE_SIZE; i++)
	{
		CachedQuery *candidate = &query_cache[query_cache_victim];

		query_cache_victim = (query_cache_victim + 1) % QUERY_CACHE_SIZE;
		if (candidate->users == 0)
		{
			slot = candidate;
			break;
		}
	}
	if (slot == NULL)
		return NULL;

	if (slot->query != NULL)
	{
		SPI_freeplan(slot->plan);
		pfree(slot->query);
		pfree(slot->argtypes);
		slot->query = NULL;
	}

	slot->argtypes = MemoryContextAlloc(TopMemoryContext,
										sizeof(Oid) * Max(p->nargs, 1));
	memcpy(slot->argtypes, p->types, sizeof(Oid) * p->nargs);
	slot->query = MemoryContextStrdup(TopMemoryContext, query);
	slot->nargs = p->nargs;
	SPI_keepplan(plan);
	slot->plan = plan;
	return slot;
}

/*
 * Accept "token" for "resource", then run "plan", whose cache slot ("slot",
 * NULL for a plan that is not cached) counts this call as a user until it
 * returns or fails.
 */
static int
run_fenced(CachedQuery *slot, SPIPlanPtr plan, const char *resource,
		   int64 token, const Params *p)
{
	volatile int rc = 0;

	if (slot != NULL)
		slot->users++;
	PG_TRY();
	{
		fence_check_and_advance(resource, token, fence_session_owner(resource));
		rc = SPI_execute_plan(plan, p->values, p->nulls, false, 0);
	}
	PG_FINALLY();
	{
		if (slot != NULL)
			slot->users--;
	}
	PG_END_TRY();
	return rc;
}

/*
 * fence.fenced_update(resource text, token bigint, query text)
 * fence.fenced_update(resource text, token bigint, query text, VARIADIC params "any")
 *	  Returns the number of rows the statement processed.
 */
PG_FUNCTION_INFO_V1(fence_fenced_update);

Datum
fence_fenced_update(PG_FUNCTION_ARGS)
{
	char	   *resource;
	char	   *query;
	Params		params;
	CachedQuery *slot;
	SPIPlanPtr	plan;
	int			rc;
	uint64		processed;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("resource name must not be null")));
	resource = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_FENCE_MISSING_TOKEN),
				 errmsg("missing fencing token for resource \"%s\"", resource),
				 errhint("Pass the token that came with the lease.")));
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("query must not be null")));
	query = text_to_cstring(PG_GETARG_TEXT_PP(2));
	params = collect_params(fcinfo, 3);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");	/* internal error */

	/* a query that cannot run must fail before it moves the mark */
	slot = find_cached(query, &params);
	if (slot == NULL)
	{
		plan = prepare_query(query, &params);
		slot = cache_plan(query, &params, plan);
	}
	else
		plan = slot->plan;

	rc = run_fenced(slot, plan, resource, PG_GETARG_INT64(1), &params);
	if (rc < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not run query: %s", SPI_result_code_string(rc))));
	processed = SPI_processed;
	SPI_finish();

	PG_RETURN_INT64((int64) processed);
}
