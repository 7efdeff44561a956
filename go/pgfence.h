/*
 * go/pgfence.h
 *	  The few C functions the Go binding needs beside libfence's own:
 *	  callbacks Go cannot name as C function pointers, a handle passed
 *	  through a void * as a number, arrays of C strings, and a lease's
 *	  acquire and release each as one call from Go (a cgo call is a
 *	  transition of the Go scheduler's: a cycle of one makes two, not
 *	  seven).
 */
#ifndef PGFENCE_GO_H
#define PGFENCE_GO_H

#include <stddef.h>
#include <stdint.h>

#include <fence.h>

int			pgfence_heartbeat_start(fence_ctx *ctx, fence_lease *lease, uintptr_t h);
int			pgfence_leases_heartbeat_start(fence_ctx *ctx, fence_leases *set, uintptr_t h);
typedef struct pgfence_acquired
{
	fence_lease *lease;			/* NULL: not acquired, ctx->err says why */
	long long	token;
	const char *owner;			/* lives as long as the lease */
} pgfence_acquired;

pgfence_acquired pgfence_acquire(fence_ctx *ctx, const char *resource, long long ttl_ms,
								 long long wait_ms);
int			pgfence_release_free(fence_ctx *ctx, fence_lease *lease);
char	  **pgfence_strings(size_t n);
void		pgfence_string_set(char **a, size_t i, char *s);
void		pgfence_strings_free(char **a, size_t n);

#endif							/* PGFENCE_GO_H */
