/*
 * extension/guard.h
 *	  What fence.protect() (protect.c) shares with the guard trigger
 *	  (guard.c).
 */
#ifndef FENCE_GUARD_H
#define FENCE_GUARD_H

#include "postgres.h"

extern const char *guard_key_type_setting(Oid typid);

#endif							/* FENCE_GUARD_H */
