/*
 * extension/errcodes.h
 *	  SQLSTATEs of class LF (lease/fencing), raised by the fence extension.
 *
 *	  LF001  stale token: lower than the resource's high-water mark, or equal
 *	         to it but presented by another owner.  Never retry with the same
 *	         token: acquire a new lease.
 *	  LF002  missing token: the write needs a token and none was given.
 *	  LF003  invalid token: zero or negative, unparsable, or more than
 *	         fence.max_step above the high-water mark.
 *
 *	  None of them is 40001: drivers retry serialization failures by
 *	  themselves, and a stale token must never be retried.
 */
#ifndef FENCE_ERRCODES_H
#define FENCE_ERRCODES_H

#include "utils/elog.h"

#define ERRCODE_FENCE_STALE_TOKEN		MAKE_SQLSTATE('L','F','0','0','1')
#define ERRCODE_FENCE_MISSING_TOKEN		MAKE_SQLSTATE('L','F','0','0','2')
#define ERRCODE_FENCE_INVALID_TOKEN		MAKE_SQLSTATE('L','F','0','0','3')

#endif							/* FENCE_ERRCODES_H */
