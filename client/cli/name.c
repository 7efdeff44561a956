/*
 * client/cli/name.c
 *	  Who a lease's owner id says holds it: --name, or HOST:PID:COMMAND,
 *	  as consul names its sessions.
 *
 * The library puts the name in front of the owner id's random digits
 * ("NAME/" and 32 hex digits, owner.c), so that "fence show", "fence
 * list", Redis and fence.fences.owner tell an operator whose lease it is.
 * The default names the process the lease is for: for run, fence itself
 * (it holds the lease while COMMAND runs, and is the process to signal)
 * and COMMAND; for acquire and exec, the process that started fence (the
 * script that holds the lease, or asked for the statement) and its name.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Room for the host's part: the pid and the command keep the rest. */
#define HOST_PART 32

/*
 * Replace every byte an owner name may not hold by '_' ("backup.sh"
 * becomes "backup_sh"); an empty "s" becomes "what".
 */
static void
sanitize(char *s, size_t size, const char *what)
{
	size_t		i;

	if (*s == '\0')
		snprintf(s, size, "%s", what);
	for (i = 0; s[i] != '\0'; i++)
		if (strchr(FENCE_OWNER_NAME_CHARS, s[i]) == NULL)
			s[i] = '_';
}

/* The name of process "pid" (Linux: /proc/PID/comm), or "" when unknown. */
static void
process_name(pid_t pid, char *buf, size_t size)
{
	char		path[64];
	FILE	   *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long) pid);
	if ((f = fopen(path, "r")) == NULL)
		return;
	if (fgets(buf, (int) size, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/*
 * Name the owner ids of the leases "ctx" takes: --name, or the default for
 * "command" (run's COMMAND; NULL: fence's parent).  Returns 0, or an exit
 * status.
 */
int
name_owner(fence_ctx *ctx, const options *o, const char *command)
{
	char		host[256],
				comm[256],
				name[FENCE_MAX_OWNER_NAME + 1];
	pid_t		pid;

	if (o->name == NULL)
	{
		if (gethostname(host, sizeof(host)) != 0)
			host[0] = '\0';
		host[sizeof(host) - 1] = '\0';
		/* the host's own name, as "hostname -s" gives it */
		host[strcspn(host, ".")] = '\0';
		host[HOST_PART] = '\0';
		sanitize(host, sizeof(host), "localhost");
		if (command != NULL)
		{
			const char *base = strrchr(command, '/');

			pid = getpid();
			snprintf(comm, sizeof(comm), "%s", base != NULL ? base + 1 : command);
		}
		else
		{
			pid = getppid();
			process_name(pid, comm, sizeof(comm));
		}
		sanitize(comm, sizeof(comm), "unknown");
		/* cut to the longest name allowed: the command's end goes first */
		snprintf(name, sizeof(name), "%s:%ld:%s", host, (long) pid, comm);
	}
	if (fence_set_owner_name(ctx, o->name != NULL ? o->name : name) != FENCE_OK)
		return fail(ctx);
	return 0;
}
