/*
 * extension/guard.h
 *	  What fence.protect() (protect.c) shares with the guard trigger
 *	  (guard.c) and the DDL guard (guard_ddl.c): where the guard function
 *	  is, how the rows of a key-mode table are named (key_resource.c), and
 *	  which triggers may not fire after a row guard (guard_order.c).
 */
#ifndef FENCE_GUARD_H
#define FENCE_GUARD_H

#include "postgres.h"

#include "utils/reltrigger.h"

/* The triggers that fence.protect() installs (protect.c). */
#define FENCE_GUARD_TRIGGER				"fence_guard"
#define FENCE_GUARD_TRUNCATE_TRIGGER	"fence_guard_truncate"

extern Oid	fence_guard_oid(Oid fence_nsp);
extern bool fence_key_type_allowed(Oid typid);
extern const char *fence_key_type_detail(void);
extern void fence_check_key_base(const char *base);
extern char *fence_key_resource_name(const char *base, const char *key);
/* guard_order.c */
extern const Trigger *fence_trigger_after(const TriggerDesc *trigdesc,
										  const char *guard_name,
										  int16 tgevent);
extern void fence_report_trigger_after(int elevel, const char *relname,
									   const char *guard_name,
									   const char *later_name);

#endif							/* FENCE_GUARD_H */
