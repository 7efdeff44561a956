/*
 * client/cli/job.c
 *	  fence run in the foreground of a terminal: a stand-in in the shell's
 *	  job, so that Ctrl-Z, fg and bg work while the lease is renewed.
 *
 * A shell knows only the process it started, and takes the job for
 * stopped when that process stops.  But a stopped fence would stop
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
 * stopped and the lease given back).  run.c's supervisor does the rest:
 * it hands the terminal over as the command stops and continues.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "cli.h"

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

/*
 * Split in two (above), in the foreground of a terminal: the stand-in stays
 * in the shell's job ("*job_pgrp") and returns 1 with its exit status in
 * "*code"; the supervisor returns 0 in a process group of its own, with
 * "handler" (the supervisor's, on_signal) for SIGCONT and "*standin" the
 * stand-in's pid.  -1 with "*code" set on failure.  "orig_chld" is the
 * SIGCHLD disposition fence found, for the stand-in.
 */
int
job_split(const struct sigaction *handler, const struct sigaction *orig_chld,
		  pid_t *job_pgrp, pid_t *standin, int *code)
{
	sigset_t	job_signals,
				oldmask;
	pid_t		pid;
	int			i;

	*job_pgrp = getpgrp();
	sigemptyset(&job_signals);
	for (i = 0; i < NFORWARDED; i++)
		sigaddset(&job_signals, forwarded[i]);
	sigaddset(&job_signals, SIGCONT);
	sigaddset(&job_signals, SIGCHLD);
	/* no signal may fall between the fork and either side's handlers */
	sigprocmask(SIG_BLOCK, &job_signals, &oldmask);
	*standin = getpid();
	pid = fork();
	if (pid < 0)
	{
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		fprintf(stderr, "%s: could not fork: %s\n", progname, strerror(errno));
		*code = EXIT_FAIL;
		return -1;
	}
	if (pid > 0)
	{
		*code = run_standin(pid, &oldmask, orig_chld);
		return 1;
	}
	setpgid(0, 0);
#ifdef PR_SET_PDEATHSIG
	(void) prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
#endif
	/* the terminal is handed over from a background group */
	signal(SIGTTOU, SIG_IGN);
	sigaction(SIGCONT, handler, NULL);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	/* the stand-in died before PR_SET_PDEATHSIG took hold */
	if (getppid() != *standin)
	{
		*code = EXIT_FAIL;
		return -1;
	}
	return 0;
}
