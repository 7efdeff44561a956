/*
 * bench/noop_trigger/bench_noop_trigger.c
 *	  A row trigger that does nothing: what calling any C trigger costs per
 *	  row, the floor under the guard's token-column mode (scenario 3).
 */
#include "postgres.h"

#include "commands/trigger.h"
#include "fmgr.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(bench_noop_trigger);

Datum
bench_noop_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		elog(ERROR, "bench_noop_trigger: not called by trigger manager");	/* internal error */
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		return PointerGetDatum(trigdata->tg_newtuple);
	return PointerGetDatum(trigdata->tg_trigtuple);
}
