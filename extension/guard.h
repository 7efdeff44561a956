/*
 * extension/guard.h
 *	  What fence.protect() (protect.c) shares with the guard trigger
 *	  (guard.c) and the DDL guard (guard_ddl.c): where the guard function
 *	  is, and how the rows of a key-mode table are named (key_resource.c).
 */
#ifndef FENCE_GUARD_H
#define FENCE_GUARD_H

#include "postgres.h"

extern Oid	fence_guard_oid(Oid fence_nsp);
extern bool fence_key_type_allowed(Oid typid);
extern const char *fence_key_type_detail(void);
extern void fence_check_key_base(const char *base);
extern char *fence_key_resource_name(const char *base, const char *key);

#endif							/* FENCE_GUARD_H */
