/*
 * client/cli/cli.h
 *	  What the files of the fence command share (git's builtin header
 *	  is the model): exit codes, defaults, the options every verb gets,
 *	  and the functions one file lends another.
 *
 * main.c parses the command line once, for every verb, into an "options"
 * and calls the verb's cmd_* with a connected context and the verb's own
 * arguments (after the verb's name).  A cmd_* returns fence's exit status.
 * Only fence.h is included from libfence: the command is a program on the
 * public API like any other.
 */
#ifndef FENCE_CLI_H
#define FENCE_CLI_H

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

#include "fence.h"

/*
 * pq.c: libpq, opened by pq_load() when a verb is given --pg, never
 * before: linking it would load some twenty libraries into every run, as
 * libfence's pq.h explains (libfence opens the same libpq.so.5 for its own
 * calls).  The command calls libpq's functions by their names, which are
 * macros for the table's entries from here on; any call that runs before
 * pq_load() succeeded would jump to NULL, so only code reached through
 * pg_connect() calls them, and PQfinish goes through pq_finish(), which
 * takes the NULL of "no --pg" without libpq.
 */
#define CLI_PQ_FUNCS(X) \
	X(PQcancel) X(PQclear) X(PQcmdStatus) X(PQcmdTuples) \
	X(PQconnectdb) X(PQconninfoFree) X(PQconninfoParse) X(PQerrorMessage) \
	X(PQexec) X(PQexecParams) X(PQfinish) X(PQfreeCancel) X(PQfreemem) \
	X(PQgetCancel) X(PQgetCopyData) X(PQgetisnull) X(PQgetResult) \
	X(PQgetvalue) X(PQhost) X(PQnfields) X(PQntuples) X(PQparameterStatus) X(PQport) \
	X(PQputCopyEnd) \
	X(PQresultErrorField) X(PQresultErrorMessage) X(PQresultStatus) \
	X(PQstatus) X(PQtransactionStatus)

struct cli_pq
{
#define CLI_PQ_MEMBER(f) __typeof__(f) *f;
	CLI_PQ_FUNCS(CLI_PQ_MEMBER)
#undef CLI_PQ_MEMBER
};

extern struct cli_pq cli_pq;
extern const char *pq_load(void);
extern void pq_finish(PGconn *pg);

#ifndef CLI_PQ_FILLING		/* pq.c fills the table: it needs the real names */
#define PQcancel cli_pq.PQcancel
#define PQclear cli_pq.PQclear
#define PQcmdStatus cli_pq.PQcmdStatus
#define PQcmdTuples cli_pq.PQcmdTuples
#define PQconnectdb cli_pq.PQconnectdb
#define PQconninfoFree cli_pq.PQconninfoFree
#define PQconninfoParse cli_pq.PQconninfoParse
#define PQerrorMessage cli_pq.PQerrorMessage
#define PQexec cli_pq.PQexec
#define PQexecParams cli_pq.PQexecParams
#define PQfinish cli_pq.PQfinish
#define PQfreeCancel cli_pq.PQfreeCancel
#define PQfreemem cli_pq.PQfreemem
#define PQgetCancel cli_pq.PQgetCancel
#define PQgetCopyData cli_pq.PQgetCopyData
#define PQgetisnull cli_pq.PQgetisnull
#define PQgetResult cli_pq.PQgetResult
#define PQgetvalue cli_pq.PQgetvalue
#define PQhost cli_pq.PQhost
#define PQnfields cli_pq.PQnfields
#define PQntuples cli_pq.PQntuples
#define PQparameterStatus cli_pq.PQparameterStatus
#define PQport cli_pq.PQport
#define PQputCopyEnd cli_pq.PQputCopyEnd
#define PQresultErrorField cli_pq.PQresultErrorField
#define PQresultErrorMessage cli_pq.PQresultErrorMessage
#define PQresultStatus cli_pq.PQresultStatus
#define PQstatus cli_pq.PQstatus
#define PQtransactionStatus cli_pq.PQtransactionStatus
#endif

/* sysexits.h values; DESIGN.md fixes 64, 69, 75, 76 and 77 */
#define EXIT_FAIL		1
#define EXIT_USAGE		64
#define EXIT_DATAERR	65		/* fence's keys in Redis hold what fence never
								 * writes */
#define EXIT_UNAVAIL	69
#define EXIT_IOERR		74		/* acquire, exec: the output could not be
								 * written */
#define EXIT_BUSY		75
#define EXIT_LOST		76
#define EXIT_STALE		77
#define EXIT_CONFIG		78		/* Redis refused the login (AUTH, SELECT,
								 * ACL), TLS refused (certificates, keys);
								 * run: PostgreSQL refuses PGOPTIONS */

#define DEFAULT_TTL_MS		30000
#define DEFAULT_GRACE_MS	10000
#define DEFAULT_REPLICA_TIMEOUT_MS 1000

extern const char *progname;

/* The signals that end fence; run passes them on to the command. */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFORWARDED ((int) (sizeof(forwarded) / sizeof(forwarded[0])))

typedef struct options
{
	const char *redis;
	char	   *redis_list;		/* --redis given more than once: a quorum */
	const char *pg;
	long long	ttl_ms;
	long long	wait_ms;
	long long	grace_ms;
	int			min_replicas;
	long long	replica_timeout_ms;
	int			json;
	int			death_signal;	/* run: what COMMAND gets if fence dies */
	const char *name;			/* --name: in front of owner ids, or NULL */
	const char **resources;		/* -R, in the order given (a set: sets.c) */
	int			nresources;
	long long	timeout_ms;		/* --timeout: connecting, each command */
	const char *shell;			/* run -c STRING, or NULL */
	int			hold;			/* acquire --hold */
	const char *password_file;	/* --password-file, or NULL */
	char	   *redis_auth;		/* "redis" with the password put in */
	const char *prefix;			/* resync --prefix, or NULL */
	int			inherit_password;	/* run --inherit-password */
	int			no_pg;			/* run --no-pg: nothing to announce to */
	int			pooler;			/* run --pooler: no PGOPTIONS for the command */
	const char *pg_from;		/* run: where the PostgreSQL target came from */
	int			help;			/* --help (or -?) */
	int			version;		/* --version */
} options;

/*
 * A verb (options.c): how many arguments it takes before what it passes
 * on, its cmd_* (NULL for help), and its help, with the options it reads.
 */
typedef struct verb
{
	const char *name;
	int			fixed;			/* arguments after the verb */
	int			variadic;		/* more may follow, never parsed */
	const char *needs;			/* for the usage error */
	int			(*fn) (fence_ctx *ctx, const options *o, int argc, char **argv);
	int			optional;		/* then up to this many more, parsed */
	const char *synopsis;		/* after "fence " in its usage */
	const char *text;			/* what it does */
	const char *const *reads;	/* the options it reads: long names, "-c" */
} verb;

/*
 * The signals that end fence, held off while a lease is taken (take.c):
 * blocked from before the acquire, the first that came noted.
 */
typedef struct stop_guard
{
	sigset_t	set;			/* the signals that end fence, not ignored */
	sigset_t	old;			/* the mask before */
	int			sig;			/* the first that came, or 0 */
	fence_ctx  *ctx;			/* whose wait a signal cuts short */
} stop_guard;

/* common.c */
extern int	parse_signal(const char *s);
extern int	usage_error(const char *fmt, const char *arg);
extern int	fail(fence_ctx *ctx);
extern int	pg_fail(fence_ctx *ctx, PGconn *pg);
extern fence_ctx *redis_connect(const options *o, int *code);
extern int	add_quorum_url(options *o, const char *url);
extern int	is_quorum(const char *spec);
extern PGconn *pg_connect(const char *conninfo, int *code);
extern PGconn *pg_connect_writer(const char *conninfo, int *code);

/* report.c */
extern int	cli_verbosity;		/* -1 --quiet, 0, 1 --verbose */
extern int	cli_json;
extern int	report_error(int code, const char *msg, const char *hint);
extern void note(const char *fmt,...) __attribute__((format(printf, 1, 2)));
extern void trace(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/* durations.c */
extern int	parse_duration_arg(const char *what, const char *s, long long *ms,
							   long long inf_ms, char *errbuf, size_t errlen);

/* secret.c */
extern char **hide_secrets(int argc, char **argv);
extern char *masked_url(const char *spec);
extern int	apply_password(options *o);
extern int	keep_password_from_child(const options *o);

/* help.c */
extern int	print_help(const char *verb);

/* options.c: the options table and the verbs table */
extern const verb verbs[];
extern const verb *find_verb(const char *name);
extern void print_option_lines(void);
extern int	parse_command_line(int argc, char **argv, options *o, char **args, int *nargs,
							   const verb **v, char *err, size_t errlen);

/* output.c */
extern void json_string(FILE *f, const char *s);
extern void shell_assign(const char *name, const char *value);
extern void print_lease(const options *o, fence_lease *l);
extern void print_set(const options *o, fence_leases *set, const char *tokens);
extern void print_result(const options *o, PGresult *res, long long token);

/* name.c */
extern int	name_owner(fence_ctx *ctx, const options *o, const char *command);

/* take.c: one RESOURCE is a set of one */
extern fence_leases *take_set(fence_ctx *ctx, const options *o, const char *const *resources,
							  size_t n, PGconn **pgp, int announce, int *code,
							  stop_guard *g);
extern void release_and_close(fence_ctx *ctx, fence_leases *set, PGconn *pg);
extern int	give_back_on_signal(fence_ctx *ctx, fence_leases *set, PGconn *pg, int sig);

/* pgoptions.c */
extern int	probe_pgoptions(const char *conninfo, fence_lease *l);
extern void pgoptions_keep(void);
extern int	pgoptions_restore(void);
extern PGconn *probe_connect(const char *conninfo, int *unreachable, char *why, size_t whylen);
extern int	probe_unreachable(const char *why);

/* sets.c: the usage rules of -R */
extern int	set_usage(const options *o, const char *verb, int nargs);

/* job.c: run in the foreground of a terminal */
extern int	job_split(const struct sigaction *handler, const struct sigaction *orig_chld,
					  pid_t *job_pgrp, pid_t *standin, int *code);

/* procs.c */
extern void signal_all(pid_t pgid, int sig);
extern int	all_gone(pid_t pid, int *status, int *main_done, int *stopsig);

/* the verbs: acquire.c, hold.c, show.c, list.c, exec.c, run.c, resync.c */
extern int	cmd_acquire(fence_ctx *ctx, const options *o, int argc, char **argv);
extern int	cmd_release(fence_ctx *ctx, const options *o, int argc, char **argv);
extern int	cmd_extend(fence_ctx *ctx, const options *o, int argc, char **argv);
extern int	cmd_show(fence_ctx *ctx, const options *o, int argc, char **argv);
extern int	cmd_list(fence_ctx *ctx, const options *o, int argc, char **argv);
extern int	cmd_exec(fence_ctx *ctx, const options *o, int argc, char **argv);
extern void run_pg_target(options *o);
extern int	cmd_run(fence_ctx *ctx, const options *o, int argc, char **argv);
extern int	cmd_hold(fence_ctx *ctx, const options *o, int argc, char **argv);
extern int	cmd_resync(fence_ctx *ctx, const options *o, int argc, char **argv);

/*
 * What fence run carries: the (resource, token, owner) triples read from
 * an inherited PGOPTIONS (inherited.c, with libfence's reader) and written
 * back merged (carry.c).
 */
typedef struct triple
{
	char	   *resource;
	long long	token;
	char	   *owner;			/* "" when the entry named none */
} triple;

typedef struct carried
{
	triple	   *t;
	size_t		n;
	char	   *kept;			/* PGOPTIONS without its fence settings */
	char	   *single[3];		/* an inherited fence.resource, token, owner */
} carried;

/* inherited.c */
extern void carried_free(carried *c);
extern int	put_triple(carried *c, const char *resource, long long token, const char *owner);
extern int	add_setting(char **buf, const char *name, const char *value);
extern int	read_pgoptions(const char *pgoptions, carried *c, char *err, size_t errlen);

/* carry.c */
extern int	carry_env(fence_leases *set, int as_set, char **tokens);
extern int	carry_probe(const char *conninfo, fence_leases *set, const char *tokens);

#endif							/* FENCE_CLI_H */
