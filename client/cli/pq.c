/*
 * client/cli/pq.c
 *	  libpq for the command, opened when a verb is given --pg (cli.h says
 *	  why), and PQfinish for connections that may not exist.
 */
#define CLI_PQ_FILLING
#include <dlfcn.h>
#include <stdio.h>

#include "cli.h"

#define LIBPQ_SONAME "libpq.so.5"

struct cli_pq cli_pq;

/*
 * Fill "cli_pq" the first time: NULL, or why libpq cannot be used (a
 * message for the caller to print).  The command never calls it from two
 * threads at once (take.c's acquiring thread runs while main waits).
 */
const char *
pq_load(void)
{
	static int	loaded;
	static char failure[256];
	void	   *lib;
	const char *missing = NULL;

	if (loaded)
		return NULL;
	if ((lib = dlopen(LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL)
	{
		snprintf(failure, sizeof(failure), "cannot load libpq, which --pg needs: %s", dlerror());
		return failure;
	}
#define CLI_PQ_LOOKUP(f) \
	if (missing == NULL && (cli_pq.f = (__typeof__(cli_pq.f)) dlsym(lib, #f)) == NULL) \
		missing = #f;
	CLI_PQ_FUNCS(CLI_PQ_LOOKUP)
#undef CLI_PQ_LOOKUP
	if (missing != NULL)
	{
		snprintf(failure, sizeof(failure), "%s has no function %s (libpq too old)",
				 LIBPQ_SONAME, missing);
		return failure;
	}
	loaded = 1;
	return NULL;
}

/* PQfinish(pg), where "pg" is NULL when no --pg was given. */
void
pq_finish(PGconn *pg)
{
	if (pg != NULL)
		cli_pq.PQfinish(pg);
}
