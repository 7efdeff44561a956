/*
 * extension/guard_ddl.c
 *	  fence.guard_ddl(): the event trigger that refuses to give a table
 *	  protected in table mode a parent, a row guard a trigger that fires
 *	  after it, or a guard a replacement by a role that does not own it.
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
 * what they made or changed, as the event trigger manager collected them
 * (pg_event_trigger_ddl_commands()), and only at the tables that a command
 * can have given a parent or a trigger: the partition an ATTACH PARTITION
 * attached, the table an INHERIT changed, the table of a new or renamed
 * trigger (with the partitions a row trigger is cloned to), the table
 * whose triggers ENABLE enabled, a new table.  DDL on tables that fence
 * does not protect must cost nothing measurable, and must not wait: the
 * trigger takes no lock that the command did not hold already, and in a
 * database where no table has a guard it stops after the owner check.
 * Row-level guards (key or token column) fire for rows written through a
 * parent, and the TRUNCATE guard fires when a parent's TRUNCATE reaches the
 * table, so those may have parents.
 *
 * The order of a CREATE TRIGGER is checked when its transaction commits
 * (deferred_order_callback), so that a trigger made and disabled in one
 * transaction, as pg_restore replays a disabled trigger, is accepted.
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
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_trigger.h"
#include "commands/event_trigger.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/deparse_utility.h"
#include "utils/acl.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "compat.h"
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
 * trigger that fires after it (guard.c says why), or with "elevel" WARNING
 * only say so.
 */
static void
check_trigger_order(Oid relid, Oid guard_oid, int elevel)
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
			fence_report_trigger_after(elevel, RelationGetRelationName(rel),
									   guard->tgname, later->tgname);
	}
	table_close(rel, AccessShareLock);
}

/*
 * database_has_guard: whether any trigger of this database runs fence.guard
 * ("guard_oid").  One probe of pg_depend's index on what objects refer to:
 * every trigger depends on its function.
 */
static bool
database_has_guard(Oid guard_oid)
{
	Relation	deprel = table_open(DependRelationId, AccessShareLock);
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found = false;

	ScanKeyInit(&key[0], Anum_pg_depend_refclassid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(ProcedureRelationId));
	ScanKeyInit(&key[1], Anum_pg_depend_refobjid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(guard_oid));
	scan = systable_beginscan(deprel, DependReferenceIndexId, true, NULL, 2, key);
	while (!found && HeapTupleIsValid(tup = systable_getnext(scan)))
		found = ((Form_pg_depend) GETSTRUCT(tup))->classid == TriggerRelationId;
	systable_endscan(scan);
	table_close(deprel, AccessShareLock);
	return found;
}

/*
 * check_guard_owner: refuse trigger "tgname" of "relid" if it is a guard
 * (by its name, or because it runs fence.guard) and the current user does
 * not own the table.  A role with the TRIGGER privilege may create
 * triggers on a table it does not own, and CREATE OR REPLACE TRIGGER
 * fence_guard would swap the guard for a function of its own (and drop
 * ENABLE ALWAYS); only the owner may do what fence.unprotect() does.
 */
static void
check_guard_owner(Oid relid, const char *tgname, Oid tgfoid, Oid guard_oid)
{
	if (tgfoid != guard_oid && strcmp(tgname, FENCE_GUARD_TRIGGER) != 0 &&
		strcmp(tgname, FENCE_GUARD_TRUNCATE_TRIGGER) != 0)
		return;
	if (fence_rel_ownercheck(relid, GetUserId()))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("only the owner of table \"%s\" may create or replace its fence guard \"%s\"",
					get_rel_name(relid), tgname),
			 errdetail("The names \"%s\" and \"%s\" and the function fence.guard() belong to the guard that fence.protect() installs.",
					   FENCE_GUARD_TRIGGER, FENCE_GUARD_TRUNCATE_TRIGGER),
			 errhint("Give the trigger another name, or ask the owner of the table.")));
}

/*
 * The tables that a trigger command ("tgoid": CREATE [OR REPLACE] TRIGGER,
 * ALTER TRIGGER ... RENAME) changed: the trigger's table and, for a row
 * trigger on a partitioned table, every partition below it, where it is
 * cloned under the same name.  The command itself locked those.  Each of
 * them is checked for its guard's owner (with the quick exit not yet
 * taken: replacing the last guard leaves none behind to notice it).
 */
static List *
trigger_tables(Oid tgoid, Oid guard_oid)
{
	Relation	tgrel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			relid = InvalidOid;
	NameData	tgname;
	bool		row = false;
	List	   *tables = NIL;
	ListCell   *lc;

	ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(tgoid));
	scan = systable_beginscan(tgrel, TriggerOidIndexId, true, NULL, 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_trigger tg = (Form_pg_trigger) GETSTRUCT(tup);

		relid = tg->tgrelid;
		tgname = tg->tgname;
		row = TRIGGER_FOR_ROW(tg->tgtype);
		check_guard_owner(relid, NameStr(tgname), tg->tgfoid, guard_oid);
	}
	systable_endscan(scan);
	if (!OidIsValid(relid))
	{
		table_close(tgrel, AccessShareLock);
		return NIL;
	}

	if (!row || get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		tables = list_make1_oid(relid);
	else
		tables = find_all_inheritors(relid, AccessShareLock, NULL);

	/* the clones: same name, on the partitions */
	for_each_from(lc, tables, 1)
	{
		ScanKeyData keys[2];

		ScanKeyInit(&keys[0], Anum_pg_trigger_tgrelid, BTEqualStrategyNumber,
					F_OIDEQ, ObjectIdGetDatum(lfirst_oid(lc)));
		ScanKeyInit(&keys[1], Anum_pg_trigger_tgname, BTEqualStrategyNumber,
					F_NAMEEQ, NameGetDatum(&tgname));
		scan = systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 2, keys);
		if (HeapTupleIsValid(tup = systable_getnext(scan)))
			check_guard_owner(lfirst_oid(lc), NameStr(tgname),
							  ((Form_pg_trigger) GETSTRUCT(tup))->tgfoid, guard_oid);
		systable_endscan(scan);
	}
	table_close(tgrel, AccessShareLock);
	return tables;
}

/*
 * "relid", with every table below it when "below" and it has any.  Used
 * only where the command itself locked those already (ATTACH PARTITION of
 * a partitioned table, ENABLE TRIGGER recursing to partitions), so that
 * fence adds no lock waits to other people's DDL.
 */
static List *
table_tree(Oid relid, bool below)
{
	if (below && get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		return find_all_inheritors(relid, AccessShareLock, NULL);
	return list_make1_oid(relid);
}

/*
 * alter_table_tables: the tables whose parents or trigger order an ALTER
 * TABLE command ("cmd") may have changed, "parents", "order" and "relaxed"
 * (trigger order, to warn about only) the lists to add them to.  Every
 * other subcommand (columns, constraints, storage, DETACH, DISABLE
 * TRIGGER...) cannot give a table a parent or make a trigger fire after a
 * guard: the guard checks its columns itself when it fires.
 */
static void
alter_table_tables(CollectedCommand *cmd, List **parents, List **order,
				   List **relaxed)
{
	Oid			relid = cmd->d.alterTable.objectId;
	bool		recurse = true;
	ListCell   *lc;

	if (cmd->parsetree != NULL && IsA(cmd->parsetree, AlterTableStmt) &&
		((AlterTableStmt *) cmd->parsetree)->relation != NULL)
		recurse = ((AlterTableStmt *) cmd->parsetree)->relation->inh;

	foreach(lc, cmd->d.alterTable.subcmds)
	{
		CollectedATSubcmd *sub = lfirst(lc);
		AlterTableCmd *at = (AlterTableCmd *) sub->parsetree;

		if (at == NULL || !IsA(at, AlterTableCmd))
			continue;
		switch (at->subtype)
		{
			case AT_AttachPartition:
				{
					/*
					 * The partition, which gets a parent and its row
					 * triggers; the command has it locked.
					 */
					PartitionCmd *part = (PartitionCmd *) at->def;
					Oid			partid = RangeVarGetRelid(part->name, NoLock, true);

					if (!OidIsValid(partid))
						break;
					*parents = lappend_oid(*parents, partid);
					*order = list_concat(*order, table_tree(partid, true));
					break;
				}
			case AT_AddInherit:
				*parents = lappend_oid(*parents, relid);
				break;
			case AT_EnableTrig:
			case AT_EnableAlwaysTrig:
			case AT_EnableReplicaTrig:
				*order = list_concat(*order, table_tree(relid, recurse));
				break;
			case AT_EnableTrigAll:
			case AT_EnableTrigUser:

				/*
				 * pg_restore --disable-triggers runs this after loading a
				 * table's data.  Refusing it would leave the guard itself
				 * disabled; the guard refuses writes while a trigger it
				 * enabled fires after it, so say so and go on.
				 */
				*relaxed = list_concat(*relaxed, table_tree(relid, recurse));
				break;
			default:
				break;
		}
	}
}

/*
 * Tables whose trigger order a CREATE TRIGGER may have broken, checked when
 * the transaction commits rather than at once: pg_dump writes a disabled
 * trigger as CREATE TRIGGER followed by ALTER TABLE ... DISABLE TRIGGER,
 * and pg_restore runs the two in one transaction (psql -1 too).  Refusing
 * the CREATE would make a database that fence accepts impossible to
 * restore; refusing the commit still keeps a trigger that fires after a
 * guard from being made.  The list lives in TopTransactionContext.
 */
static List *deferred_order = NIL;
static Oid	deferred_guard_oid = InvalidOid;
static bool deferred_callback_registered = false;

static void
deferred_order_callback(XactEvent event, void *arg)
{
	List	   *tables;
	ListCell   *lc;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			tables = deferred_order;
			deferred_order = NIL;
			foreach(lc, tables)
				check_trigger_order(lfirst_oid(lc), deferred_guard_oid, ERROR);
			break;
		default:
			deferred_order = NIL;
			break;
	}
}

static void
defer_trigger_order(List *tables, Oid guard_oid)
{
	MemoryContext oldcxt;

	if (!deferred_callback_registered)
	{
		RegisterXactCallback(deferred_order_callback, NULL);
		deferred_callback_registered = true;
	}
	oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	deferred_order = list_concat(deferred_order, tables);
	MemoryContextSwitchTo(oldcxt);
	deferred_guard_oid = guard_oid;
}

/*
 * fence.guard_ddl() RETURNS event_trigger
 *	  Fired at ddl_command_end of the commands that can give a table a
 *	  parent or a trigger: ALTER TABLE, CREATE TABLE, CREATE TRIGGER, ALTER
 *	  TRIGGER, and CREATE SCHEMA, whose elements run under its tag.
 *
 * It must cost nothing measurable to DDL on tables it does not protect:
 * it looks only at the tables a command changed in a way that matters
 * (alter_table_tables(), trigger_tables()), takes no lock that the
 * command did not take already, and, beyond the owner check of
 * trigger_tables(), stops at once in a database where no table has a
 * guard.
 */
Datum
fence_guard_ddl(PG_FUNCTION_ARGS)
{
	Oid			guard_oid;
	uint64		i;
	List	   *commands = NIL;
	List	   *parents = NIL;	/* may not be table-mode protected */
	List	   *order = NIL;	/* may not have a trigger after a row guard */
	List	   *triggers = NIL; /* ... checked at commit */
	List	   *relaxed = NIL;	/* ... said, not refused */
	ListCell   *lc;
	MemoryContext caller_cxt = CurrentMemoryContext;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fence DDL guard function was not called by the event trigger manager")));

	guard_oid = fence_guard_oid(get_func_namespace(fcinfo->flinfo->fn_oid));

	/*
	 * The commands of the event, as the event trigger manager collected
	 * them; they live in its memory, not in SPI's, which SPI_finish()
	 * frees: only the list of pointers is built here, in the caller's.
	 */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");	/* internal error */
	if (SPI_execute("SELECT command FROM pg_catalog.pg_event_trigger_ddl_commands()",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the commands of the event");	/* internal error */
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		command = SPI_getbinval(SPI_tuptable->vals[i],
											SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext spi_cxt;

		if (isnull)
			continue;
		spi_cxt = MemoryContextSwitchTo(caller_cxt);
		commands = lappend(commands, DatumGetPointer(command));
		MemoryContextSwitchTo(spi_cxt);
	}
	SPI_finish();

	foreach(lc, commands)
	{
		CollectedCommand *cmd = lfirst(lc);

		if (cmd->type == SCT_AlterTable)
			alter_table_tables(cmd, &parents, &order, &relaxed);
		else if (cmd->type == SCT_Simple &&
				 cmd->d.simple.address.classId == TriggerRelationId)
		{
			/* a hand-made statement-level guard on a child, too */
			List	   *tables = trigger_tables(cmd->d.simple.address.objectId,
												guard_oid);

			parents = list_concat(parents, tables);
			triggers = list_concat(triggers, tables);
		}
		else if (cmd->type == SCT_Simple &&
				 cmd->d.simple.address.classId == RelationRelationId &&
				 cmd->parsetree != NULL && IsA(cmd->parsetree, CreateStmt))
		{
			/* PARTITION OF clones the parent's row triggers */
			order = lappend_oid(order, cmd->d.simple.address.objectId);
		}
	}

	if ((parents == NIL && order == NIL && triggers == NIL && relaxed == NIL) ||
		!database_has_guard(guard_oid))
		PG_RETURN_VOID();

	foreach(lc, parents)
		check_table(lfirst_oid(lc), guard_oid);
	foreach(lc, order)
		check_trigger_order(lfirst_oid(lc), guard_oid, ERROR);
	foreach(lc, relaxed)
		check_trigger_order(lfirst_oid(lc), guard_oid, WARNING);
	if (triggers != NIL)
		defer_trigger_order(triggers, guard_oid);

	PG_RETURN_VOID();
}
