/*
 * extension/guard.c
 *	  fence.guard(): the trigger that fences plain SQL writes to a table.
 *
 * fence.protect() (protect.c) installs this function with three trigger
 * arguments: the resource, the token column and the key column, '' standing
 * for "no column".  The arguments choose the mode:
 *
 *	- neither column: a BEFORE ... FOR EACH STATEMENT trigger that checks the
 *	  resource once per statement, so rows cost nothing extra;
 *	- key column: a BEFORE ... FOR EACH ROW trigger; the resource of a row is
 *	  resource || ':' || key, with ':' and '\' in the key escaped by a
 *	  backslash (key_resource.c says why the name is unambiguous); an UPDATE
 *	  that changes the key checks both;
 *	- token column: a BEFORE ... FOR EACH ROW trigger that stamps the accepted
 *	  token into the column and refuses an UPDATE or DELETE whose token is
 *	  lower than the one the row already holds, so a row never goes back to
 *	  an older holder, even after an administrator lowered the fence with
 *	  fence.reset().
 *
 * The token for a resource is the one accepted for it earlier in this
 * transaction (fence.advance(), fence.advance_many(), or an earlier guard
 * check), else the resource's entry in fence.tokens, else the one in the
 * settings fence.resource / fence.token / fence.owner when fence.resource
 * names exactly that resource.  The rule itself, and the row lock that makes
 * it hold against concurrent writers, is fence_check_and_advance() in rule.c.
 *
 * What the guard promises: no row of a protected table is inserted, updated
 * or deleted, and the table is not truncated, unless the rule accepted a
 * token in the writing transaction for every resource the row belonged to
 * before the write and belongs to after it.  A row whose key is null belongs
 * to no resource and is refused.  The guard runs as a BEFORE trigger, so
 * the check happens before the write and holds the fence row's lock until
 * the transaction ends, like any other check.
 *
 * A row guard checks the row it is handed, so it must be the last BEFORE
 * ROW trigger to see it: BEFORE triggers fire in name order, and one that
 * fires later could move the row to another key, or change its stamped
 * token, after the check.  So a row guard refuses to fire for INSERT or
 * UPDATE while an enabled BEFORE ROW trigger on that event sorts after it,
 * whoever made it and however (a role with the TRIGGER privilege, ALTER
 * TRIGGER ... RENAME, a trigger older than the guard, DDL done while event
 * triggers were off); fence.protect() and the DDL guard (guard_ddl.c) refuse
 * such a trigger earlier, where they see it (guard_order.c says which
 * triggers those are).  The triggers are read once per statement, so rows
 * pay nothing for this.
 *
 * Row triggers keep their configuration, the last key they formatted and
 * the last resource they accepted in fn_extra, which lives as long as the
 * statement: a bulk UPDATE of one resource resolves the columns once and
 * checks the fence once, and every further row costs a datum and a string
 * comparison.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "errcodes.h"
#include "fence_ext.h"
#include "guard.h"

PG_FUNCTION_INFO_V1(fence_guard);

/* What fn_extra holds for one guard trigger during one statement. */
typedef struct GuardState
{
	Oid			tgoid;			/* the trigger this state was built for */
	MemoryContext mcxt;			/* fn_mcxt: lives as long as the statement */
	char	   *resource;		/* base resource, the trigger's first argument */
	AttrNumber	token_attnum;	/* token column, or InvalidAttrNumber */
	AttrNumber	key_attnum;		/* key column, or InvalidAttrNumber */
	FmgrInfo	key_output;		/* output function of the key column's type */
	bool		key_byval;
	int16		key_len;

	/*
	 * The name of a BEFORE ROW trigger that fires after this guard for
	 * INSERT, or for UPDATE, or NULL: the guard refuses those events (see
	 * the banner).
	 */
	char	   *later_insert;
	char	   *later_update;

	/*
	 * The key formatted last and its resource, so that the rows of one key
	 * cost a datum comparison instead of an output function call.
	 */
	bool		have_key;
	Datum		key_datum;
	char	   *key_resource;

	/*
	 * The resource accepted last, with its token.  Valid only while the
	 * registry has not changed since (fence_registry_generation): a
	 * subtransaction that rolled back took its fence row lock and its
	 * registration with it, one that committed may have registered a newer
	 * token, and the next transaction starts afresh.
	 */
	bool		have_last;
	uint64		last_generation;
	StringInfoData last_resource;
	int64		last_token;
} GuardState;

static GuardState *guard_state(FunctionCallInfo fcinfo, TriggerData *trigdata);
static AttrNumber guard_column(Relation rel, Trigger *trigger,
							   const char *colname, const char *role);
static int64 guard_accept(GuardState *state, const char *resource);
static int64 guard_setting_token(const char *resource);
static char *guard_row_resource(GuardState *state, Relation rel, HeapTuple tuple);
static bool guard_same_key(GuardState *state, Relation rel, HeapTuple oldtuple,
						   HeapTuple newtuple);
static void guard_check_row_token(GuardState *state, Relation rel,
								  HeapTuple oldtuple, const char *resource,
								  int64 token);
static HeapTuple guard_stamp(GuardState *state, Relation rel, HeapTuple tuple,
							 int64 token);
static Size guard_attr_offset(HeapTuple tuple, TupleDesc tupdesc, int attnum);
static char *guard_later_trigger(Relation rel, Trigger *guard, int16 tgevent);

/*
 * fence.guard() RETURNS trigger
 */
Datum
fence_guard(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	TriggerEvent event;
	GuardState *state;
	HeapTuple	oldtuple;
	HeapTuple	newtuple;
	char	   *resource;
	char	   *new_resource;
	int64		token;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fence guard function was not called by the trigger manager"),
				 errhint("Install it on a table with fence.protect().")));

	rel = trigdata->tg_relation;
	event = trigdata->tg_event;

	if (!TRIGGER_FIRED_BEFORE(event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fence guard trigger \"%s\" on \"%s\" must be fired BEFORE the write",
						trigdata->tg_trigger->tgname, RelationGetRelationName(rel)),
				 errhint("Install it with fence.protect().")));

	state = guard_state(fcinfo, trigdata);

	if (!TRIGGER_FIRED_FOR_ROW(event))
	{
		/* table-level guard, or the TRUNCATE guard of any mode */
		(void) guard_accept(state, state->resource);
		return PointerGetDatum(NULL);
	}

	if (TRIGGER_FIRED_BY_INSERT(event))
	{
		if (unlikely(state->later_insert != NULL))
			fence_report_trigger_after(ERROR, RelationGetRelationName(rel),
									   trigdata->tg_trigger->tgname,
									   state->later_insert);
		newtuple = trigdata->tg_trigtuple;
		resource = guard_row_resource(state, rel, newtuple);
		token = guard_accept(state, resource);
		return PointerGetDatum(guard_stamp(state, rel, newtuple, token));
	}

	if (TRIGGER_FIRED_BY_DELETE(event))
	{
		oldtuple = trigdata->tg_trigtuple;
		resource = guard_row_resource(state, rel, oldtuple);
		token = guard_accept(state, resource);
		guard_check_row_token(state, rel, oldtuple, resource, token);
		return PointerGetDatum(oldtuple);
	}

	if (TRIGGER_FIRED_BY_UPDATE(event))
	{
		if (unlikely(state->later_update != NULL))
			fence_report_trigger_after(ERROR, RelationGetRelationName(rel),
									   trigdata->tg_trigger->tgname,
									   state->later_update);
		oldtuple = trigdata->tg_trigtuple;
		newtuple = trigdata->tg_newtuple;

		if (state->key_attnum != InvalidAttrNumber &&
			!guard_same_key(state, rel, oldtuple, newtuple))
		{
			/* copied: the next call replaces the cached key resource */
			resource = pstrdup(guard_row_resource(state, rel, oldtuple));
			new_resource = guard_row_resource(state, rel, newtuple);
		}
		else
			resource = new_resource = guard_row_resource(state, rel, oldtuple);

		if (resource == new_resource || strcmp(resource, new_resource) == 0)
			token = guard_accept(state, resource);
		else
		{
			/*
			 * The row moves from one key to another: the writer must hold
			 * both.  Lock the two fence rows in name order, so that two
			 * writers moving rows in opposite directions cannot deadlock.
			 * The row's old token is compared with the old key's token; the
			 * new key's token is stamped.
			 */
			int64		old_token;

			if (strcmp(resource, new_resource) < 0)
			{
				old_token = guard_accept(state, resource);
				token = guard_accept(state, new_resource);
			}
			else
			{
				token = guard_accept(state, new_resource);
				old_token = guard_accept(state, resource);
			}
			guard_check_row_token(state, rel, oldtuple, resource, old_token);
			return PointerGetDatum(guard_stamp(state, rel, newtuple, token));
		}
		guard_check_row_token(state, rel, oldtuple, resource, token);
		return PointerGetDatum(guard_stamp(state, rel, newtuple, token));
	}

	elog(ERROR, "fence guard fired by unexpected event %u", event);	/* internal error */
	return PointerGetDatum(NULL);	/* keep compiler quiet */
}

/*
 * guard_state: the configuration of the trigger being fired, read from its
 * arguments and the table's descriptor on the first call of a statement and
 * kept in fn_extra for the rest of it.  A guard whose arguments do not fit
 * its level is refused here rather than silently checking too little.
 */
static GuardState *
guard_state(FunctionCallInfo fcinfo, TriggerData *trigdata)
{
	Trigger    *trigger = trigdata->tg_trigger;
	Relation	rel = trigdata->tg_relation;
	GuardState *state = (GuardState *) fcinfo->flinfo->fn_extra;
	MemoryContext oldcxt;
	bool		row_level = TRIGGER_FIRED_FOR_ROW(trigdata->tg_event);

	if (state != NULL && state->tgoid == trigger->tgoid)
		return state;

	/*
	 * Once per statement: a read-only transaction can still write a
	 * temporary table, but not check its fence (rule.c).
	 */
	fence_prevent_read_only("fence.guard()");

	if (trigger->tgnargs != 3 || trigger->tgargs[0][0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fence guard trigger \"%s\" on \"%s\" has invalid arguments",
						trigger->tgname, RelationGetRelationName(rel)),
				 errdetail("A guard takes three arguments: a non-empty resource, the token column and the key column, '' for no column."),
				 errhint("Install it with fence.protect().")));

	oldcxt = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	if (state == NULL)
	{
		state = palloc0(sizeof(GuardState));
		state->mcxt = fcinfo->flinfo->fn_mcxt;
		initStringInfo(&state->last_resource);
	}
	else
	{
		pfree(state->resource);
		if (state->later_insert != NULL)
			pfree(state->later_insert);
		if (state->later_update != NULL)
			pfree(state->later_update);
	}
	state->have_last = false;
	state->have_key = false;
	state->tgoid = InvalidOid;	/* until fully built */
	state->resource = pstrdup(trigger->tgargs[0]);
	state->token_attnum = InvalidAttrNumber;
	state->key_attnum = InvalidAttrNumber;
	state->later_insert = NULL;
	state->later_update = NULL;

	/* a TRUNCATE guard checks the table's resource whatever the mode */
	if (row_level)
	{
		if (trigger->tgargs[1][0] == '\0' && trigger->tgargs[2][0] == '\0')
			ereport(ERROR,
					(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
					 errmsg("fence guard trigger \"%s\" on \"%s\" without a token or key column must be fired FOR EACH STATEMENT",
							trigger->tgname, RelationGetRelationName(rel)),
					 errhint("Install it with fence.protect().")));
		if (trigger->tgargs[1][0] != '\0')
		{
			state->token_attnum = guard_column(rel, trigger, trigger->tgargs[1], "token");
			if (TupleDescAttr(RelationGetDescr(rel), state->token_attnum - 1)->atttypid != INT8OID)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("token column \"%s\" of protected table \"%s\" is not of type bigint",
								trigger->tgargs[1], RelationGetRelationName(rel)),
						 errhint("Call fence.unprotect() and fence.protect() again with a bigint column.")));
		}
		if (trigger->tgargs[2][0] != '\0')
		{
			Oid			typoutput;
			bool		typisvarlena;

			Form_pg_attribute attr;

			fence_check_key_base(state->resource);
			state->key_attnum = guard_column(rel, trigger, trigger->tgargs[2], "key");
			attr = TupleDescAttr(RelationGetDescr(rel), state->key_attnum - 1);
			if (!fence_key_type_allowed(attr->atttypid))
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("key column \"%s\" of protected table \"%s\" has type %s, which cannot name a resource",
								trigger->tgargs[2], RelationGetRelationName(rel),
								format_type_be(attr->atttypid)),
						 errdetail_internal("%s", fence_key_type_detail()),
						 errhint("Call fence.unprotect() and fence.protect() again with a key column of one of these types.")));
			getTypeOutputInfo(attr->atttypid, &typoutput, &typisvarlena);
			fmgr_info_cxt(typoutput, &state->key_output, fcinfo->flinfo->fn_mcxt);
			state->key_byval = attr->attbyval;
			state->key_len = attr->attlen;
		}
		state->later_insert = guard_later_trigger(rel, trigger, TRIGGER_TYPE_INSERT);
		state->later_update = guard_later_trigger(rel, trigger, TRIGGER_TYPE_UPDATE);
	}
	else if (trigger->tgargs[1][0] != '\0' || trigger->tgargs[2][0] != '\0')
	{
		if (!TRIGGER_FIRED_BY_TRUNCATE(trigdata->tg_event))
			ereport(ERROR,
					(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
					 errmsg("fence guard trigger \"%s\" on \"%s\" with a token or key column must be fired FOR EACH ROW",
							trigger->tgname, RelationGetRelationName(rel)),
					 errhint("Install it with fence.protect().")));
	}

	state->tgoid = trigger->tgoid;
	fcinfo->flinfo->fn_extra = state;
	MemoryContextSwitchTo(oldcxt);
	return state;
}

/*
 * guard_later_trigger: the name of a trigger that fires after row guard
 * "guard" of "rel" on "tgevent", copied into the current memory context
 * (the relation's trigger descriptor may be rebuilt while the statement
 * runs), or NULL.
 */
static char *
guard_later_trigger(Relation rel, Trigger *guard, int16 tgevent)
{
	const Trigger *later = fence_trigger_after(rel->trigdesc, guard->tgname,
											   tgevent);

	return later != NULL ? pstrdup(later->tgname) : NULL;
}

/*
 * guard_column: the attribute number of column "colname" of "rel", which
 * the trigger names as its "role" ("token" or "key") column.  A column that
 * was dropped or renamed after fence.protect(), or made again as a generated
 * column (which fence.protect() refuses), stops every write rather than
 * letting them through unchecked.
 */
static AttrNumber
guard_column(Relation rel, Trigger *trigger, const char *colname,
			 const char *role)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	int			i;

	for (i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(tupdesc, i);

		if (attr->attisdropped || strcmp(NameStr(attr->attname), colname) != 0)
			continue;
		if (attr->attgenerated != '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
					 errmsg("%s column \"%s\" of protected table \"%s\" is a generated column",
							role, colname, RelationGetRelationName(rel)),
					 errdetail("Generated columns are computed after BEFORE triggers run, so trigger \"%s\" cannot check it.",
							   trigger->tgname),
					 errhint("Call fence.unprotect() and fence.protect() again with a column that is not generated.")));
		return attr->attnum;
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("%s column \"%s\" of protected table \"%s\" does not exist",
					role, colname, RelationGetRelationName(rel)),
			 errdetail("Trigger \"%s\" names it.", trigger->tgname),
			 errhint("Call fence.unprotect() and fence.protect() again after renaming or dropping a fenced column.")));
	return InvalidAttrNumber;	/* keep compiler quiet */
}

/*
 * guard_accept: have the rule accept the token this transaction carries for
 * "resource", and return that token.  Raises LF001, LF002 or LF003.
 */
static int64
guard_accept(GuardState *state, const char *resource)
{
	FenceHash128 name;
	int64		token;
	const FenceHash128 *owner;

	/*
	 * The same statement already accepted this resource and nothing was
	 * registered or rolled back since: its fence row is still locked by us,
	 * nothing to do.
	 */
	if (state->have_last &&
		state->last_generation == fence_registry_generation() &&
		strcmp(state->last_resource.data, resource) == 0)
		return state->last_token;

	/*
	 * Accepted earlier in this transaction (fence.advance, or this guard),
	 * and its row lock is still ours: what fence_check_and_advance() would
	 * find first, without hashing the name twice.  Otherwise, the token in
	 * the settings, checked by the rule.
	 */
	name = fence_registry_hash(resource);
	if (!fence_registry_find(&name, &token, &owner) || token == 0)
	{
		token = guard_setting_token(resource);
		(void) fence_check_and_advance(resource, token,
									   fence_session_owner(resource));
	}

	state->have_last = true;
	state->last_generation = fence_registry_generation();
	resetStringInfo(&state->last_resource);
	appendStringInfoString(&state->last_resource, resource);
	state->last_token = token;
	return token;
}

/*
 * guard_setting_token: the token the settings give for "resource": its
 * entry in fence.tokens (tokens.c), else fence.token when fence.resource
 * names it.  fence.token is parsed strictly (fence_parse_token()).
 */
static int64
guard_setting_token(const char *resource)
{
	const char *setting_resource = fence_setting_resource;
	const char *text = fence_setting_token;
	const char *owner;
	int64		token;

	if (fence_tokens_find(resource, &token, &owner))
		return token;			/* 0 or negative: LF003 from the rule */

	if (setting_resource == NULL || setting_resource[0] == '\0')
		fence_refuse(resource, FENCE_REFUSED_MISSING, 0, false,
					 psprintf("missing fencing token for resource \"%s\"", resource),
					 "No token was accepted for this resource in this transaction, fence.tokens has no entry for it, and fence.resource is not set.",
					 "Call fence.advance() in this transaction, or set fence.tokens (or fence.resource and fence.token) with SET LOCAL, SET or PGOPTIONS.");
	if (strcmp(setting_resource, resource) != 0)
		fence_refuse(resource, FENCE_REFUSED_MISSING, 0, false,
					 psprintf("missing fencing token for resource \"%s\"", resource),
					 psprintf("No token was accepted for this resource in this transaction, fence.tokens has no entry for it, and fence.resource is \"%s\".",
							  setting_resource),
					 "Call fence.advance() in this transaction, or set fence.tokens (or fence.resource and fence.token) with SET LOCAL, SET or PGOPTIONS.");
	if (text == NULL)
		fence_refuse(resource, FENCE_REFUSED_MISSING, 0, false,
					 psprintf("missing fencing token for resource \"%s\"", resource),
					 "The setting fence.resource names this resource, but fence.token is not set.",
					 "Set fence.token to the token of your lease.");

	if (!fence_parse_token(text, &token))
		fence_refuse(resource, FENCE_REFUSED_INVALID, 0, false,
					 psprintf("invalid fencing token \"%s\" for resource \"%s\"", text, resource),
					 "The setting fence.token must be a whole number from 1 to 9223372036854775807, written with digits only.",
					 "Set fence.token to the token of your lease.");
	return token;
}

/*
 * guard_row_resource: the resource a row belongs to: the trigger's resource,
 * or with a key column the row's name (fence_key_resource_name()), which
 * must fit the length limit of resource names.  The result belongs to
 * "state" and is valid until the next call.
 */
static char *
guard_row_resource(GuardState *state, Relation rel, HeapTuple tuple)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	Datum		key;
	bool		isnull;
	char	   *text;
	char	   *name;
	MemoryContext oldcxt;

	if (state->key_attnum == InvalidAttrNumber)
		return state->resource;

	key = heap_getattr(tuple, state->key_attnum, tupdesc, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("null value in key column \"%s\" of protected table \"%s\"",
						NameStr(TupleDescAttr(tupdesc, state->key_attnum - 1)->attname),
						RelationGetRelationName(rel)),
				 errdetail("The row's fencing resource is \"%s:\" followed by its key, so the key must not be null.",
						   state->resource)));

	if (state->have_key &&
		datumIsEqual(key, state->key_datum, state->key_byval, state->key_len))
		return state->key_resource;

	text = OutputFunctionCall(&state->key_output, key);
	name = fence_key_resource_name(state->resource, text);
	if (strlen(name) > FENCE_MAX_RESOURCE_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("resource name of a row of protected table \"%s\" is too long",
						RelationGetRelationName(rel)),
				 errdetail("The row's resource, \"%s:\" followed by the key in column \"%s\", has %zu bytes; the limit is %d.",
						   state->resource,
						   NameStr(TupleDescAttr(tupdesc, state->key_attnum - 1)->attname),
						   strlen(name), FENCE_MAX_RESOURCE_LEN)));

	oldcxt = MemoryContextSwitchTo(state->mcxt);
	if (state->have_key)
	{
		if (!state->key_byval)
			pfree(DatumGetPointer(state->key_datum));
		pfree(state->key_resource);
	}
	state->key_datum = datumCopy(key, state->key_byval, state->key_len);
	state->key_resource = pstrdup(name);
	state->have_key = true;
	MemoryContextSwitchTo(oldcxt);
	return state->key_resource;
}

/*
 * guard_same_key: whether an UPDATE leaves the key column as it was, judged
 * by its binary value.  Equal text forms of unequal binaries are caught by
 * the caller comparing the resources.
 */
static bool
guard_same_key(GuardState *state, Relation rel, HeapTuple oldtuple,
			   HeapTuple newtuple)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	Datum		oldkey;
	Datum		newkey;
	bool		oldnull;
	bool		newnull;

	oldkey = heap_getattr(oldtuple, state->key_attnum, tupdesc, &oldnull);
	newkey = heap_getattr(newtuple, state->key_attnum, tupdesc, &newnull);
	return !oldnull && !newnull &&
		datumIsEqual(oldkey, newkey, state->key_byval, state->key_len);
}

/*
 * guard_check_row_token: refuse to overwrite or delete a row that holds a
 * higher token than "token".  The fence row alone cannot promise this once
 * an administrator has lowered it with fence.reset(); the row can.  A row
 * without a token (null, e.g. written before fence.protect()) is anyone's.
 */
static void
guard_check_row_token(GuardState *state, Relation rel, HeapTuple oldtuple,
					  const char *resource, int64 token)
{
	Datum		stored;
	bool		isnull;

	if (state->token_attnum == InvalidAttrNumber)
		return;

	stored = heap_getattr(oldtuple, state->token_attnum,
						  RelationGetDescr(rel), &isnull);
	if (!isnull && DatumGetInt64(stored) > token)
		fence_refuse(resource, FENCE_REFUSED_STALE, token, true,
					 psprintf("stale fencing token for resource \"%s\"", resource),
					 psprintf("Token " INT64_FORMAT " is lower than token " INT64_FORMAT " stored in column \"%s\" of the row.",
							  token, DatumGetInt64(stored),
							  NameStr(TupleDescAttr(RelationGetDescr(rel), state->token_attnum - 1)->attname)),
					 "Acquire a new lease and retry with its token.");
}

/*
 * guard_stamp: the row to write, with "token" in the token column.  The row
 * is copied only when the column does not hold that token already.
 *
 * This runs for every row of a bulk UPDATE by a new holder, so the common
 * case avoids heap_modify_tuple_by_cols(), which takes the row apart and
 * builds it again only for the executor to take it apart once more: when
 * the column is present and not null, its eight bytes sit at a fixed place
 * in the row, and a copy of the row with those bytes replaced is the same
 * row that heap_modify_tuple_by_cols() would build.
 */
static HeapTuple
guard_stamp(GuardState *state, Relation rel, HeapTuple tuple, int64 token)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	Datum		stored;
	bool		isnull;
	Datum		value = Int64GetDatum(token);
	bool		nulls = false;
	int			attnum = state->token_attnum;

	if (attnum == InvalidAttrNumber)
		return tuple;

	if (attnum <= HeapTupleHeaderGetNatts(tuple->t_data))
	{
		stored = heap_getattr(tuple, attnum, tupdesc, &isnull);
		if (!isnull)
		{
			HeapTuple	copy;

			if (DatumGetInt64(stored) == token)
				return tuple;
			copy = heap_copytuple(tuple);
			memcpy((char *) copy->t_data + copy->t_data->t_hoff +
				   guard_attr_offset(copy, tupdesc, attnum),
				   &token, sizeof(int64));
			return copy;
		}
	}

	/* null, or missing from a row older than the column: build it anew */
	return heap_modify_tuple_by_cols(tuple, tupdesc, 1, &attnum, &value, &nulls);
}

/*
 * guard_attr_offset: where the value of attribute "attnum" (present, not
 * null, fixed length) starts in the data area of "tuple": the walk over the
 * attributes before it that heap_deform_tuple() makes.
 */
static Size
guard_attr_offset(HeapTuple tuple, TupleDesc tupdesc, int attnum)
{
	HeapTupleHeader tup = tuple->t_data;
	char	   *tp = (char *) tup + tup->t_hoff;
	bool		hasnulls = HeapTupleHasNulls(tuple);
	Size		off = 0;
	int			i;

	for (i = 0; i < attnum - 1; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		if (hasnulls && att_isnull(i, tup->t_bits))
			continue;
		off = att_align_pointer(off, att->attalign, att->attlen, tp + off);
		off = att_addlength_pointer(off, att->attlen, tp + off);
	}
	return att_align_nominal(off, TupleDescAttr(tupdesc, attnum - 1)->attalign);
}
