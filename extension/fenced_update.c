/*
 * extension/fenced_update.c
 *	  fence.fenced_update: check-and-advance a token, then run one statement
 *	  with its parameters, in one round trip and in the caller's transaction.
 *	  fence.fenced_update_many does the same with the tokens of several
 *	  resources, checked in the canonical order of many.c.
 *
 *	  The statement runs with the caller's privileges; only the check reads
 *	  and writes fence.fences, directly (see rule.c).  A typed argument is bound
 *	  with its own type, so
 *	  fenced_update(r, t, 'UPDATE stock SET qty = qty - $1 WHERE id = $2', 1, 7)
 *	  binds two integers.  An argument without a type of its own (an untyped
 *	  literal, or a driver's parameter sent without a type) or of type text
 *	  or varchar takes the type the statement gives its $n, as PREPARE
 *	  without types would, and its text is read with that type's input
 *	  function: fenced_update(r, t, '... WHERE id = $1', '7') binds the
 *	  integer 7.  Drivers need this: node-postgres and pgbench -M prepared
 *	  send every parameter untyped, which resolves to the overload taking
 *	  VARIADIC text[] (an unknown argument prefers the string category, so
 *	  "any" loses); asyncpg asks the server and is told text; pgJDBC sends
 *	  every Java String as varchar.  A parameter the statement leaves
 *	  untyped (unused, or SELECT $1) stays text.
 *
 *	  Each distinct (statement, argument types, search path) is prepared
 *	  once per backend and kept in a small cache, so that a worker
 *	  repeating the same write pays for parsing and planning once.  The
 *	  plan cache replans a saved plan by itself after DDL or a change of
 *	  search_path, but with the parameter types it was given, and those are
 *	  ours: inferred from what the names in the statement meant when it was
 *	  prepared.  The same text under another search path may name other
 *	  tables with other column types, so the search path is part of the
 *	  key, compared as the plan cache compares it (the schemas it resolves
 *	  to, not the text of the setting); one statement used under several
 *	  paths has one slot per path.  Inferred types are worked out again
 *	  when DDL invalidates the plan, so a column whose type changed is bound
 *	  with its new type.
 *
 *	  The statement may call fenced_update again, directly, from a function
 *	  or from a trigger (an input function reading a parameter may too), and
 *	  those calls fill the cache as well.  A plan must not be freed while a
 *	  call further up the stack still uses it, so each slot counts the calls
 *	  using its plan and only an unused slot is ever evicted or replaced;
 *	  the count is dropped again on the way out, by error too.  When every
 *	  slot is in use, the plan is used once and not kept.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "parser/parse_param.h"
#include "tcop/cmdtag.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"

#include "compat.h"
#include "errcodes.h"
#include "fence_ext.h"

#define QUERY_CACHE_SIZE 32

/*
 * One parameter of a kept plan: the type of the argument as passed (the
 * cache key), and the type the plan takes with the input function that
 * reads the argument's text when the two differ.
 */
typedef struct PlanParam
{
	Oid			argtype;
	Oid			plantype;
	Oid			input;			/* InvalidOid: bind the value as it is */
	Oid			ioparam;
} PlanParam;

typedef struct CachedQuery
{
	char	   *query;			/* NULL if the slot is free */
	MemoryContext cxt;			/* holds query, params and search_path */
	FenceSearchPath *search_path;	/* the path the plan was prepared under */
	int			nargs;
	PlanParam  *params;
	bool		inferred;		/* some parameter was left to inference */
	SPIPlanPtr	plan;
	int			users;			/* calls using the plan right now */
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
 * Is an argument of "type" left to take the type the statement gives its
 * $n?  Unknown is an untyped literal or driver parameter; text is what an
 * untyped parameter of the outer call resolves to, and what asyncpg is
 * told; varchar is what pgJDBC sends for every String.  None of them says
 * what the application meant the value to be.
 */
static bool
left_to_inference(Oid type)
{
	return type == UNKNOWNOID || type == TEXTOID || type == VARCHAROID;
}

/*
 * Collect the variadic arguments from "first" on.  They arrive either one
 * by one, each with its own type, or as one array after VARIADIC (and
 * always so for the overload taking VARIADIC text[]).  An unknown argument
 * arrives as a C string.
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

/* Prepare "query" with "types", or refuse it unless it is exactly one DML statement. */
static SPIPlanPtr
prepare_query(const char *query, int nargs, Oid *types)
{
	SPIPlanPtr	plan = SPI_prepare(query, nargs, types);
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

	/*
	 * SELECT ... INTO has the tag of a SELECT but is CREATE TABLE AS once
	 * analyzed: a utility statement, refused like the others.
	 */
	if (!allowed_command(source->commandTag) ||
		(list_length(source->query_list) == 1 &&
		 linitial_node(Query, source->query_list)->commandType == CMD_UTILITY))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("query must be an INSERT, UPDATE, DELETE, MERGE or SELECT statement"),
				 errdetail("The query is a %s statement.",
						   source->commandTag == CMDTAG_SELECT ? "SELECT INTO" :
						   GetCommandTagName(source->commandTag))));
	return plan;
}

/* The parameter types of one analysis, as parse_param.c keeps them. */
typedef struct Inference
{
	Oid		   *types;
	int			ntypes;
} Inference;

static void
inference_setup(ParseState *pstate, void *arg)
{
	Inference  *inf = (Inference *) arg;

	setup_parse_variable_parameters(pstate, &inf->types, &inf->ntypes);
}

/*
 * Fill in "types" for the parameters left to inference: the types that
 * parse analysis of "query" gives them, as PREPARE without types would.
 * The analysis runs through SPI, so that its errors point into the query
 * as the real preparation's do; its plan is thrown away, and the real one
 * is prepared with the types fixed, so that replanning after DDL cannot
 * change them under values already converted.
 */
static void
infer_types(const char *query, int nargs, const Oid *argtypes, Oid *types)
{
	Inference	inf;
	SPIPlanPtr	plan;
	int			i;

	inf.ntypes = nargs;
	inf.types = palloc(sizeof(Oid) * Max(nargs, 1));
	for (i = 0; i < nargs; i++)
		inf.types[i] = left_to_inference(argtypes[i]) ? UNKNOWNOID : argtypes[i];

	plan = SPI_prepare_params(query, inference_setup, &inf, 0);
	if (plan == NULL)
		elog(ERROR, "could not analyze query: %s",	/* internal error */
			 SPI_result_code_string(SPI_result));
	SPI_freeplan(plan);

	for (i = 0; i < nargs; i++)
	{
		types[i] = argtypes[i];
		if (left_to_inference(argtypes[i]))
			types[i] = (i >= inf.ntypes || inf.types[i] == InvalidOid ||
						inf.types[i] == UNKNOWNOID) ? TEXTOID : inf.types[i];
	}
	pfree(inf.types);
}

/* Free a slot's plan and memory. */
static void
release_slot(CachedQuery *slot)
{
	SPI_freeplan(slot->plan);
	MemoryContextDelete(slot->cxt);
	slot->query = NULL;
}

/* Is "slot" the one for "query" with the arguments "p" under the current search path? */
static bool
slot_matches(const CachedQuery *slot, const char *query, const Params *p)
{
	int			i;

	if (slot->query == NULL || slot->nargs != p->nargs)
		return false;
	for (i = 0; i < p->nargs; i++)
		if (slot->params[i].argtype != p->types[i])
			return false;
	return strcmp(slot->query, query) == 0 &&
		FenceSearchPathMatches(slot->search_path);
}

/*
 * Whether the types inferred for a slot still hold: DDL since it was
 * prepared (say, a column's type changed) invalidates the plan, and the
 * statement may now give its parameters other types.
 */
static bool
slot_inference_holds(const CachedQuery *slot)
{
	Oid		   *argtypes;
	Oid		   *types;
	bool		holds = true;
	int			i;

	if (!slot->inferred || SPI_plan_is_valid(slot->plan))
		return true;
	argtypes = palloc(sizeof(Oid) * slot->nargs);
	types = palloc(sizeof(Oid) * slot->nargs);
	for (i = 0; i < slot->nargs; i++)
		argtypes[i] = slot->params[i].argtype;
	infer_types(slot->query, slot->nargs, argtypes, types);
	for (i = 0; i < slot->nargs; i++)
		if (types[i] != slot->params[i].plantype)
			holds = false;
	pfree(argtypes);
	pfree(types);
	return holds;
}

/*
 * The kept plan for (query, argument types) whose inferred types still
 * hold, or NULL.  Other slots for the same key that no call uses are
 * released on the way: their types went stale, or they duplicate the one
 * found (a stale slot still in use had a successor prepared beside it).
 */
static CachedQuery *
find_cached(const char *query, const Params *p)
{
	CachedQuery *found = NULL;
	int			i;

	for (i = 0; i < QUERY_CACHE_SIZE; i++)
	{
		CachedQuery *slot = &query_cache[i];

		if (!slot_matches(slot, query, p))
			continue;
		if (found == NULL && slot_inference_holds(slot))
			found = slot;
		else if (slot->users == 0)
			release_slot(slot);
	}
	return found;
}

/*
 * Prepare "query" for the arguments "p": a plan that is not kept yet, with
 * the types of its parameters, in the current memory context.
 */
static CachedQuery *
prepare_entry(const char *query, const Params *p)
{
	CachedQuery *entry = palloc0(sizeof(CachedQuery));
	Oid		   *types;
	bool		inferred = false;
	int			i;

	types = palloc(sizeof(Oid) * Max(p->nargs, 1));
	for (i = 0; i < p->nargs; i++)
		inferred |= left_to_inference(p->types[i]);
	if (inferred)
		infer_types(query, p->nargs, p->types, types);
	else
		memcpy(types, p->types, sizeof(Oid) * p->nargs);

	entry->plan = prepare_query(query, p->nargs, types);
	entry->params = palloc0(sizeof(PlanParam) * Max(p->nargs, 1));
	for (i = 0; i < p->nargs; i++)
	{
		PlanParam  *pp = &entry->params[i];

		pp->argtype = p->types[i];
		pp->plantype = types[i];
		/* text and varchar share their representation: no conversion */
		if (pp->argtype != pp->plantype &&
			!(pp->argtype != UNKNOWNOID &&
			  (pp->plantype == TEXTOID || pp->plantype == VARCHAROID)))
			getTypeInputInfo(pp->plantype, &pp->input, &pp->ioparam);
	}
	entry->inferred = inferred;
	entry->nargs = p->nargs;
	return entry;
}

/*
 * Keep "entry" in a slot, evicting the least recently filled slot that no
 * call uses, and return the slot; when all of them are in use, return
 * "entry" itself, whose plan then goes with SPI_finish.  The slot is chosen
 * only once the plan is prepared: preparing it may have filled slots too.
 */
static CachedQuery *
cache_entry(CachedQuery *entry, const char *query)
{
	CachedQuery *slot = NULL;
	int			i;

	for (i = 0; i < QUERY_CACHE_SIZE && slot == NULL; i++)
	{
		CachedQuery *candidate = &query_cache[query_cache_victim];

		query_cache_victim = (query_cache_victim + 1) % QUERY_CACHE_SIZE;
		if (candidate->users == 0)
			slot = candidate;
	}
	if (slot == NULL)
		return entry;

	if (slot->query != NULL)
		release_slot(slot);
	SPI_keepplan(entry->plan);
	slot->plan = entry->plan;
	slot->cxt = AllocSetContextCreate(TopMemoryContext, "fenced_update query",
									  ALLOCSET_SMALL_SIZES);
	slot->search_path = GetFenceSearchPath(slot->cxt);
	slot->params = MemoryContextAlloc(slot->cxt,
									  sizeof(PlanParam) * Max(entry->nargs, 1));
	memcpy(slot->params, entry->params, sizeof(PlanParam) * entry->nargs);
	slot->inferred = entry->inferred;
	slot->nargs = entry->nargs;
	slot->query = MemoryContextStrdup(slot->cxt, query);
	return slot;
}

/* Say which parameter's text did not fit its type. */
static void
bind_error_context(void *arg)
{
	errcontext("parameter $%d of fenced_update", *(int *) arg + 1);
}

/*
 * Turn the arguments left to inference into values of the types the plan
 * takes: read their text with the type's input function, as the server
 * reads a parameter sent as text.
 */
static void
bind_params(const CachedQuery *slot, Params *p)
{
	ErrorContextCallback errcb;
	int			i;

	errcb.callback = bind_error_context;
	errcb.arg = &i;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	for (i = 0; i < p->nargs; i++)
	{
		const PlanParam *pp = &slot->params[i];
		char	   *str;

		if (!OidIsValid(pp->input) || p->nulls[i] == 'n')
			continue;
		str = pp->argtype == UNKNOWNOID ? DatumGetCString(p->values[i]) :
			TextDatumGetCString(p->values[i]);
		p->values[i] = OidInputFunctionCall(pp->input, str, pp->ioparam, -1);
	}
	error_context_stack = errcb.previous;
}

/*
 * Bind the arguments "p" to the plan of "cached", accept the tokens of
 * "list" for their resources (with the owners the session's settings give
 * them), then run the plan, counting this call as a user of the plan until
 * it returns or fails.
 */
static int
run_fenced(CachedQuery *cached, Params *p, FenceResourceList *list)
{
	volatile int rc = 0;

	cached->users++;
	PG_TRY();
	{
		int			i;

		/* an argument that does not fit the query must fail before the mark moves */
		bind_params(cached, p);
		for (i = 0; i < list->n; i++)
			list->owners[i] = (char *) fence_session_owner(list->resources[i]);
		fence_check_and_advance_list(list, NULL);
		rc = SPI_execute_plan(cached->plan, p->values, p->nulls, false, 0);
	}
	PG_FINALLY();
	{
		cached->users--;
	}
	PG_END_TRY();
	return rc;
}

/*
 * Run the statement of argument 2 with the parameters from argument 3 on,
 * fenced by the tokens of "list"; the rows it processed.
 */
static int64
fenced_statement(FunctionCallInfo fcinfo, FenceResourceList *list)
{
	char	   *query;
	Params		params;
	CachedQuery *cached;
	int			rc;
	uint64		processed;

	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("query must not be null")));
	query = text_to_cstring(PG_GETARG_TEXT_PP(2));
	params = collect_params(fcinfo, 3);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");	/* internal error */

	/* a query that cannot run must fail before the mark moves */
	cached = find_cached(query, &params);
	if (cached == NULL)
		cached = cache_entry(prepare_entry(query, &params), query);

	rc = run_fenced(cached, &params, list);
	if (rc < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not run query: %s", SPI_result_code_string(rc))));
	processed = SPI_processed;
	SPI_finish();
	return (int64) processed;
}

/*
 * fence.fenced_update(resource text, token bigint, query text)
 * fence.fenced_update(resource text, token bigint, query text, VARIADIC params "any")
 * fence.fenced_update(resource text, token bigint, query text, VARIADIC params text[])
 *	  Returns the number of rows the statement processed.
 */
PG_FUNCTION_INFO_V1(fence_fenced_update);

Datum
fence_fenced_update(PG_FUNCTION_ARGS)
{
	char	   *resource;
	int64		token;
	char	   *owner = NULL;
	FenceResourceList list = {1, &resource, &token, &owner};

	resource = fence_resource_token_args(fcinfo, "fence.fenced_update()", &token);

	PG_RETURN_INT64(fenced_statement(fcinfo, &list));
}

/*
 * fence.fenced_update_many(resources text[], tokens bigint[], query text)
 * fence.fenced_update_many(resources text[], tokens bigint[], query text, VARIADIC params "any")
 * fence.fenced_update_many(resources text[], tokens bigint[], query text, VARIADIC params text[])
 *	  Accept every token for its resource, in the canonical order of
 *	  many.c, then run the statement; returns the rows it processed.
 */
PG_FUNCTION_INFO_V1(fence_fenced_update_many);

Datum
fence_fenced_update_many(PG_FUNCTION_ARGS)
{
	FenceResourceList list;

	list = fence_resource_list(fcinfo, 0, 1, -1);
	/* a fenced write that names no resource would be an unfenced one */
	if (list.n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("resources must not be empty"),
				 errhint("Name the resource of every lease the statement writes under.")));
	fence_prevent_read_only("fence.fenced_update_many()");

	PG_RETURN_INT64(fenced_statement(fcinfo, &list));
}
