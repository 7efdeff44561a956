/*
 * client/pq.h
 *	  libpq, opened at its first use: the functions libfence calls, in a
 *	  table filled from libpq.so.5.
 *
 * Most runs of the fence command never speak to PostgreSQL, and libpq
 * brings some twenty libraries (GSSAPI, LDAP, OpenSSL, GnuTLS through
 * LDAP) whose loading and relocation cost more than the lease's round
 * trips; so libfence does not link libpq, and pq.c opens it the first time
 * libfence is handed a PGconn.  A program that calls libfence's PostgreSQL
 * functions made that PGconn with a libpq of its own: dlopen finds the
 * copy already loaded (by its soname) and gives that one back, so libfence
 * and the program share one libpq, as they did when it was linked.
 *
 * A file that includes this header calls PQexec and the others as
 * libpq-fe.h spells them: the names below are macros for the table's
 * entries.  libfence links no libpq, so a call that bypasses the table
 * does not link (libfence.so is linked with -z defs), which keeps every
 * call behind it.
 */
#ifndef FENCE_PQ_H
#define FENCE_PQ_H

#include <libpq-fe.h>

#define FENCE_LIBPQ_SONAME "libpq.so.5"

/* libpq 14 brought pipeline mode; FENCE_NO_PIPELINE tests the other path. */
#if defined(LIBPQ_HAS_PIPELINING) && !defined(FENCE_NO_PIPELINE)
#define FENCE_USE_PIPELINE 1
#define FENCE_PQ_PIPELINE(X) \
	X(PQenterPipelineMode) X(PQexitPipelineMode) X(PQpipelineSync)
#else
#define FENCE_PQ_PIPELINE(X)
#endif

/* Every function of libpq that libfence calls. */
#define FENCE_PQ_FUNCS(X) \
	X(PQclear) X(PQdb) X(PQerrorMessage) X(PQescapeIdentifier) X(PQexec) \
	X(PQexecParams) X(PQfreemem) X(PQgetCopyData) X(PQgetResult) \
	X(PQgetisnull) X(PQgetvalue) X(PQntuples) X(PQputCopyEnd) X(PQresStatus) \
	X(PQresultErrorField) X(PQresultErrorMessage) X(PQresultStatus) \
	X(PQsendQueryParams) X(PQstatus) X(PQtransactionStatus) X(PQuser) \
	FENCE_PQ_PIPELINE(X)

struct fence_pq
{
#define FENCE_PQ_MEMBER(f) __typeof__(f) *f;
	FENCE_PQ_FUNCS(FENCE_PQ_MEMBER)
#undef FENCE_PQ_MEMBER
};

extern struct fence_pq fence_pq;

/*
 * Fill fence_pq (once per process; every thread may call it): FENCE_OK, or
 * FENCE_ERR with FENCE_ERR_PG in "ctx" when libpq.so.5 cannot be opened or
 * lacks a function.  Before any call through the table.
 */
struct fence_ctx;
int			fence_pq_load(struct fence_ctx *ctx);

/*
 * pg.c's parts of a fenced statement, which the set's (lease_set.c)
 * shares: recording a failed call (with the fix for fence's own SQL,
 * FENCE_SQL_OURS, fence_pg_hint), refusing COPY for "who" (the function
 * the caller called), running the caller's statement with both refusals,
 * whether the statement begins its own transaction, ending the
 * transaction the statement began, and whether a refused first statement
 * heals and runs again.
 */
#define FENCE_SQL_OURS 1
#define FENCE_SQL_THEIRS 0
void		fence_pg_error(struct fence_ctx *ctx, PGconn *pg, PGresult *res,
						   const char *what, int whose);
int			fence_pg_is_copy(ExecStatusType st);
void		fence_pg_refuse_copy(struct fence_ctx *ctx, PGconn *pg, ExecStatusType st,
								 int report, const char *who);
PGresult   *fence_pg_statement(struct fence_ctx *ctx, PGconn *pg, const char *sql,
							   int nparams, const char *const *params, const char *who);
void		fence_pg_rollback(struct fence_ctx *ctx, PGconn *pg);
int			fence_pg_own_tx(struct fence_ctx *ctx, PGconn *pg);
int			fence_exec_heal(int refused, int pg_accepted, int own_tx);

/* From here on, libpq's names are the table's. */
#ifndef FENCE_PQ_FILLING		/* pq.c fills the table: it needs the real names */
#define PQclear fence_pq.PQclear
#define PQdb fence_pq.PQdb
#define PQerrorMessage fence_pq.PQerrorMessage
#define PQescapeIdentifier fence_pq.PQescapeIdentifier
#define PQexec fence_pq.PQexec
#define PQexecParams fence_pq.PQexecParams
#define PQfreemem fence_pq.PQfreemem
#define PQgetCopyData fence_pq.PQgetCopyData
#define PQgetResult fence_pq.PQgetResult
#define PQgetisnull fence_pq.PQgetisnull
#define PQgetvalue fence_pq.PQgetvalue
#define PQntuples fence_pq.PQntuples
#define PQputCopyEnd fence_pq.PQputCopyEnd
#define PQresStatus fence_pq.PQresStatus
#define PQresultErrorField fence_pq.PQresultErrorField
#define PQresultErrorMessage fence_pq.PQresultErrorMessage
#define PQresultStatus fence_pq.PQresultStatus
#define PQsendQueryParams fence_pq.PQsendQueryParams
#define PQstatus fence_pq.PQstatus
#define PQtransactionStatus fence_pq.PQtransactionStatus
#define PQuser fence_pq.PQuser
#ifdef FENCE_USE_PIPELINE
#define PQenterPipelineMode fence_pq.PQenterPipelineMode
#define PQexitPipelineMode fence_pq.PQexitPipelineMode
#define PQpipelineSync fence_pq.PQpipelineSync
#endif
#endif

#endif							/* FENCE_PQ_H */
