/*
 * go/pgfence.c
 *	  The C side of the Go binding (pgfence.h): the heartbeat's lost
 *	  callbacks, which call the Go function pgfenceLost (go/lost.go) with
 *	  the cgo.Handle they were started with, and arrays of C strings.
 */
#include <stdlib.h>

#include "pgfence.h"

extern void pgfenceLost(uintptr_t h);

static void
lost_one(fence_lease *lease, void *arg)
{
	(void) lease;
	pgfenceLost((uintptr_t) arg);
}

static void
lost_set(fence_leases *set, fence_lease *lost, void *arg)
{
	(void) set;
	(void) lost;
	pgfenceLost((uintptr_t) arg);
}

int
pgfence_heartbeat_start(fence_ctx *ctx, fence_lease *lease, uintptr_t h)
{
	return fence_heartbeat_start(ctx, lease, lost_one, (void *) h);
}

int
pgfence_leases_heartbeat_start(fence_ctx *ctx, fence_leases *set, uintptr_t h)
{
	return fence_leases_heartbeat_start(ctx, set, lost_set, (void *) h);
}

/*
 * fence_acquire_wait, with the new lease's token and owner, returned by
 * value (pointers into Go memory for them would each be checked by cgo on
 * every call).  "resource" may be Go memory: libfence copies it and keeps
 * no pointer to it.
 */
pgfence_acquired
pgfence_acquire(fence_ctx *ctx, const char *resource, long long ttl_ms,
				long long wait_ms)
{
	pgfence_acquired a = {NULL, 0, NULL};

	a.lease = fence_acquire_wait(ctx, resource, ttl_ms, wait_ms);
	if (a.lease != NULL)
	{
		a.token = fence_lease_token(a.lease);
		a.owner = fence_lease_owner(a.lease);
	}
	return a;
}

/* fence_release, then fence_lease_free (which stops the heartbeat). */
int
pgfence_release_free(fence_ctx *ctx, fence_lease *lease)
{
	int			rc = fence_release(ctx, lease);

	fence_lease_free(lease);
	return rc;
}

char	  **
pgfence_strings(size_t n)
{
	return calloc(n ? n : 1, sizeof(char *));
}

void
pgfence_string_set(char **a, size_t i, char *s)
{
	a[i] = s;
}

void
pgfence_strings_free(char **a, size_t n)
{
	size_t		i;

	for (i = 0; i < n; i++)
		free(a[i]);
	free(a);
}
