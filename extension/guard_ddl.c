/*
 * extension/guard_ddl.c
 *	  fence.guard_ddl(): the event trigger that refuses to give a table
 *	  protected in table mode a parent, or a row guard a trigger that fires
 *	  after it.
 *
 * A table protected without a token or key column (table mode) is guarded
 * by statement-level triggers, and PostgreSQL fires those only on the table
 * a statement names.  Once the table is a partition (ALTER TABLE p ATTACH
 * PARTITION t) or an inheritance child (ALTER TABLE t INHERIT p), every
 * INSERT routed through p, UPDATE or DELETE of p, COPY or MERGE into p
 * writes it without firing its guard.  fence.protect() refuses table mode
 * for a table that has a parent already; this trigger closes the other
 * ways in.  A row-level guard must be the last BEFORE ROW trigger of its
 * table (guard.c says why), and this trigger refuses the DDL that would
 * put another one after it.
 *
 * It fires at the end of every command that can give a table a parent or
 * a trigger: ALTER TABLE, CREATE TABLE (PARTITION OF and INHERITS, whose
 * new table gets the row triggers of a partitioned parent), CREATE TRIGGER,
 * ALTER TRIGGER (RENAME changes the order in which triggers fire), and
 * CREATE SCHEMA, whose elements (CREATE TABLE, CREATE TRIGGER) run under
 * its tag.  The function does not look at the tags of the commands but at
 * what they made or changed (pg_event_trigger_ddl_commands()): every table,
 * and the table of every trigger, with all the tables below it, is checked.
 * Row-level guards (key or token column) fire for rows written through a
 * parent, and the TRUNCATE guard fires when a parent's TRUNCATE reaches the
 * table, so those may have parents.
 *
 * A superuser can disable event triggers (ALTER EVENT TRIGGER ... DISABLE,
 * or the setting event_triggers where the server has it).  The guard checks
 * the order of triggers again when it fires, so a trigger made meanwhile
 * still cannot rewrite a checked row; a parent given meanwhile cannot be
 * caught at write time, since writes through the parent do not fire the
 * table's statement-level guard at all.
 *
 * The extension script creates the event trigger ENABLE ALWAYS, so that
 * session_replication_role does not skip it; only a superuser can alter or
 * drop an event trigger.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "commands/event_trigger.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "guard.h"

PG_FUNCTION_INFO_V1(fence_guard_ddl);

/*
 * table_guard_trigger: the name of a table-mode guard of "relid" (a
 * statement-level fence.guard() trigger on INSERT, UPDATE or DELETE), or
 * NULL.
 */
static char *
table_guard_trigger(Oid relid, Oid guard_oid)
{
	Relation	tgrel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	char	   *name = NULL;

	ScanKeyInit(&key, Anum_pg_trigger_tgrelid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 1, &key);
	while (name == NULL && HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_trigger tg = (Form_pg_trigger) GETSTRUCT(tup);

		if (tg->tgfoid == guard_oid && !TRIGGER_FOR_ROW(tg->tgtype) &&
			(TRIGGER_FOR_INSERT(tg->tgtype) || TRIGGER_FOR_UPDATE(tg->tgtype) ||
			 TRIGGER_FOR_DELETE(tg->tgtype)))
			name = pstrdup(NameStr(tg->tgname));
	}
	systable_endscan(scan);
	table_close(tgrel, AccessShareLock);
	return name;
}

/* parents_list: the relations that "relid" inherits from directly. */
static List *
parents_list(Oid relid)
{
	Relation	inhrel = table_open(InheritsRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *result = NIL;

	ScanKeyInit(&key, Anum_pg_inherits_inhrelid,
				BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(inhrel, InheritsRelidSeqnoIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
		result = lappend_oid(result, ((Form_pg_inherits) GETSTRUCT(tup))->inhparent);
	systable_endscan(scan);
	table_close(inhrel, AccessShareLock);
	return result;
}

/* trigger_relid: the table of trigger "tgoid", or InvalidOid if it is gone. */
static Oid
trigger_relid(Oid tgoid)
{
	Relation	tgrel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			relid = InvalidOid;

	ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(tgoid));
	scan = systable_beginscan(tgrel, TriggerOidIndexId, true, NULL, 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
		relid = ((Form_pg_trigger) GETSTRUCT(tup))->tgrelid;
	systable_endscan(scan);
	table_close(tgrel, AccessShareLock);
	return relid;
}

/* Refuse the command if "relid" is a table-mode protected table with a parent. */
static void
check_table(Oid relid, Oid guard_oid)
{
	List	   *parents;
	char	   *trigger;

	if (get_rel_relkind(relid) != RELKIND_RELATION)
		return;
	parents = parents_list(relid);
	if (parents == NIL || (trigger = table_guard_trigger(relid, guard_oid)) == NULL)
		return;

	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("table \"%s\" cannot both have parent \"%s\" and be protected without a token or key column",
					get_rel_name(relid), get_rel_name(linitial_oid(parents))),
			 errdetail("Statements that write it through \"%s\" would not fire its statement-level guard \"%s\".",
					   get_rel_name(linitial_oid(parents)), trigger),
			 errhint("Protect it with a token or key column first (fence.unprotect(), then fence.protect()), whose row-level guard also fires for rows written through a parent.")));
}

/*
 * Refuse the command if "relid" has a row-level guard and a BEFORE ROW
 * trigger that fires after it (guard.c says why).
 */
static void
check_trigger_order(Oid relid, Oid guard_oid)
{
	Relation	rel;
	TriggerDesc *trigdesc;
	int			i;

	if (get_rel_relkind(relid) != RELKIND_RELATION)
		return;
	rel = table_open(relid, AccessShareLock);
	trigdesc = rel->trigdesc;
	for (i = 0; trigdesc != NULL && i < trigdesc->numtriggers; i++)
	{
		const Trigger *guard = &trigdesc->triggers[i];
		const Trigger *later;

		if (guard->tgfoid != guard_oid || !TRIGGER_FOR_ROW(guard->tgtype) ||
			!TRIGGER_FOR_BEFORE(guard->tgtype))
			continue;
		later = fence_trigger_after(trigdesc, guard->tgname,
									guard->tgtype & (TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE));
		if (later != NULL)
			fence_report_trigger_after(RelationGetRelationName(rel),
									   guard->tgname, later->tgname);
	}
	table_close(rel, AccessShareLock);
}

/*
 * fence.guard_ddl() RETURNS event_trigger
 *	  Fired at ddl_command_end of the commands that can give a table a
 *	  parent or a trigger: ALTER TABLE, CREATE TABLE, CREATE TRIGGER, ALTER
 *	  TRIGGER, and CREATE SCHEMA, whose elements run under its tag.
 */
Datum
fence_guard_ddl(PG_FUNCTION_ARGS)
{
	Oid			guard_oid;
	uint64		i;
	List	   *tables = NIL;
	List	   *triggers = NIL;
	List	   *relids = NIL;
	ListCell   *lc;
	MemoryContext caller_cxt = CurrentMemoryContext;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fence DDL guard function was not called by the event trigger manager")));

	guard_oid = fence_guard_oid(get_func_namespace(fcinfo->flinfo->fn_oid));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");	/* internal error */
	if (SPI_execute("SELECT classid, objid FROM pg_catalog.pg_event_trigger_ddl_commands()",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the commands of the event");	/* internal error */
	/*
	 * Copy what the commands made or changed out of SPI's memory, which
	 * SPI_finish() frees, and look at them only once SPI is closed.
	 */
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Oid			classid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
															  SPI_tuptable->tupdesc,
															  1, &isnull));
		Oid			objid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
															SPI_tuptable->tupdesc,
															2, &isnull));
		MemoryContext spi_cxt;

		spi_cxt = MemoryContextSwitchTo(caller_cxt);
		if (classid == TriggerRelationId)
			triggers = lappend_oid(triggers, objid);
		else if (classid == RelationRelationId)
			tables = lappend_oid(tables, objid);
		MemoryContextSwitchTo(spi_cxt);
	}
	SPI_finish();

	/*
	 * The table itself (INHERIT, a new table) or a parent (ATTACH
	 * PARTITION), or the table of a trigger, with every table below it: a
	 * row trigger made on a partitioned table is cloned to its partitions.
	 */
	foreach(lc, triggers)
		tables = lappend_oid(tables, trigger_relid(lfirst_oid(lc)));
	foreach(lc, tables)
	{
		Oid			objid = lfirst_oid(lc);

		if (OidIsValid(objid))
			relids = list_concat(relids,
								 find_all_inheritors(objid, AccessShareLock, NULL));
	}

	foreach(lc, relids)
	{
		check_table(lfirst_oid(lc), guard_oid);
		check_trigger_order(lfirst_oid(lc), guard_oid);
	}

	PG_RETURN_VOID();
}
