/*
 * client/pq.c
 *	  Open libpq at its first use and fill the table of its functions
 *	  (pq.h says why).
 *
 * dlopen with RTLD_LOCAL: libpq's names do not join the program's; where
 * the program linked libpq itself, dlopen finds that copy by its soname
 * and adds nothing.  The library is never closed: a PGconn may outlive any
 * call of ours.
 */
#define FENCE_PQ_FILLING
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "fence_int.h"
#include "pq.h"

struct fence_pq fence_pq;

static pthread_once_t pq_once = PTHREAD_ONCE_INIT;
static char pq_failure[FENCE_ERRSTR_LEN];	/* empty once the table is full */

static void
pq_open(void)
{
	void	   *lib = dlopen(FENCE_LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL);
	const char *missing = NULL;

	if (lib == NULL)
	{
		snprintf(pq_failure, sizeof(pq_failure), "cannot load libpq: %s", dlerror());
		return;
	}
#define FENCE_PQ_LOOKUP(f) \
	if (missing == NULL && (fence_pq.f = (__typeof__(fence_pq.f)) dlsym(lib, #f)) == NULL) \
		missing = #f;
	FENCE_PQ_FUNCS(FENCE_PQ_LOOKUP)
#undef FENCE_PQ_LOOKUP
	if (missing != NULL)
		snprintf(pq_failure, sizeof(pq_failure), "%s has no function %s (libpq too old)",
				 FENCE_LIBPQ_SONAME, missing);
}

int
fence_pq_load(fence_ctx *ctx)
{
	pthread_once(&pq_once, pq_open);
	if (pq_failure[0] == '\0')
		return FENCE_OK;
	fence_set_error(ctx, FENCE_ERR_PG, "%s", pq_failure);
	return FENCE_ERR;
}
