/*
 * extension/guard_order.c
 *	  Which triggers may not fire after a row guard: the rule that the guard
 *	  (guard.c), fence.protect() (protect.c) and the DDL guard (guard_ddl.c)
 *	  all apply, each where it sees the triggers.
 *
 * A row guard checks the row it is handed, so it must be the last BEFORE
 * ROW trigger to see it: BEFORE triggers fire in name order, and one that
 * fires later could move the row to another key, or change its stamped
 * token, after the check.  The guard refuses to fire while such a trigger
 * exists; fence.protect() and the DDL guard refuse to make one.  One
 * definition of "fires after" and one message keep the three in step.
 */
#include "postgres.h"

#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "utils/reltrigger.h"

#include "guard.h"

/*
 * fence_trigger_after: the first enabled BEFORE ROW trigger of "trigdesc"
 * (may be NULL) on an event of "tgevent" (TRIGGER_TYPE_INSERT and/or
 * TRIGGER_TYPE_UPDATE) whose name sorts after "guard_name", or NULL.  Such
 * a trigger fires after a row guard of that name and could rewrite the row
 * it checked.  A trigger enabled only for another session_replication_role
 * counts too: the role can change at any time.  The trigger manager keeps
 * the triggers sorted by name, the order in which they fire.
 */
const Trigger *
fence_trigger_after(const TriggerDesc *trigdesc, const char *guard_name,
					int16 tgevent)
{
	int			i;

	if (trigdesc == NULL)
		return NULL;
	for (i = 0; i < trigdesc->numtriggers; i++)
	{
		const Trigger *t = &trigdesc->triggers[i];

		if (t->tgenabled != TRIGGER_DISABLED &&
			TRIGGER_FOR_ROW(t->tgtype) && TRIGGER_FOR_BEFORE(t->tgtype) &&
			(t->tgtype & tgevent) != 0 &&
			strcmp(t->tgname, guard_name) > 0)
			return t;
	}
	return NULL;
}

/*
 * fence_report_trigger_after: refuse trigger "later" of table "relname",
 * which fires after row guard "guard_name" (fence_trigger_after()), or with
 * "elevel" WARNING only say so.
 */
void
fence_report_trigger_after(int elevel, const char *relname,
						   const char *guard_name, const char *later_name)
{
	ereport(elevel,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("trigger \"%s\" on protected table \"%s\" fires after its fence guard \"%s\"",
					later_name, relname, guard_name),
			 errdetail("BEFORE triggers fire in name order, so \"%s\" could change the row's key or token column after the guard checked them.",
					   later_name),
			 errhint("Rename the trigger so that its name sorts before \"%s\", or disable or drop it.",
					 guard_name)));
}
