/*
 * extension/many.c
 *	  A set of leases fenced in one call (the "_many" of the public names:
 *	  docs/concepts.md's glossary): fence.advance_many, and the checks of
 *	  fence.fenced_update_many (fenced_update.c).
 *
 *	  A transfer debits one account and credits another, each its own
 *	  resource with its own lease and token.  Checking them one by one in
 *	  the caller's order would let two transfers in opposite directions
 *	  (a to b, b to a) each lock one fence row and wait for the other's:
 *	  a deadlock that PostgreSQL breaks only after deadlock_timeout, by
 *	  killing one of them.  So the rows are always taken in one canonical
 *	  order, the bytewise order of the names (strcmp, as the client sorts
 *	  FENCE_RESOURCE_1..N), which every caller shares: two calls then
 *	  queue on the first row they have in common and never hold rows the
 *	  other waits for.  The guard takes the two keys of a row moved from
 *	  one key to another in the same order (guard.c).
 *
 *	  All or nothing.  Every argument is checked before the first row is
 *	  touched, and a refusal of any resource raises an error, which rolls
 *	  back the statement with the marks already advanced in it and their
 *	  registrations (registry.c), as for any other write of the statement.
 *
 *	  A resource named twice is checked once: with the same token (and no
 *	  two different owners), both places get the same answer; with two
 *	  different tokens the caller made a mistake, refused with LF003
 *	  rather than guessed at.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "errcodes.h"
#include "fence_ext.h"

/* Elements of a one-dimensional array argument "arg" named "what". */
static int
array_elements(FunctionCallInfo fcinfo, int arg, const char *what,
			   Oid elemtype, Datum **values, bool **nulls)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(arg);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			n;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array", what)));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elemtype, typlen, typbyval, typalign,
					  values, nulls, &n);
	return n;
}

/*
 * fence_resource_list: the resources and tokens (and owners, when
 * "owners_arg" is not -1) that arguments "resources_arg" and "tokens_arg"
 * of a call name, checked: arrays of one length, no null resource (22004)
 * or token (LF002), names of the allowed length (22023).
 */
FenceResourceList
fence_resource_list(FunctionCallInfo fcinfo, int resources_arg,
					int tokens_arg, int owners_arg)
{
	FenceResourceList list;
	Datum	   *values;
	bool	   *nulls;
	int			ntokens;
	int			i;

	if (PG_ARGISNULL(resources_arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("resource names must not be null")));
	list.n = array_elements(fcinfo, resources_arg, "resources", TEXTOID,
							&values, &nulls);
	list.resources = palloc(sizeof(char *) * Max(list.n, 1));
	for (i = 0; i < list.n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("resource name must not be null"),
					 errdetail("Element %d of the resources is null.", i + 1)));
		list.resources[i] = TextDatumGetCString(values[i]);
		fence_check_resource_name(list.resources[i]);
	}

	if (PG_ARGISNULL(tokens_arg))
	{
		if (list.n == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FENCE_MISSING_TOKEN),
					 errmsg("missing fencing tokens"),
					 errhint("Pass the tokens that came with the leases.")));
		fence_refuse_missing(list.resources[0]);
	}
	ntokens = array_elements(fcinfo, tokens_arg, "tokens", INT8OID,
							 &values, &nulls);
	if (ntokens != list.n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("resources and tokens must have the same length"),
				 errdetail("There are %d resources and %d tokens.", list.n, ntokens)));
	list.tokens = palloc(sizeof(int64) * Max(list.n, 1));
	for (i = 0; i < list.n; i++)
	{
		if (nulls[i])
			fence_refuse_missing(list.resources[i]);
		list.tokens[i] = DatumGetInt64(values[i]);
	}

	list.owners = palloc0(sizeof(char *) * Max(list.n, 1));
	if (owners_arg >= 0 && !PG_ARGISNULL(owners_arg))
	{
		int			nowners = array_elements(fcinfo, owners_arg, "owners",
											 TEXTOID, &values, &nulls);

		if (nowners != list.n)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("resources and owners must have the same length"),
					 errdetail("There are %d resources and %d owners.", list.n, nowners)));
		for (i = 0; i < list.n; i++)
			list.owners[i] = nulls[i] ? NULL : TextDatumGetCString(values[i]);
	}
	return list;
}

static int
compare_names(const void *a, const void *b, void *arg)
{
	const FenceResourceList *list = (const FenceResourceList *) arg;

	return strcmp(list->resources[*(const int *) a],
				  list->resources[*(const int *) b]);
}

static void
refuse_two_tokens(const char *resource, int64 token, int64 other)
{
	fence_refuse(resource, FENCE_REFUSED_INVALID, other, true,
				 psprintf("two fencing tokens for resource \"%s\"", resource),
				 token != other ?
				 psprintf("The resource is named twice, with tokens %lld and %lld.",
						  (long long) token, (long long) other) :
				 psprintf("The resource is named twice with token %lld, for two different owners.",
						  (long long) token),
				 "Name each resource once, with the token of its lease.");
}

/*
 * fence_check_and_advance_list: accept every token of "list" for its
 * resource, taking the fence rows in bytewise order of the names, or
 * raise.  "previous" (list->n of them, or NULL) gets each resource's
 * previous mark, in the list's order.
 */
void
fence_check_and_advance_list(const FenceResourceList *list, int64 *previous)
{
	int		   *order;
	char	  **owners;
	int			i;
	int			next;

	if (list->n == 1)
	{
		int64		prev = fence_check_and_advance(list->resources[0],
												   list->tokens[0],
												   list->owners[0]);

		if (previous != NULL)
			previous[0] = prev;
		return;
	}

	order = palloc(sizeof(int) * Max(list->n, 1));
	for (i = 0; i < list->n; i++)
		order[i] = i;
	qsort_arg(order, list->n, sizeof(int), compare_names, (void *) list);

	/*
	 * Before any row is touched: a name given twice must say the same thing
	 * twice.  An owner given once counts for both places.
	 */
	owners = palloc(sizeof(char *) * Max(list->n, 1));
	for (i = 0; i < list->n; i = next)
	{
		int			first = order[i];
		char	   *owner = list->owners[first];

		for (next = i + 1; next < list->n &&
			 strcmp(list->resources[order[next]], list->resources[first]) == 0; next++)
		{
			int			j = order[next];

			if (list->tokens[j] != list->tokens[first] ||
				(owner != NULL && list->owners[j] != NULL &&
				 strcmp(owner, list->owners[j]) != 0))
				refuse_two_tokens(list->resources[first], list->tokens[first],
								  list->tokens[j]);
			if (owner == NULL)
				owner = list->owners[j];
		}
		owners[first] = owner;
	}

	for (i = 0; i < list->n; i = next)
	{
		int			first = order[i];
		int64		prev = fence_check_and_advance(list->resources[first],
												   list->tokens[first],
												   owners[first]);

		for (next = i; next < list->n &&
			 strcmp(list->resources[order[next]], list->resources[first]) == 0; next++)
			if (previous != NULL)
				previous[order[next]] = prev;
	}
	pfree(owners);
	pfree(order);
}

/*
 * fence.advance_many(resources text[], tokens bigint[], owners text[] DEFAULT NULL)
 *	  RETURNS bigint[]: the previous mark of each resource, in the order
 *	  given.
 */
PG_FUNCTION_INFO_V1(fence_advance_many);

Datum
fence_advance_many(PG_FUNCTION_ARGS)
{
	FenceResourceList list;
	int64	   *previous;
	Datum	   *marks;
	int			i;

	list = fence_resource_list(fcinfo, 0, 1, 2);
	fence_prevent_read_only("fence.advance_many()");
	previous = palloc(sizeof(int64) * Max(list.n, 1));
	fence_check_and_advance_list(&list, previous);

	marks = palloc(sizeof(Datum) * Max(list.n, 1));
	for (i = 0; i < list.n; i++)
		marks[i] = Int64GetDatum(previous[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(marks, list.n, INT8OID, sizeof(int64),
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}
