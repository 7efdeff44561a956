/*
 * client/cli/fence_main.c
 *	  The fence command: leases, tokens and fenced commands from a shell.
 *
 *	  fence acquire RESOURCE [--ttl D] [--wait D] [--pg CONNINFO]
 *	  fence release RESOURCE OWNER
 *	  fence extend  RESOURCE OWNER [--ttl D]
 *	  fence run     RESOURCE [--ttl D] [--wait D] [--pg CONNINFO] [--grace D]
 *	                [--death-signal SIG] [--] CMD [ARG...]
 *	  fence exec    RESOURCE --pg CONNINFO [--] SQL [PARAM...]
 *	  fence show    RESOURCE [--pg CONNINFO]
 *
 * Exit status (DESIGN.md section 4): 0 success (for run, the command's own
 * status), 64 usage error, 69 Redis or PostgreSQL unreachable, 75 lease not
 * acquired before --wait ran out, 76 lease lost, 77 stale token (LF001),
 * 1 anything else; and from sysexits.h as well, 65 for fence keys in a
 * state fence never writes, 78 for a configuration the servers refuse (a
 * Redis login; for run --pg, the options in PGOPTIONS, at a pooler).
 *
 * "run" puts the command in a process group of its own and becomes the
 * subreaper of its orphans, so that it sees every process the command
 * started: it keeps the lease until all of them have exited, and when the
 * lease is lost it stops all of them (the group, and descendants that left
 * it): SIGTERM, then SIGKILL after --grace.  In the foreground of a
 * terminal it leaves a stand-in in the shell's job, for job control (see
 * run_standin).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/signalfd.h>
#endif

#include "cli.h"

static void
usage(void)
{
	printf("%s takes leases on Redis and carries their fencing tokens into PostgreSQL.\n\n", progname);
	printf("Usage:\n");
	printf("  %s acquire RESOURCE [OPTION]...           take a lease, print FENCE_* lines\n", progname);
	printf("  %s release RESOURCE OWNER [OPTION]...     give a lease back\n", progname);
	printf("  %s extend  RESOURCE OWNER [OPTION]...     renew a lease for --ttl\n", progname);
	printf("  %s run     RESOURCE [OPTION]... [--] COMMAND [ARG]...\n", progname);
	printf("                                               run COMMAND while holding the lease\n");
	printf("  %s exec    RESOURCE --pg CONNINFO [OPTION]... [--] SQL [PARAM]...\n", progname);
	printf("                                               run one fenced SQL statement\n");
	printf("  %s show    RESOURCE [OPTION]...           owner, remaining TTL, tokens; with\n", progname);
	printf("                                               --pg, the mark and fence.stats counts\n");
	printf("\nLease options:\n");
	printf("  -t, --ttl=DURATION       lease time to live (default: 30s)\n");
	printf("  -w, --wait=DURATION      how long to retry while the lease is busy (default: 0)\n");
	printf("  -g, --grace=DURATION     run: time between SIGTERM and SIGKILL when the\n");
	printf("                           lease is lost (default: 10s)\n");
	printf("      --death-signal=SIGNAL\n");
	printf("                           run: the signal COMMAND gets if fence itself dies\n");
	printf("                           (kill -9, a crash), by name or number (default: TERM)\n");
	printf("\nConnection options:\n");
	printf("  -r, --redis=URL          where the leases live (see URLs below); given\n");
	printf("                           more than once: a quorum of independent nodes\n");
	printf("                           (default: $FENCE_REDIS_URL, else\n");
	printf("                           %s)\n", FENCE_DEFAULT_URL);
	printf("      --min-replicas=N     take a lease only once N replicas have its lock\n");
	printf("                           and token (not for a quorum; default: 0)\n");
	printf("      --replica-timeout=DURATION\n");
	printf("                           how long to wait for them (default: 1s)\n");
	printf("  -p, --pg=CONNINFO        PostgreSQL connection string; the token is\n");
	printf("                           announced there before anything else runs\n");
	printf("\nOther options:\n");
	printf("  -j, --json               print results as JSON (bytes that are not UTF-8\n");
	printf("                           come out as U+FFFD)\n");
	printf("  -V, --version            output version information, then exit\n");
	printf("  -?, --help               show this help, then exit\n");
	printf("\nURLs:\n");
	printf("  redis://[[user]:password@]host[:port][/db]      one node\n");
	printf("  unix:///path/to/socket[?db=N]                   one node\n");
	printf("  redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/MASTER[?db=N]\n");
	printf("                                the master Sentinel names (port 26379)\n");
	printf("  redis-cluster://[[user]:password@]host[:port][,host[:port]...]\n");
	printf("                                a Redis Cluster\n");
	printf("  several redis://, rediss:// or unix:// URLs, separated by whitespace in\n");
	printf("  $FENCE_REDIS_URL or given by repeated --redis: a quorum (Redlock)\n");
	printf("  rediss://, rediss-sentinel://, rediss-cluster://: the same over TLS, the\n");
	printf("  server's certificate and host name verified; query parameters (after ?,\n");
	printf("  joined by &): tls-ca-cert-file=FILE, tls-ca-cert-dir=DIR (default: the\n");
	printf("  system's CAs), tls-cert-file=FILE and tls-key-file=FILE (a client\n");
	printf("  certificate), tls-server-name=NAME (sent as SNI and verified instead of\n");
	printf("  the host), tls-insecure-skip-verify=yes (no checks at all: tests only)\n");
	printf("\nDURATION is 250ms, 10s, 2m, 1h, or a plain number of milliseconds.\n");
	printf("\nOptions go before COMMAND or SQL: what follows them is passed on as it is\n");
	printf("(\"fence exec R --pg C 'SELECT $1' -5\" binds -5); \"--\" ends the options before\n");
	printf("SQL or a COMMAND that starts with \"-\".\n");
	printf("\nrun gives COMMAND FENCE_RESOURCE, FENCE_TOKEN and FENCE_OWNER, and appends\n");
	printf("-c fence.resource=... -c fence.token=... -c fence.owner=... to PGOPTIONS.\n");
	printf("With --pg it first checks that a session opened with those options sees the\n");
	printf("token: a connection pooler may refuse them (exit 78) or drop them (a warning).\n");
	printf("It keeps the lease until COMMAND and every process it started have exited\n");
	printf("(background jobs too, and processes that left its process group); if the\n");
	printf("lease is lost, all of them get SIGTERM, then SIGKILL after --grace.\n");
	printf("SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to them; a signal ignored\n");
	printf("when fence starts (nohup) stays ignored, in fence and in COMMAND.  In a\n");
	printf("terminal, job control works as for COMMAND (Ctrl-C, Ctrl-Z, fg, bg); the lease\n");
	printf("is renewed while the job is stopped.\n");
	printf("\nOne of those signals while acquire, run or exec takes the lease is acted on\n");
	printf("once the acquire returns (--wait gives up within half a second; a second one\n");
	printf("stops fence at once): the lease is given back, exit 128+N.  exec cancels its\n");
	printf("statement.\n");
	printf("\nExit status:\n");
	printf("  0   success (run: the status of COMMAND, 128+N if killed by signal N)\n");
	printf("  64  usage error (also a TTL not above the drift margin, 1%% + 2 ms)\n");
	printf("  65  fence's keys in Redis hold what fence never writes (wrong type,\n");
	printf("      lock without expiry, token counter not a positive integer)\n");
	printf("  69  Redis or PostgreSQL unreachable\n");
	printf("  74  acquire, exec: the output could not be written (acquire gives the\n");
	printf("      lease back)\n");
	printf("  75  lease not acquired before --wait ran out\n");
	printf("  76  lease lost (run), or not held by OWNER (release, extend)\n");
	printf("  77  PostgreSQL rejected a stale token\n");
	printf("  78  configuration refused: Redis refused the login (password, ACL user,\n");
	printf("      database); TLS refused (a certificate not trusted, a key that cannot\n");
	printf("      be read, a client certificate the server wants or refuses);\n");
	printf("      run --pg: PostgreSQL (or a pooler) refuses PGOPTIONS\n");
	printf("  1   any other error\n");
}

/* --- run ----------------------------------------------------------------- */

/*
 * Signal handlers and the lease-lost callback only write a byte to this
 * pipe; the main loop does the work.  0 means "lease lost", anything else
 * is a signal number.
 */
static int wake_pipe[2] = {-1, -1};

static void
wake(unsigned char b)
{
	int			saved = errno;
	ssize_t		n;

	n = write(wake_pipe[1], &b, 1);
	(void) n;					/* a full pipe already holds a wake-up */
	errno = saved;
}

static void
on_signal(int sig)
{
	wake((unsigned char) sig);
}

static void
on_lost(fence_lease *lease, void *arg)
{
	(void) lease;
	(void) arg;
	wake(0);
}

/*
 * Append "-c NAME=VALUE" to "buf", escaping what libpq's options parser
 * would split on: whitespace and backslashes get a backslash.
 */
static int
append_option(char **buf, size_t *len, size_t *cap, const char *name, const char *value)
{
	size_t		need = strlen(name) + 2 * strlen(value) + 8;
	const char *p;

	if (*len + need >= *cap)
	{
		size_t		ncap = (*len + need) * 2;
		char	   *n = realloc(*buf, ncap);

		if (n == NULL)
			return -1;
		*buf = n;
		*cap = ncap;
	}
	if (*len > 0)
		(*buf)[(*len)++] = ' ';
	*len += sprintf(*buf + *len, "-c %s=", name);
	for (p = value; *p; p++)
	{
		if (*p == '\\' || *p == ' ' || *p == '\t' || *p == '\n' ||
			*p == '\r' || *p == '\f' || *p == '\v')
			(*buf)[(*len)++] = '\\';
		(*buf)[(*len)++] = *p;
	}
	(*buf)[*len] = '\0';
	return 0;
}

static int
set_child_env(fence_lease *l)
{
	char		token[24];
	const char *old = getenv("PGOPTIONS");
	char	   *buf = NULL;
	size_t		len = 0,
				cap = 0;
	int			rc;

	snprintf(token, sizeof(token), "%lld", fence_lease_token(l));
	if (old != NULL && *old != '\0')
	{
		cap = strlen(old) + 1;
		if ((buf = malloc(cap)) == NULL)
			return -1;
		memcpy(buf, old, cap);
		len = cap - 1;
	}
	if (append_option(&buf, &len, &cap, "fence.resource", fence_lease_resource(l)) != 0 ||
		append_option(&buf, &len, &cap, "fence.token", token) != 0 ||
		append_option(&buf, &len, &cap, "fence.owner", fence_lease_owner(l)) != 0)
	{
		free(buf);
		return -1;
	}
	rc = setenv("PGOPTIONS", buf, 1) |
		setenv("FENCE_RESOURCE", fence_lease_resource(l), 1) |
		setenv("FENCE_TOKEN", token, 1) |
		setenv("FENCE_OWNER", fence_lease_owner(l), 1);
	free(buf);
	return rc;
}

/*
 * The "options" that "conninfo" sets itself, or NULL (malloc'd).  libpq
 * takes them instead of PGOPTIONS, which is only the default.
 */
static char *
conninfo_options(const char *conninfo)
{
	PQconninfoOption *opts = PQconninfoParse(conninfo, NULL);
	PQconninfoOption *o;
	char	   *found = NULL;

	for (o = opts; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, "options") == 0 && o->val != NULL && *o->val != '\0')
			found = strdup(o->val);
	PQconninfoFree(opts);
	return found;
}

/*
 * Whether sessions opened with the child's PGOPTIONS carry the token: a
 * connection pooler may refuse the "options" startup parameter (PgBouncer
 * does, unless told to ignore it) or drop it silently (with
 * ignore_startup_parameters = options), and an "options" inside "conninfo"
 * itself wins over PGOPTIONS; then the child's guarded writes fail, with a
 * connection error or with LF002, far from the cause.  Probe once, the way
 * the child connects with "conninfo" (PGOPTIONS set in the environment,
 * which is already the child's): returns 0 when SHOW fence.token gives the
 * lease's token, 1 when the connection works but the token is not there (a
 * warning says why and what to change), -1 when the connection fails with
 * the options although it worked without them (an error is printed).
 */
static int
probe_pgoptions(const char *conninfo, fence_lease *l)
{
	const char *advice =
		"Set the token per transaction instead (SET LOCAL fence.resource and fence.token\n"
		"from $FENCE_RESOURCE and $FENCE_TOKEN, which the command gets), or pass it to\n"
		"fence.fenced_update(), or connect the command directly to PostgreSQL.\n";
	char		token[24];
	char	   *own;
	PGconn	   *pg = PQconnectdb(conninfo);
	PGresult   *res;
	int			rc;

	if (pg == NULL || PQstatus(pg) != CONNECTION_OK)
	{
		fprintf(stderr, "%s: PostgreSQL at --pg refuses the fence settings in PGOPTIONS\n"
				"(a connection pooler? PgBouncer refuses the options parameter): %s%s",
				progname, pg ? PQerrorMessage(pg) : "out of memory\n", advice);
		PQfinish(pg);
		return -1;
	}
	snprintf(token, sizeof(token), "%lld", fence_lease_token(l));
	res = PQexec(pg, "SHOW fence.token");
	rc = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		strcmp(PQgetvalue(res, 0, 0), token) == 0 ? 0 : 1;
	if (rc != 0 && (own = conninfo_options(conninfo)) != NULL)
	{
		fprintf(stderr, "%s: warning: the connection string of --pg sets options (\"%s\"),\n"
				"which libpq uses instead of PGOPTIONS: a command that connects with it gets\n"
				"no fence settings, and its guarded writes will fail with LF002.  Move those\n"
				"options into PGOPTIONS (fence run appends the fence settings to it) and leave\n"
				"options out of the connection string, or add -c fence.resource=$FENCE_RESOURCE\n"
				"-c fence.token=$FENCE_TOKEN -c fence.owner=$FENCE_OWNER to them where the\n"
				"command connects.\n", progname, own);
		free(own);
	}
	else if (rc != 0)
		fprintf(stderr, "%s: warning: sessions at --pg do not see the fence settings in PGOPTIONS\n"
				"(a connection pooler dropping them?): guarded writes of the command will fail\n"
				"with LF002 unless it sets the token itself.\n%s", progname, advice);
	PQclear(res);
	PQfinish(pg);
	return rc;
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#ifdef __linux__
/* A process from /proc: its parent and its process group. */
typedef struct proc_entry
{
	pid_t		pid;
	pid_t		ppid;
	pid_t		pgrp;
} proc_entry;

static int
by_ppid(const void *a, const void *b)
{
	pid_t		x = ((const proc_entry *) a)->ppid,
				y = ((const proc_entry *) b)->ppid;

	return x < y ? -1 : x > y;
}

/* Read /proc into a malloc'd array sorted by parent; -1 when it cannot. */
static int
read_procs(proc_entry **out)
{
	DIR		   *d = opendir("/proc");
	struct dirent *e;
	proc_entry *a = NULL;
	int			n = 0,
				cap = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
	{
		char		path[64],
					buf[512],
				   *p;
		FILE	   *f;
		size_t		len;
		long		pidv = strtol(e->d_name, &p, 10);
		int			ppid,
					pgrp;

		if (pidv <= 0 || *p != '\0')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pidv);
		if ((f = fopen(path, "re")) == NULL)
			continue;			/* gone meanwhile */
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		/* "pid (comm) state ppid pgrp ...": comm may hold anything */
		if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 1, " %*c %d %d", &ppid, &pgrp) != 2)
			continue;
		if (n == cap)
		{
			proc_entry *na = realloc(a, (cap = cap ? 2 * cap : 256) * sizeof(*a));

			if (na == NULL)
				break;
			a = na;
		}
		a[n].pid = (pid_t) pidv;
		a[n].ppid = (pid_t) ppid;
		a[n].pgrp = (pid_t) pgrp;
		n++;
	}
	closedir(d);
	qsort(a, n, sizeof(*a), by_ppid);
	*out = a;
	return n;
}

/*
 * Send "sig" to every process descended from this one that is not in the
 * process group "pgid" (it called setsid or setpgid): walk the tree from
 * our pid down, children found by their parent in the sorted table.
 */
static void
signal_escaped(pid_t pgid, int sig)
{
	proc_entry *a = NULL;
	pid_t	   *queue;
	int			n = read_procs(&a),
				head = 0,
				tail = 0;

	if (n <= 0 || (queue = malloc((n + 1) * sizeof(pid_t))) == NULL)
	{
		free(a);
		return;
	}
	queue[tail++] = getpid();
	while (head < tail)
	{
		pid_t		parent = queue[head++];
		int			lo = 0,
					hi = n;

		while (lo < hi)			/* the first entry with that parent */
		{
			int			mid = (lo + hi) / 2;

			if (a[mid].ppid < parent)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && a[lo].ppid == parent && tail <= n; lo++)
		{
			queue[tail++] = a[lo].pid;
			if (a[lo].pgrp != pgid)
				kill(a[lo].pid, sig);
		}
	}
	free(queue);
	free(a);
}
#endif

/*
 * Send "sig" to everything the command started: its process group, and on
 * Linux also the descendants that left the group.
 */
static void
signal_all(pid_t pgid, int sig)
{
	kill(-pgid, sig);
#ifdef __linux__
	signal_escaped(pgid, sig);
#endif
}

/*
 * Is everything the command started gone?  Our children are reaped as they
 * go (the command's status goes to "*status"); when "stopsig" is not NULL,
 * a stop of the command itself is reported there.  With PR_SET_CHILD_SUBREAPER
 * its orphans become our children, so no child left means no descendant
 * left.  Where that is missing, an empty process group is the sign.
 */
static int
all_gone(pid_t pid, int *status, int *main_done, int *stopsig)
{
	pid_t		w;
	int			st;

	while ((w = waitpid(-1, &st, WNOHANG | (stopsig ? WUNTRACED : 0))) > 0)
	{
		if (WIFSTOPPED(st))
		{
			if (w == pid)
				*stopsig = WSTOPSIG(st);
		}
		else if (w == pid)
		{
			*status = st;
			*main_done = 1;
		}
	}
	if (w == 0 || errno != ECHILD)
		return 0;
	return kill(-pid, 0) != 0 && errno == ESRCH;
}

/*
 * Job control.  A shell knows only the process it started, and takes the
 * job for stopped when that process stops.  But a stopped fence would stop
 * renewing the lease, and a fence that does not stop while its command is
 * stopped leaves the shell waiting, the terminal with nobody (Ctrl-Z
 * "hangs").  So in the foreground of a terminal, run splits in two once it
 * holds the lease: the process the shell started stays in the job's process
 * group as its stand-in (run_standin), and a child, the supervisor, in a
 * process group of its own, renews the lease and runs the command, which
 * gets the terminal.  When the command stops (Ctrl-Z, or a read from the
 * terminal in the background), the supervisor gives the terminal back to
 * the job's group and stops the stand-in with the same signal: the shell
 * sees its job stopped, and the heartbeat goes on renewing the lease.  fg
 * and bg continue the stand-in, which tells the supervisor: it continues
 * the command, handing it the terminal first when the shell made the job
 * the foreground again.  Signals sent to the stand-in are passed on to the
 * supervisor, and its exit status becomes the stand-in's.  The supervisor
 * dies with the stand-in (PR_SET_PDEATHSIG, SIGTERM: the command is
 * stopped and the lease given back).
 */
static pid_t standin_supervisor;

static void
standin_pass_on(int sig)
{
	int			saved = errno;

	kill(standin_supervisor, sig);
	errno = saved;
}

/*
 * The stand-in's part: pass signals on to "supervisor" until it exits, and
 * exit as it did.  The signals it passes on were blocked across the fork;
 * "oldmask" is the mask to restore once its handlers are in place.
 */
static int
run_standin(pid_t supervisor, const sigset_t *oldmask, const struct sigaction *orig_chld)
{
	struct sigaction sa,
				cur;
	pid_t		w;
	int			st,
				i;

	standin_supervisor = supervisor;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = standin_pass_on;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NFORWARDED; i++)
	{
		/* ignored when we started: ignored still, and not passed on */
		sigaction(forwarded[i], NULL, &cur);
		if (cur.sa_handler != SIG_IGN)
			sigaction(forwarded[i], &sa, NULL);
	}
	sigaction(SIGCONT, &sa, NULL);
	sigaction(SIGCHLD, orig_chld, NULL);
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	while ((w = waitpid(supervisor, &st, 0)) != supervisor)
		if (w < 0 && errno != EINTR)
			return EXIT_FAIL;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return EXIT_FAIL;
}

static int
cmd_run(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	fence_lease *l;
	struct sigaction sa,
				orig[NFORWARDED],
				orig_chld,
				orig_ttou;
	sigset_t	job_signals,
				oldmask;
	stop_guard	g;
	pid_t		pid,
				supervisor,
				standin = 0,
				job_pgrp = 0;
	int			code = 0,
				i,
				status = 0,
				stopsig;
	int			lost = 0,
				main_done = 0,
				done = 0,
				started = 0,
				own_tty = 0;
	long long	kill_at = 0;

	if (argc < 2)
		return usage_error("run needs RESOURCE and a command after --%s", "");
	l = take_lease(ctx, o, argv[0], NULL, &code, &g);
	if (g.sig != 0)
		return give_back(ctx, l, NULL, g.sig);
	if (l == NULL)
		return code;

	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
	{
		fprintf(stderr, "%s: could not create pipe: %s\n", progname, strerror(errno));
		code = EXIT_FAIL;
		goto release;
	}

	/*
	 * Forward the signals that stop a job, except those ignored when we
	 * started (nohup, a shell's trap ''): those stay ignored, here and in
	 * the command, which inherits every disposition we found.  Children
	 * that stop wake us too (job control, below).
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, &orig_chld);
	sigaction(SIGTTOU, NULL, &orig_ttou);
	for (i = 0; i < NFORWARDED; i++)
	{
		sigaction(forwarded[i], NULL, &orig[i]);
		if (orig[i].sa_handler != SIG_IGN)
			sigaction(forwarded[i], &sa, NULL);
	}
	/* handlers in place: signals may come (to the command, once started) */
	pthread_sigmask(SIG_SETMASK, &g.old, NULL);

	if (set_child_env(l) != 0)
	{
		fprintf(stderr, "%s: out of memory\n", progname);
		code = EXIT_FAIL;
		goto release;
	}
	/* a command that could not even connect is not worth starting */
	if (o->pg != NULL && probe_pgoptions(o->pg, l) < 0)
	{
		code = EXIT_CONFIG;
		goto release;
	}

	/* In the foreground of a terminal: a stand-in for the shell's job. */
	own_tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	if (own_tty)
	{
		job_pgrp = getpgrp();
		sigemptyset(&job_signals);
		for (i = 0; i < NFORWARDED; i++)
			sigaddset(&job_signals, forwarded[i]);
		sigaddset(&job_signals, SIGCONT);
		sigaddset(&job_signals, SIGCHLD);
		/* no signal may fall between the fork and either side's handlers */
		sigprocmask(SIG_BLOCK, &job_signals, &oldmask);
		standin = getpid();
		pid = fork();
		if (pid < 0)
		{
			sigprocmask(SIG_SETMASK, &oldmask, NULL);
			fprintf(stderr, "%s: could not fork: %s\n", progname, strerror(errno));
			code = EXIT_FAIL;
			goto release;
		}
		if (pid > 0)
		{
			/* the lease is the supervisor's now: not given back here */
			code = run_standin(pid, &oldmask, &orig_chld);
			fence_lease_free(l);
			return code;
		}
		setpgid(0, 0);
#ifdef PR_SET_PDEATHSIG
		(void) prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
#endif
		/* the terminal is handed over from a background group */
		signal(SIGTTOU, SIG_IGN);
		sigaction(SIGCONT, &sa, NULL);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		/* the stand-in died before PR_SET_PDEATHSIG took hold */
		if (getppid() != standin)
		{
			code = EXIT_FAIL;
			goto release;
		}
	}

	if (fence_heartbeat_start(ctx, l, on_lost, NULL) != FENCE_OK)
	{
		code = fail(ctx);
		goto release;
	}
#ifdef PR_SET_CHILD_SUBREAPER
	/* the command's orphans become ours: we see them, and wait for them */
	(void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif

	supervisor = getpid();
	pid = fork();
	if (pid < 0)
	{
		fprintf(stderr, "%s: could not fork: %s\n", progname, strerror(errno));
		code = EXIT_FAIL;
		goto release;
	}
	if (pid == 0)
	{
		sigaction(SIGCHLD, &orig_chld, NULL);
		for (i = 0; i < NFORWARDED; i++)
			sigaction(forwarded[i], &orig[i], NULL);
		sigaction(SIGTTOU, &orig_ttou, NULL);
#ifdef PR_SET_PDEATHSIG
		/*
		 * If fence dies (kill -9, a crash) nobody renews the lease: the
		 * command must not work on.  The signal comes when the thread that
		 * forked exits, our main thread, which lives as long as we do.  A
		 * fence that died before this took hold is no parent any more.
		 */
		if (prctl(PR_SET_PDEATHSIG, o->death_signal, 0, 0, 0) == 0 && getppid() != supervisor)
			_exit(128 + o->death_signal);
#endif
		setpgid(0, 0);
		if (own_tty)
		{
			/* as shells do: take the terminal before exec, or a read from it
			 * could stop the command (SIGTTIN) before the parent hands it over */
			sigaction(SIGTTOU, &(struct sigaction) {.sa_handler = SIG_IGN}, NULL);
			tcsetpgrp(STDIN_FILENO, getpid());
			sigaction(SIGTTOU, &orig_ttou, NULL);
		}
		execvp(argv[1], argv + 1);
		fprintf(stderr, "%s: could not run \"%s\": %s\n", progname, argv[1], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	started = 1;
	/* Both sides set the group, so neither can race the other. */
	setpgid(pid, pid);
	if (own_tty)
		tcsetpgrp(STDIN_FILENO, pid);

	/*
	 * The lease covers the command and everything it started: renew it
	 * until all of them are gone (background jobs too), then give it back.
	 * When it is lost, all of them get SIGTERM, and SIGKILL after --grace.
	 */
	while (!done)
	{
		struct pollfd pfd = {wake_pipe[0], POLLIN, 0};
		int			timeout = -1;
		unsigned char buf[64];
		ssize_t		n;

		if (lost)
		{
			long long	left = kill_at - now_ms();

			timeout = left <= 0 ? 50 : (left > 50 ? 50 : (int) left);
		}
		else if (main_done)
			timeout = 100;		/* orphans of other parents end unseen */
		if (poll(&pfd, 1, timeout) < 0 && errno != EINTR)
			break;
		while ((n = read(wake_pipe[0], buf, sizeof(buf))) > 0)
		{
			for (i = 0; i < n; i++)
			{
				if (buf[i] == 0 && !lost)
				{
					lost = 1;
					fprintf(stderr, "%s: lease on \"%s\" lost; stopping the command\n",
							progname, fence_lease_resource(l));
					signal_all(pid, SIGTERM);
					/* a stopped command sees SIGTERM only once continued */
					signal_all(pid, SIGCONT);
					kill_at = now_ms() + o->grace_ms;
				}
				else if (buf[i] == SIGCONT && own_tty)
				{
					/* fg: the shell gave the job's group the terminal */
					if (tcgetpgrp(STDIN_FILENO) == job_pgrp)
						tcsetpgrp(STDIN_FILENO, pid);
					signal_all(pid, SIGCONT);
				}
				else if (buf[i] != 0 && buf[i] != SIGCHLD)
				{
					signal_all(pid, buf[i]);

					/*
					 * A stopped command sees a signal that ends it only once
					 * continued, as the shell's kill does for a stopped job:
					 * without it, "kill -9 %1" of a stopped job (fence gets
					 * SIGTERM as its stand-in dies) would leave the command
					 * stopped and the lease renewed for ever.
					 */
					if (buf[i] != SIGCONT)
						signal_all(pid, SIGCONT);
				}
			}
		}
		stopsig = 0;
		done = all_gone(pid, &status, &main_done, own_tty ? &stopsig : NULL);
		if (stopsig != 0 && !lost)
		{
			/* the command stopped: so does the job, for its shell */
			if (tcgetpgrp(STDIN_FILENO) == pid)
				tcsetpgrp(STDIN_FILENO, job_pgrp);
			kill(standin, stopsig);
		}
		/* past the grace period, SIGKILL whatever is left, until it is gone */
		if (lost && !done && now_ms() >= kill_at)
			signal_all(pid, SIGKILL);
	}
	if (own_tty)
	{
		if (tcgetpgrp(STDIN_FILENO) == pid)
			tcsetpgrp(STDIN_FILENO, job_pgrp);
		/* a job that stopped ends now: its stand-in must run to exit */
		kill(standin, SIGCONT);
	}

	if (lost)
		code = EXIT_LOST;
	else if (!main_done)
		code = EXIT_FAIL;
	else if (WIFEXITED(status))
		code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		code = 128 + WTERMSIG(status);
	else
		code = EXIT_FAIL;

release:
	fence_heartbeat_stop(l);
	if (!lost && fence_release(ctx, l) != FENCE_OK)
	{
		/*
		 * The lock is another owner's: the lease passed on while the
		 * command ran (a failover to a replica without the lock, an
		 * eviction, a stall), and only this compare-and-DEL saw it.  That
		 * is what 76 says, whatever the command's own status.
		 */
		if (ctx->err == FENCE_ERR_LOST && started)
		{
			fprintf(stderr, "%s: %s: it was lost while the command ran\n",
					progname, ctx->errstr);
			code = EXIT_LOST;
		}
		else
			fprintf(stderr, "%s: warning: %s\n", progname, ctx->errstr);
	}
	fence_lease_free(l);
	return code;
}

/* --- main ---------------------------------------------------------------- */

/*
 * The verbs, and how many arguments each takes before what it passes on:
 * after RESOURCE and SQL, exec's parameters, and after RESOURCE and the
 * command's name, run's arguments, are taken as they are, options or not.
 */
typedef struct verb
{
	const char *name;
	int			fixed;			/* arguments after the verb */
	int			variadic;		/* more may follow, never parsed */
	const char *needs;			/* for the usage error */
	int			(*fn) (fence_ctx *ctx, const options *o, int argc, char **argv);
} verb;

static const verb verbs[] = {
	{"acquire", 1, 0, "exactly one argument: RESOURCE", cmd_acquire},
	{"release", 2, 0, "two arguments: RESOURCE OWNER", cmd_release},
	{"extend", 2, 0, "two arguments: RESOURCE OWNER", cmd_extend},
	{"run", 2, 1, "RESOURCE and a command after --", cmd_run},
	{"exec", 2, 1, "RESOURCE, --pg CONNINFO and SQL", cmd_exec},
	{"show", 1, 0, "exactly one argument: RESOURCE", cmd_show},
};

static const verb *
find_verb(const char *name)
{
	size_t		i;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

/*
 * Usage errors, all reported before anything is contacted ("err" is the
 * first one parsing found).  Returns 0 when the command line is good, and
 * fills in the Redis URL.
 */
static int
check_command_line(options *o, const verb *v, const char *err, int nargs, char **args)
{
	char		errbuf[256];
	if (*err)
		return usage_error("%s", err);
	if (v == NULL)
		return usage_error("no command given (acquire, release, extend, run, exec or show)%s", "");
	if (nargs < v->fixed || (!v->variadic && nargs > v->fixed) ||
		(v->fn == cmd_exec && o->pg == NULL))
	{
		snprintf(errbuf, sizeof(errbuf), "%s needs %s", v->name, v->needs);
		return usage_error("%s", errbuf);
	}
	if (fence_check_resource(args[0], errbuf, sizeof(errbuf)) != FENCE_OK ||
		fence_check_ttl(o->ttl_ms, errbuf, sizeof(errbuf)) != FENCE_OK)
		return usage_error("%s", errbuf);
	if (o->wait_ms > FENCE_MAX_TTL_MS)
	{
		snprintf(errbuf, sizeof(errbuf), "--wait must be at most %lld ms", FENCE_MAX_TTL_MS);
		return usage_error("%s", errbuf);
	}
	if ((v->fn == cmd_release || v->fn == cmd_extend) && *args[1] == '\0')
		return usage_error("OWNER must not be empty%s", "");

	if (o->redis == NULL)
		o->redis = getenv("FENCE_REDIS_URL");
	if (o->redis == NULL || *o->redis == '\0')
		o->redis = FENCE_DEFAULT_URL;
	if (fence_check_url(o->redis, errbuf, sizeof(errbuf)) != FENCE_OK)
		return usage_error("%s", errbuf);
	if (skips_verify(o->redis))
		fprintf(stderr, "%s: warning: tls-insecure-skip-verify=yes: the Redis server's certificate is not checked, so anyone on the way can pose as it (for tests only)\n",
				progname);
	if (o->min_replicas > 0 && is_quorum(o->redis))
		return usage_error("--min-replicas needs one master (one node, Sentinel or Cluster), not a quorum%s", "");
	if (o->min_replicas > 0 &&
		(o->replica_timeout_ms <= 0 || o->replica_timeout_ms >= FENCE_DEFAULT_COMMAND_TIMEOUT_MS))
	{
		snprintf(errbuf, sizeof(errbuf), "--replica-timeout must be between 1 ms and %d ms",
				 FENCE_DEFAULT_COMMAND_TIMEOUT_MS - 1);
		return usage_error("%s", errbuf);
	}
	return 0;
}

/*
 * A standard descriptor that was closed (">&-") would be the first socket
 * fence opens, and what it prints would go to Redis or PostgreSQL.  Hold
 * each closed one with /dev/null, opened read-only, so that writing to it
 * still fails as it would have.
 */
static void
hold_std_fds(void)
{
	int			fd;

	for (fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
			open("/dev/null", O_RDONLY) != fd)
			exit(EXIT_FAIL);	/* cannot happen: the lowest free one */
}

int
main(int argc, char **argv)
{
	static const struct option long_options[] = {
		{"redis", required_argument, NULL, 'r'},
		{"ttl", required_argument, NULL, 't'},
		{"wait", required_argument, NULL, 'w'},
		{"pg", required_argument, NULL, 'p'},
		{"grace", required_argument, NULL, 'g'},
		{"json", no_argument, NULL, 'j'},
		{"min-replicas", required_argument, NULL, 'm' + 256},
		{"replica-timeout", required_argument, NULL, 'T' + 256},
		{"death-signal", required_argument, NULL, 'D' + 256},
		{"help", no_argument, NULL, '?' + 256},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	options		o;
	char		errbuf[256],
				usage_err[320] = "";
	const verb *v = NULL;
	fence_ctx  *ctx;
	int			c,
				code = 0,
				help = 0,
				version = 0,
				nargs = 0;
	char	  **args;

	hold_std_fds();
	args = calloc(argc + 1, sizeof(char *));
	if (args == NULL)
	{
		fprintf(stderr, "%s: out of memory\n", progname);
		return EXIT_FAIL;
	}
	memset(&o, 0, sizeof(o));
	o.ttl_ms = DEFAULT_TTL_MS;
	o.grace_ms = DEFAULT_GRACE_MS;
	o.replica_timeout_ms = DEFAULT_REPLICA_TIMEOUT_MS;
	o.death_signal = SIGTERM;

	/*
	 * Options may come anywhere among the verb's own arguments.  "-" at the
	 * start of the option string hands those over in order (getopt_long
	 * would otherwise move every non-option to the end and parse an SQL
	 * parameter "-5" as an option); once a verb that passes arguments on
	 * has its own, the rest is taken as it is.  "--" ends the options, too.
	 * As with pg_isready, --help and --version win over any error.
	 */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-:r:t:w:p:g:jV", long_options, NULL)) != -1)
	{
		long long  *dst = NULL;
		const char *what = NULL;

		switch (c)
		{
			case 1:				/* the verb, then its arguments, in order */
				if (nargs == 0 && (v = find_verb(optarg)) == NULL && !*usage_err)
					snprintf(usage_err, sizeof(usage_err), "unknown command \"%s\"", optarg);
				args[nargs++] = optarg;
				break;
			case 'r':
				if (o.redis == NULL)
					o.redis = optarg;
				else if (add_quorum_url(&o, optarg) != 0)
				{
					fprintf(stderr, "%s: out of memory\n", progname);
					free(args);
					return EXIT_FAIL;
				}
				break;
			case 'm' + 256:
				{
					char	   *end;
					long		n = strtol(optarg, &end, 10);

					if ((*optarg < '0' || *optarg > '9' || *end != '\0' || n > 100) && !*usage_err)
						snprintf(usage_err, sizeof(usage_err),
								 "--min-replicas must be a number from 0 to 100, not \"%s\"", optarg);
					else
						o.min_replicas = (int) n;
				}
				break;
			case 'T' + 256:
				dst = &o.replica_timeout_ms;
				what = "--replica-timeout";
				break;
			case 'D' + 256:
				if ((o.death_signal = parse_signal(optarg)) == 0 && !*usage_err)
					snprintf(usage_err, sizeof(usage_err),
							 "--death-signal must be a signal name (TERM, KILL...) or number, not \"%s\"",
							 optarg);
				break;
			case 'p':
				o.pg = optarg;
				break;
			case 'j':
				o.json = 1;
				break;
			case 't':
				dst = &o.ttl_ms;
				what = "--ttl";
				break;
			case 'w':
				dst = &o.wait_ms;
				what = "--wait";
				break;
			case 'g':
				dst = &o.grace_ms;
				what = "--grace";
				break;
			case 'V':
				version = 1;
				break;
			case '?' + 256:
				help = 1;
				break;
			case ':':
				if (!*usage_err)
					snprintf(usage_err, sizeof(usage_err), "option '%s' requires an argument",
							 argv[optind - 1]);
				break;
			default:
				if (optopt == '?')
					help = 1;
				else if (*usage_err)
					;
				else if (optopt)
					snprintf(usage_err, sizeof(usage_err), "invalid option -- '%c'", optopt);
				else
					snprintf(usage_err, sizeof(usage_err), "unrecognized option '%s'", argv[optind - 1]);
				break;
		}
		if (dst != NULL && fence_parse_duration(optarg, dst, errbuf, sizeof(errbuf)) != FENCE_OK &&
			!*usage_err)
			snprintf(usage_err, sizeof(usage_err), "%s: %s", what, errbuf);
		/* the verb has its own arguments: what follows is passed on */
		if (c == 1 && v != NULL && v->variadic && nargs == 1 + v->fixed)
			break;
	}
	while (optind < argc)
		args[nargs++] = argv[optind++];
	if (help)
	{
		usage();
		free(args);
		free(o.redis_list);
		return 0;
	}
	if (version)
	{
		printf("fence (pgfence) %s\n", FENCE_VERSION);
		free(args);
		free(o.redis_list);
		return 0;
	}
	code = check_command_line(&o, v, usage_err, nargs - 1, args + 1);
	if (code == 0)
	{
		if ((ctx = redis_connect(&o, &code)) != NULL)
		{
			code = v->fn(ctx, &o, nargs - 1, args + 1);
			fence_free(ctx);
		}
	}
	free(args);
	free(o.redis_list);
	fflush(stdout);
	return code;
}
