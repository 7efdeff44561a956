/*
 * extension/protect.c
 *	  fence.protect() and fence.unprotect(): install and remove the guard
 *	  trigger (guard.c) on a table.
 *
 * protect() checks everything a guard needs when it is installed, so that a
 * mistake shows up in the migration that protects the table and not at the
 * first write: the table exists, is an ordinary table the caller owns, and
 * the named columns exist with usable types.  It then creates two triggers,
 * both ENABLE ALWAYS so that session_replication_role = replica does not
 * skip them:
 *
 *	fence_guard				BEFORE INSERT OR UPDATE OR DELETE, per statement
 *							without columns, per row with a token or key column
 *	fence_guard_truncate	BEFORE TRUNCATE, per statement, for the resource
 *							itself (a TRUNCATE has no rows to key on)
 *
 * A table that has a parent cannot be protected in table mode, since its
 * statement-level guard would not fire for writes through the parent; the
 * event trigger in guard_ddl.c keeps a table protected that way from getting
 * a parent later.  In key mode the resource may not contain ':', which keeps
 * the names of rows unambiguous (key_resource.c).  A row-level guard must
 * be the last BEFORE ROW trigger on INSERT and UPDATE (guard.c says why),
 * so a table with a trigger that would fire after it is refused.
 *
 * The DDL runs through SPI with the caller's privileges; these functions are
 * not SECURITY DEFINER.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "compat.h"
#include "fence_ext.h"
#include "guard.h"

PG_FUNCTION_INFO_V1(fence_protect);
PG_FUNCTION_INFO_V1(fence_unprotect);
PG_FUNCTION_INFO_V1(fence_reprotect_all);

static Relation protect_open(Oid relid, Oid fence_nsp);
static void protect_check_column(Relation rel, const char *colname,
								 const char *role);
static int	protect_count_guards(Relation rel, Oid guard_oid);
static void protect_execute(const char *sql);

/*
 * fence.protect(tbl regclass, resource text, token_column name DEFAULT NULL,
 *				 key_column name DEFAULT NULL) RETURNS void
 */
Datum
fence_protect(PG_FUNCTION_ARGS)
{
	Oid			fence_nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	char	   *fence_schema = get_namespace_name(fence_nsp);
	Relation	rel;
	char	   *resource;
	char	   *token_column = NULL;
	char	   *key_column = NULL;
	char	   *table;
	char	   *guard;
	bool		row_level;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table to protect must not be null")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("resource must not be null")));
	resource = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (!PG_ARGISNULL(2))
		token_column = pstrdup(NameStr(*PG_GETARG_NAME(2)));
	if (!PG_ARGISNULL(3))
		key_column = pstrdup(NameStr(*PG_GETARG_NAME(3)));
	row_level = (token_column != NULL || key_column != NULL);
	if (key_column != NULL)
		fence_check_key_base(resource);
	else
		fence_check_resource_name(resource);

	rel = protect_open(PG_GETARG_OID(0), fence_nsp);

	if (protect_count_guards(rel, fence_guard_oid(fence_nsp)) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("table \"%s\" is already protected",
						RelationGetRelationName(rel)),
				 errhint("Call fence.unprotect() first to change how it is protected.")));

	if (token_column != NULL)
		protect_check_column(rel, token_column, "token");
	if (key_column != NULL)
		protect_check_column(rel, key_column, "key");
	if (token_column != NULL && key_column != NULL &&
		strcmp(token_column, key_column) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("token column and key column must be different columns")));

	if (row_level)
	{
		const Trigger *later = fence_trigger_after(rel->trigdesc, FENCE_GUARD_TRIGGER,
												   TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE);

		if (later != NULL)
			fence_report_trigger_after(ERROR, RelationGetRelationName(rel),
									   FENCE_GUARD_TRIGGER, later->tgname);
	}

	/*
	 * Statement triggers fire only on the table a statement names: a write
	 * through an inheritance parent or to a partition through its partitioned
	 * table would not fire them.  Row triggers fire either way.
	 */
	if (!row_level && has_superclass(RelationGetRelid(rel)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg(rel->rd_rel->relispartition ?
						"cannot protect partition \"%s\" without a token or key column" :
						"cannot protect inheritance child \"%s\" without a token or key column",
						RelationGetRelationName(rel)),
				 errdetail("Statements that write it through its parent would not fire its statement-level guard."),
				 errhint("Protect it with a token or key column, whose row-level guard also fires for rows written through the parent.")));

	table = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
									   RelationGetRelationName(rel));
	guard = quote_qualified_identifier(fence_schema, "guard");

	/* keep the lock, but ALTER TABLE refuses a table this session holds open */
	relation_close(rel, NoLock);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");	/* internal error */
	protect_execute(psprintf("CREATE TRIGGER %s BEFORE INSERT OR UPDATE OR DELETE ON %s "
							 "FOR EACH %s EXECUTE FUNCTION %s(%s, %s, %s)",
							 FENCE_GUARD_TRIGGER, table,
							 row_level ? "ROW" : "STATEMENT", guard,
							 quote_literal_cstr(resource),
							 quote_literal_cstr(token_column ? token_column : ""),
							 quote_literal_cstr(key_column ? key_column : "")));
	protect_execute(psprintf("CREATE TRIGGER %s BEFORE TRUNCATE ON %s "
							 "FOR EACH STATEMENT EXECUTE FUNCTION %s(%s, '', '')",
							 FENCE_GUARD_TRUNCATE_TRIGGER, table, guard,
							 quote_literal_cstr(resource)));
	protect_execute(psprintf("ALTER TABLE %s ENABLE ALWAYS TRIGGER %s, "
							 "ENABLE ALWAYS TRIGGER %s",
							 table, FENCE_GUARD_TRIGGER, FENCE_GUARD_TRUNCATE_TRIGGER));
	SPI_finish();

	PG_RETURN_VOID();
}

/*
 * fence.unprotect(tbl regclass) RETURNS void
 *
 * Drops every trigger on the table that runs fence.guard(), whatever its
 * name, so that a hand-made guard does not survive either.
 */
Datum
fence_unprotect(PG_FUNCTION_ARGS)
{
	Oid			fence_nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	Oid			guard_oid = fence_guard_oid(fence_nsp);
	Relation	rel;
	char	   *table;
	List	   *names = NIL;
	ListCell   *lc;
	int			i;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table to unprotect must not be null")));

	rel = protect_open(PG_GETARG_OID(0), fence_nsp);
	if (protect_count_guards(rel, guard_oid) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("table \"%s\" is not protected",
						RelationGetRelationName(rel))));

	for (i = 0; i < rel->trigdesc->numtriggers; i++)
		if (rel->trigdesc->triggers[i].tgfoid == guard_oid)
			names = lappend(names, pstrdup(rel->trigdesc->triggers[i].tgname));

	table = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
									   RelationGetRelationName(rel));
	relation_close(rel, NoLock);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");	/* internal error */
	foreach(lc, names)
		protect_execute(psprintf("DROP TRIGGER %s ON %s",
								 quote_identifier((char *) lfirst(lc)), table));
	SPI_finish();

	PG_RETURN_VOID();
}

/*
 * fence.reprotect_all() RETURNS bigint
 *
 * Sets every trigger of this database that runs fence.guard() back to
 * ENABLE ALWAYS, and returns how many tables it changed.  pg_restore
 * --disable-triggers (which a data-only restore into protected tables
 * needs) ends with ALTER TABLE ... ENABLE TRIGGER ALL, which leaves the
 * guards at plain ENABLE, where session_replication_role = replica skips
 * them; so does any ENABLE TRIGGER ALL.  Like fence.protect() it runs with
 * the caller's privileges: ALTER TABLE needs the owner of each table (or a
 * superuser), and the event trigger still refuses a table where a trigger
 * enabled meanwhile fires after its guard.
 */
Datum
fence_reprotect_all(PG_FUNCTION_ARGS)
{
	Oid			guard_oid = fence_guard_oid(get_func_namespace(fcinfo->flinfo->fn_oid));
	Relation	tgrel;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *relids = NIL;
	List	   *names = NIL;
	ListCell   *lr;
	ListCell   *ln;
	int64		tables = 0;
	StringInfoData sql;

	/* the guards not ENABLE ALWAYS, in the order of their tables */
	tgrel = table_open(TriggerRelationId, AccessShareLock);
	scan = systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_trigger tg = (Form_pg_trigger) GETSTRUCT(tup);

		if (tg->tgfoid != guard_oid || tg->tgenabled == TRIGGER_FIRES_ALWAYS)
			continue;
		relids = lappend_oid(relids, tg->tgrelid);
		names = lappend(names, pstrdup(NameStr(tg->tgname)));
	}
	systable_endscan(scan);
	table_close(tgrel, AccessShareLock);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");	/* internal error */
	initStringInfo(&sql);
	forboth(lr, relids, ln, names)
	{
		Oid			relid = lfirst_oid(lr);

		if (sql.len == 0)
			appendStringInfo(&sql, "ALTER TABLE %s",
							 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
														get_rel_name(relid)));
		else
			appendStringInfoChar(&sql, ',');
		appendStringInfo(&sql, " ENABLE ALWAYS TRIGGER %s",
						 quote_identifier((char *) lfirst(ln)));

		/* one ALTER TABLE per table */
		if (lnext(relids, lr) == NULL || lfirst_oid(lnext(relids, lr)) != relid)
		{
			protect_execute(sql.data);
			resetStringInfo(&sql);
			tables++;
		}
	}
	SPI_finish();

	PG_RETURN_INT64(tables);
}

/*
 * protect_open: open and lock the table "relid" for fence.protect() or
 * fence.unprotect(), after checking that the caller owns it.  The lock is
 * the one CREATE TRIGGER takes, so nobody writes the table while its guard
 * changes.
 */
static Relation
protect_open(Oid relid, Oid fence_nsp)
{
	Relation	rel;
	char		relkind;

	/* check before locking, so that a non-owner cannot lock the table */
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!fence_rel_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER,
					   get_relkind_objtype(get_rel_relkind(relid)),
					   get_rel_name(relid));

	rel = try_relation_open(relid, ShareRowExclusiveLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));

	relkind = rel->rd_rel->relkind;
	if (relkind == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot protect partitioned table \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("Statement-level triggers of a partitioned table do not fire for statements that name a partition."),
				 errhint("Protect each partition instead.")));
	if (relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", RelationGetRelationName(rel)),
				 errdetail("Only ordinary tables can be protected.")));
	if (RelationGetNamespace(rel) == fence_nsp)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot protect \"%s\", a table of the fence extension",
						RelationGetRelationName(rel))));
	return rel;
}

/*
 * protect_check_column: refuse a column that the guard could not use as its
 * "role" ("token" or "key") column.  The guard checks again when it fires,
 * in case the table changed since.
 */
static void
protect_check_column(Relation rel, const char *colname, const char *role)
{
	AttrNumber	attnum = get_attnum(RelationGetRelid(rel), colname);
	Form_pg_attribute attr;

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("%s column \"%s\" of table \"%s\" does not exist",
						role, colname, RelationGetRelationName(rel))));
	if (attnum < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
				 errmsg("cannot use system column \"%s\" as %s column",
						colname, role)));

	attr = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
	if (attr->attgenerated != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
				 errmsg("cannot use generated column \"%s\" as %s column",
						colname, role),
				 errdetail("Generated columns are computed after BEFORE triggers run.")));

	if (strcmp(role, "token") == 0)
	{
		if (attr->atttypid != INT8OID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("token column \"%s\" must be of type bigint", colname),
					 errdetail("Column \"%s\" of table \"%s\" is of type %s.",
							   colname, RelationGetRelationName(rel),
							   format_type_be(attr->atttypid))));
		return;
	}

	if (!fence_key_type_allowed(attr->atttypid))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("key column \"%s\" has type %s, which cannot name a resource",
						colname, format_type_be(attr->atttypid)),
				 errdetail_internal("%s", fence_key_type_detail()),
				 errhint("Use a key column of one of these types.")));
}

/* fence_guard_oid: the OID of fence.guard() in the extension's schema. */
Oid
fence_guard_oid(Oid fence_nsp)
{
	List	   *name = list_make2(makeString(get_namespace_name(fence_nsp)),
								  makeString("guard"));

	return LookupFuncName(name, 0, NULL, false);
}

/* protect_count_guards: how many triggers on "rel" run fence.guard(). */
static int
protect_count_guards(Relation rel, Oid guard_oid)
{
	int			count = 0;
	int			i;

	if (rel->trigdesc == NULL)
		return 0;
	for (i = 0; i < rel->trigdesc->numtriggers; i++)
		if (rel->trigdesc->triggers[i].tgfoid == guard_oid)
			count++;
	return count;
}

/* protect_execute: run one utility statement through SPI. */
static void
protect_execute(const char *sql)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute failed for \"%s\": %s", sql,
			 SPI_result_code_string(rc));	/* internal error */
}
