/*
 * client/cli/run.c
 *	  fence run: hold a lease while a command runs.
 *
 * "run" puts the command in a process group of its own and becomes the
 * subreaper of its orphans, so that it sees every process the command
 * started (procs.c): it keeps the lease until all of them have exited, and
 * when the lease is lost it stops all of them (the group, and descendants
 * that left it): SIGTERM, then SIGKILL after --grace.  In the foreground
 * of a terminal it leaves a stand-in in the shell's job, for job control
 * (job.c).  The command finds the token in its environment and
 * in PGOPTIONS (carry.c).
 */
#include <errno.h>
#include <fcntl.h>
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
#endif

#include "cli.h"

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

/* the member of the set that was lost first (its name, for the message) */
static fence_lease *volatile lost_member;

static void
on_lost(fence_leases *set, fence_lease *lease, void *arg)
{
	(void) set;
	(void) arg;
	lost_member = lease;
	wake(0);
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * What one run keeps between its phases: take the leases, carry their
 * tokens to the command, supervise the command, give the leases back.
 */
typedef struct run_state
{
	fence_ctx  *ctx;
	const options *o;
	fence_leases *set;
	char	   *tokens;			/* the fence.tokens carried, or NULL */
	struct sigaction sa,		/* on_signal, for the forwarded ones */
				orig[NFORWARDED],
				orig_chld,
				orig_ttou;
	int			own_tty;		/* in the foreground of a terminal */
	pid_t		job_pgrp,		/* the shell's job, with own_tty */
				standin,		/* the stand-in's pid, with own_tty */
				pid;			/* the command */
	int			started,		/* the command was started */
				lost,			/* a lease was lost meanwhile */
				main_done,		/* the command itself has exited */
				status;			/* its wait status, once main_done */
	long long	kill_at;		/* lost: when SIGKILL follows SIGTERM */
} run_state;

/*
 * Take the leases (one RESOURCE is a set of one; -R, a set), guarded
 * against the signals that end fence, which stay blocked.  0, or the exit
 * status.
 */
static int
run_take(run_state *r, int argc, char **argv, int first, stop_guard *g)
{
	const options *o = r->o;
	int			code;

	if (argc < first + 1)
		return usage_error("run needs RESOURCE and a command after --%s", "");
	if ((code = keep_password_from_child(o)) != 0)
		return code;
	/* fence holds the lease while the command runs: its pid, their name */
	if ((code = name_owner(r->ctx, o, argv[first])) != 0)
		return code;
	r->set = take_set(r->ctx, o, first ? (const char *const *) argv : o->resources,
					  first ? 1 : (size_t) o->nresources, NULL, 1, &code, g);
	if (g->sig != 0)
	{
		code = give_back_on_signal(r->ctx, r->set, NULL, g->sig);
		r->set = NULL;
		return code;
	}
	if (r->set == NULL)
		return code;
	if (o->pg == NULL && !o->no_pg)
		note("warning: the lease on \"%s\" was taken with no PostgreSQL to announce it to\n"
			 "(no --pg, FENCE_PG, PGSERVICE, PGHOST or PGDATABASE): PostgreSQL refuses a\n"
			 "stale holder's writes only for a token it has heard of.  Give --pg (or set\n"
			 "FENCE_PG), or --no-pg when the command writes nothing that is fenced.",
			 fence_lease_resource(fence_leases_member(r->set, 0)));
	else if (o->pg != NULL)
		trace("announced to PostgreSQL at %s", o->pg_from);
	return 0;
}

/*
 * Forward the signals that stop a job, except those ignored when we
 * started (nohup, a shell's trap ''): those stay ignored, here and in the
 * command, which inherits every disposition we found.  Children that stop
 * wake us too (job control).  Then the signals blocked while the leases
 * were taken may come.  0, or the exit status.
 */
static int
run_handlers(run_state *r, const stop_guard *g)
{
	int			i;

	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
	{
		fprintf(stderr, "%s: could not create pipe: %s\n", progname, strerror(errno));
		return EXIT_FAIL;
	}
	memset(&r->sa, 0, sizeof(r->sa));
	r->sa.sa_handler = on_signal;
	r->sa.sa_flags = SA_RESTART;
	sigemptyset(&r->sa.sa_mask);
	sigaction(SIGCHLD, &r->sa, &r->orig_chld);
	sigaction(SIGTTOU, NULL, &r->orig_ttou);
	for (i = 0; i < NFORWARDED; i++)
	{
		sigaction(forwarded[i], NULL, &r->orig[i]);
		if (r->orig[i].sa_handler != SIG_IGN)
			sigaction(forwarded[i], &r->sa, NULL);
	}
	/* handlers in place: signals may come (to the command, once started) */
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
	return 0;
}

/*
 * What the command carries (carry.c): the tokens in its environment and
 * PGOPTIONS, merged with settings inherited from an outer run.  With --pg
 * (not --pooler), first check that a session opened with them works: a
 * command that could not even connect is not worth starting (the settings
 * refused: a configuration to change, 78; PostgreSQL unreachable: an
 * outage, 69).  0, or the exit status.
 */
static int
run_carry(run_state *r)
{
	const options *o = r->o;
	int			code;

	pgoptions_keep();
	code = carry_env(r->set, o->nresources > 0, &r->tokens);
	/* behind a pooler: FENCE_* for the command, PGOPTIONS as it was */
	if (code == 0 && o->pooler && pgoptions_restore() != 0)
		code = -1;
	if (code != 0)
	{
		if (code != -2)
			fprintf(stderr, "%s: out of memory\n", progname);
		return code == -2 ? EXIT_USAGE : EXIT_FAIL;
	}
	if (o->pg != NULL && !o->pooler && (code = carry_probe(o->pg, r->set, r->tokens)) < 0)
		return code == -2 ? EXIT_UNAVAIL : EXIT_CONFIG;
	return 0;
}

/*
 * In the foreground of a terminal, split in two (job.c): the stand-in
 * returns 1 with its exit status in "*code" (the leases are the
 * supervisor's: not given back there); the supervisor returns 0.
 */
static int
run_split_for_job(run_state *r, int *code)
{
	r->own_tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	if (!r->own_tty)
		return 0;
	return job_split(&r->sa, &r->orig_chld, &r->job_pgrp, &r->standin, code);
}

/*
 * Start the heartbeat, then the command ("argv") in a process group of its
 * own, with the signal dispositions fence found.  0, or the exit status.
 */
static int
run_start(run_state *r, char **argv)
{
	pid_t		supervisor;
	int			i;

	if (fence_leases_heartbeat_start(r->ctx, r->set, on_lost, NULL) != FENCE_OK)
		return fail(r->ctx);
	trace("renewing the lease%s every %lld ms while the command runs",
		  fence_leases_count(r->set) > 1 ? "s" : "",
		  fence_lease_ttl(fence_leases_member(r->set, 0)) / 3);
#ifdef PR_SET_CHILD_SUBREAPER
	/* the command's orphans become ours: we see them, and wait for them */
	(void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif

	supervisor = getpid();
	r->pid = fork();
	if (r->pid < 0)
	{
		fprintf(stderr, "%s: could not fork: %s\n", progname, strerror(errno));
		return EXIT_FAIL;
	}
	if (r->pid == 0)
	{
		sigaction(SIGCHLD, &r->orig_chld, NULL);
		for (i = 0; i < NFORWARDED; i++)
			sigaction(forwarded[i], &r->orig[i], NULL);
		sigaction(SIGTTOU, &r->orig_ttou, NULL);
#ifdef PR_SET_PDEATHSIG
		/*
		 * If fence dies (kill -9, a crash) nobody renews the lease: the
		 * command must not work on.  The signal comes when the thread that
		 * forked exits, our main thread, which lives as long as we do.  A
		 * fence that died before this took hold is no parent any more.
		 */
		if (prctl(PR_SET_PDEATHSIG, r->o->death_signal, 0, 0, 0) == 0 && getppid() != supervisor)
			_exit(128 + r->o->death_signal);
#endif
		setpgid(0, 0);
		if (r->own_tty)
		{
			/* as shells do: take the terminal before exec, or a read from it
			 * could stop the command (SIGTTIN) before the parent hands it over */
			sigaction(SIGTTOU, &(struct sigaction) {.sa_handler = SIG_IGN}, NULL);
			tcsetpgrp(STDIN_FILENO, getpid());
			sigaction(SIGTTOU, &r->orig_ttou, NULL);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "%s: could not run \"%s\": %s\n", progname, argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	r->started = 1;
	/* Both sides set the group, so neither can race the other. */
	setpgid(r->pid, r->pid);
	if (r->own_tty)
		tcsetpgrp(STDIN_FILENO, r->pid);
	return 0;
}

/* One wake-up byte: a lease lost (0), or a signal to pass on. */
static void
run_woken(run_state *r, unsigned char b)
{
	if (b == 0 && !r->lost)
	{
		char		msg[FENCE_ERRSTR_LEN + 64];

		r->lost = 1;
		snprintf(msg, sizeof(msg), "lease on \"%s\" lost; stopping the command",
				 fence_lease_resource(lost_member));
		report_error(EXIT_LOST, msg, NULL);
		signal_all(r->pid, SIGTERM);
		/* a stopped command sees SIGTERM only once continued */
		signal_all(r->pid, SIGCONT);
		r->kill_at = now_ms() + r->o->grace_ms;
	}
	else if (b == SIGCONT && r->own_tty)
	{
		/* fg: the shell gave the job's group the terminal */
		if (tcgetpgrp(STDIN_FILENO) == r->job_pgrp)
			tcsetpgrp(STDIN_FILENO, r->pid);
		signal_all(r->pid, SIGCONT);
	}
	else if (b != 0 && b != SIGCHLD)
	{
		signal_all(r->pid, b);

		/*
		 * A stopped command sees a signal that ends it only once continued,
		 * as the shell's kill does for a stopped job: without it, "kill -9
		 * %1" of a stopped job (fence gets SIGTERM as its stand-in dies)
		 * would leave the command stopped and the lease renewed for ever.
		 */
		if (b != SIGCONT)
			signal_all(r->pid, SIGCONT);
	}
}

/*
 * The lease covers the command and everything it started: renew it until
 * all of them are gone (background jobs too).  When it is lost, all of
 * them get SIGTERM, and SIGKILL after --grace.  Returns the exit status:
 * the command's, 76 when the lease was lost.
 */
static int
run_supervise(run_state *r)
{
	int			done = 0,
				stopsig,
				i;

	while (!done)
	{
		struct pollfd pfd = {wake_pipe[0], POLLIN, 0};
		int			timeout = -1;
		unsigned char buf[64];
		ssize_t		n;

		if (r->lost)
		{
			long long	left = r->kill_at - now_ms();

			timeout = left <= 0 ? 50 : (left > 50 ? 50 : (int) left);
		}
		else if (r->main_done)
			timeout = 100;		/* orphans of other parents end unseen */
		else if (cli_verbosity > 0)
			timeout = (int) (fence_lease_ttl(fence_leases_member(r->set, 0)) / 3);	/* to say how it goes */
		if ((n = poll(&pfd, 1, timeout)) < 0 && errno != EINTR)
			break;
		for (size_t m = 0; n == 0 && !r->lost && !r->main_done && m < fence_leases_count(r->set); m++)
		{
			fence_lease *l = fence_leases_member(r->set, m);

			trace("lease on \"%s\" %s", fence_lease_resource(l),
				  fence_lease_state(l) == FENCE_LEASE_HELD ? "renewed" :
				  "suspect: Redis does not answer");
		}
		while ((n = read(wake_pipe[0], buf, sizeof(buf))) > 0)
			for (i = 0; i < n; i++)
				run_woken(r, buf[i]);
		stopsig = 0;
		done = all_gone(r->pid, &r->status, &r->main_done, r->own_tty ? &stopsig : NULL);
		if (stopsig != 0 && !r->lost)
		{
			/* the command stopped: so does the job, for its shell */
			if (tcgetpgrp(STDIN_FILENO) == r->pid)
				tcsetpgrp(STDIN_FILENO, r->job_pgrp);
			kill(r->standin, stopsig);
		}
		/* past the grace period, SIGKILL whatever is left, until it is gone */
		if (r->lost && !done && now_ms() >= r->kill_at)
			signal_all(r->pid, SIGKILL);
	}
	if (r->own_tty)
	{
		if (tcgetpgrp(STDIN_FILENO) == r->pid)
			tcsetpgrp(STDIN_FILENO, r->job_pgrp);
		/* a job that stopped ends now: its stand-in must run to exit */
		kill(r->standin, SIGCONT);
	}

	if (r->lost)
		return EXIT_LOST;
	if (!r->main_done)
		return EXIT_FAIL;
	if (WIFEXITED(r->status))
		return WEXITSTATUS(r->status);
	if (WIFSIGNALED(r->status))
		return 128 + WTERMSIG(r->status);
	return EXIT_FAIL;
}

/*
 * Give the leases back, and say how fence exits ("code" so far).  One
 * member lost: the others are still ours, and others wait for them.
 */
static int
run_give_back(run_state *r, int code)
{
	fence_leases_heartbeat_stop(r->set);
	if (r->lost && fence_leases_count(r->set) > 1)
		(void) fence_leases_release(r->ctx, r->set);
	else if (!r->lost && fence_leases_release(r->ctx, r->set) != FENCE_OK)
	{
		/*
		 * The lock is another owner's: the lease passed on while the
		 * command ran (a failover to a replica without the lock, an
		 * eviction, a stall), and only this compare-and-DEL saw it.  That
		 * is what 76 says, whatever the command's own status.
		 */
		if (r->ctx->err == FENCE_ERR_LOST && r->started)
		{
			char		msg[FENCE_ERRSTR_LEN + 64];

			snprintf(msg, sizeof(msg), "%s: it was lost while the command ran", r->ctx->errstr);
			report_error(EXIT_LOST, msg, NULL);
			code = EXIT_LOST;
		}
		else
			note("warning: %s", r->ctx->errstr);
	}
	return code;
}

int
cmd_run(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	run_state	r;
	stop_guard	g;
	int			first = o->nresources > 0 ? 0 : 1;	/* the command's name */
	int			code;

	memset(&r, 0, sizeof(r));
	r.ctx = ctx;
	r.o = o;
	if ((code = run_take(&r, argc, argv, first, &g)) != 0 || r.set == NULL)
		return code;
	if ((code = run_handlers(&r, &g)) == 0 &&
		(code = run_carry(&r)) == 0)
	{
		if (run_split_for_job(&r, &code) > 0)
		{
			/* the stand-in: the leases are the supervisor's now */
			fence_leases_free(r.set);
			free(r.tokens);
			return code;
		}
		if (code == 0 && (code = run_start(&r, argv + first)) == 0)
			code = run_supervise(&r);
	}
	code = run_give_back(&r, code);
	fence_leases_free(r.set);
	free(r.tokens);
	return code;
}
