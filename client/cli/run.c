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
 * (see run_standin).  The command finds the token in its environment and
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

int
cmd_run(fence_ctx *ctx, const options *o, int argc, char **argv)
{
	fence_leases *set;
	char	   *tokens = NULL;
	int			first = o->nresources > 0 ? 0 : 1;	/* the command's name */
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

	if (argc < first + 1)
		return usage_error("run needs RESOURCE and a command after --%s", "");
	if ((code = keep_password_from_child(o)) != 0)
		return code;
	/* fence holds the lease while the command runs: its pid, their name */
	if ((code = name_owner(ctx, o, argv[first])) != 0)
		return code;
	/* one RESOURCE is a set of one; -R, a set (sets.c) */
	set = take_set(ctx, o, first ? (const char *const *) argv : o->resources,
				   first ? 1 : (size_t) o->nresources, NULL, &code, &g);
	if (g.sig != 0)
		return give_back_on_signal(ctx, set, NULL, g.sig);
	if (set == NULL)
		return code;
	if (o->pg == NULL && !o->no_pg)
		note("warning: the lease on \"%s\" was taken with no PostgreSQL to announce it to\n"
			 "(no --pg, FENCE_PG, PGSERVICE, PGHOST or PGDATABASE): PostgreSQL refuses a\n"
			 "stale holder's writes only for a token it has heard of.  Give --pg (or set\n"
			 "FENCE_PG), or --no-pg when the command writes nothing that is fenced.",
			 fence_lease_resource(fence_leases_member(set, 0)));
	else if (o->pg != NULL)
		trace("announced to PostgreSQL at %s", o->pg_from);

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

	/* its tokens, merged with settings inherited from an outer run (carry.c) */
	pgoptions_keep();
	code = carry_env(set, o->nresources > 0, &tokens);
	/* behind a pooler: FENCE_* for the command, PGOPTIONS as it was */
	if (code == 0 && o->pooler && pgoptions_restore() != 0)
		code = -1;
	if (code != 0)
	{
		if (code != -2)
			fprintf(stderr, "%s: out of memory\n", progname);
		code = code == -2 ? EXIT_USAGE : EXIT_FAIL;
		goto release;
	}
	/*
	 * A command that could not even connect is not worth starting: with
	 * the settings refused, a configuration to change (78); with
	 * PostgreSQL unreachable, an outage (69).
	 */
	if (o->pg != NULL && !o->pooler && (code = carry_probe(o->pg, set, tokens)) < 0)
	{
		code = code == -2 ? EXIT_UNAVAIL : EXIT_CONFIG;
		goto release;
	}
	code = 0;

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
			fence_leases_free(set);
			free(tokens);
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

	if (fence_leases_heartbeat_start(ctx, set, on_lost, NULL) != FENCE_OK)
	{
		code = fail(ctx);
		goto release;
	}
	trace("renewing the lease%s every %lld ms while the command runs",
		  fence_leases_count(set) > 1 ? "s" : "", fence_lease_ttl(fence_leases_member(set, 0)) / 3);
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
		execvp(argv[first], argv + first);
		fprintf(stderr, "%s: could not run \"%s\": %s\n", progname, argv[first], strerror(errno));
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
		else if (cli_verbosity > 0)
			timeout = (int) (fence_lease_ttl(fence_leases_member(set, 0)) / 3);	/* to say how it goes */
		if ((n = poll(&pfd, 1, timeout)) < 0 && errno != EINTR)
			break;
		for (size_t m = 0; n == 0 && !lost && !main_done && m < fence_leases_count(set); m++)
		{
			fence_lease *l = fence_leases_member(set, m);

			trace("lease on \"%s\" %s", fence_lease_resource(l),
				  fence_lease_state(l) == FENCE_LEASE_HELD ? "renewed" :
				  "suspect: Redis does not answer");
		}
		while ((n = read(wake_pipe[0], buf, sizeof(buf))) > 0)
		{
			for (i = 0; i < n; i++)
			{
				if (buf[i] == 0 && !lost)
				{
					char		msg[FENCE_ERRSTR_LEN + 64];

					lost = 1;
					snprintf(msg, sizeof(msg), "lease on \"%s\" lost; stopping the command",
							 fence_lease_resource(lost_member));
					report_error(EXIT_LOST, msg, NULL);
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
	fence_leases_heartbeat_stop(set);
	/* one member lost: the others are still ours, and others wait for them */
	if (lost && fence_leases_count(set) > 1)
		(void) fence_leases_release(ctx, set);
	else if (!lost && fence_leases_release(ctx, set) != FENCE_OK)
	{
		/*
		 * The lock is another owner's: the lease passed on while the
		 * command ran (a failover to a replica without the lock, an
		 * eviction, a stall), and only this compare-and-DEL saw it.  That
		 * is what 76 says, whatever the command's own status.
		 */
		if (ctx->err == FENCE_ERR_LOST && started)
		{
			char		msg[FENCE_ERRSTR_LEN + 64];

			snprintf(msg, sizeof(msg), "%s: it was lost while the command ran", ctx->errstr);
			report_error(EXIT_LOST, msg, NULL);
			code = EXIT_LOST;
		}
		else
			note("warning: %s", ctx->errstr);
	}
	fence_leases_free(set);
	free(tokens);
	return code;
}
