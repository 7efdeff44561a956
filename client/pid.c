/*
 * client/pid.c
 *	  Which process this is, known without a system call on every lease
 *	  operation.
 *
 * A connection and the pool of random bytes that owner ids are drawn
 * from belong to the process that made them: a child after fork() must
 * connect anew and draw bytes of its own (link.c, random.c).  Asking
 * getpid() before each use cost a system call every time, three per
 * acquire and release (glibc no longer caches the pid).  Instead the pid
 * is kept in a page the kernel empties in every child (MADV_WIPEONFORK,
 * Linux 4.14): a child of any kind of fork, fork() or _Fork() or a raw
 * clone system call, none of which need run pthread_atfork handlers,
 * finds zero there and asks getpid() once.  Where the kernel cannot wipe
 * a page, getpid() is asked every time, as before.  A vfork() child
 * shares its parent's memory and sees the parent's pid, but may do
 * nothing but exec or _exit anyway.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fence_int.h"

static pid_t *self_page;		/* NULL: no page the kernel wipes */
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void
self_init(void)
{
#ifdef MADV_WIPEONFORK
	long		size = sysconf(_SC_PAGESIZE);
	void	   *p;

	if (size <= 0)
		return;
	p = mmap(NULL, (size_t) size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	if (madvise(p, (size_t) size, MADV_WIPEONFORK) != 0)
	{
		munmap(p, (size_t) size);
		return;
	}
	self_page = p;
#endif
}

/*
 * This process's id.  Threads of one process may race to store it: they
 * store the same value.
 */
pid_t
fence_self_pid(void)
{
	pid_t		pid;

	pthread_once(&self_once, self_init);
	if (self_page == NULL)
		return getpid();
	pid = __atomic_load_n(self_page, __ATOMIC_RELAXED);
	if (pid == 0)
	{
		pid = getpid();
		__atomic_store_n(self_page, pid, __ATOMIC_RELAXED);
	}
	return pid;
}
