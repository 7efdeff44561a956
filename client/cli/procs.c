/*
 * client/cli/procs.c
 *	  Everything run's command started: signal it all, and tell when it
 *	  is all gone.  On Linux that includes the descendants that left the
 *	  command's process group, found by walking /proc.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

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
void
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
int
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
