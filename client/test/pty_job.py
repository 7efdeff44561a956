#!/usr/bin/env python3
# client/test/pty_job.py: "fence run" under job control, in a terminal.
#
# An interactive bash on a pseudo-terminal (Python's pty module) runs
# "fence run" as a user would, and the test types what a user types:
#
#   Ctrl-Z  the command stops, bash says "Stopped" and prompts again; the
#           lease stays held (the lock in Redis keeps its owner for more
#           than two TTLs while the job is stopped);
#   fg      the command resumes in the foreground: it reads what is typed;
#   bg      the command resumes in the background; reading the terminal
#           stops it again (SIGTTIN), bash says so; fg resumes it;
#   Ctrl-C  the command dies of SIGINT: fence exits 130, the lock is freed;
#   kill -9 of a stopped job (its stand-in): the command ends, the lock is
#           freed, nothing is left renewing it.
#
# Usage: pty_job.py FENCE RESOURCE REDIS_URL.  Exits 0 when all held, else
# 1 with what was expected and the terminal's output.  Every wait is for
# something to appear, with a generous bound, never a guess.
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

fence, res, redis_url = sys.argv[1:4]
lock = "fence:{%s}:lock" % res
PROMPT = "@@ready@@ "
out = ""            # everything the terminal said
mark = 0            # where the next expect starts looking


def fail(why):
    sys.stdout.write("FAIL: %s\n--- terminal ---\n%s\n" % (why, out[-3000:]))
    try:
        os.kill(bash, signal.SIGKILL)
    except OSError:
        pass
    sys.exit(1)


def expect(pattern, timeout=15):
    """Wait until PATTERN appears after the last match; return the match."""
    global out, mark
    end = time.monotonic() + timeout
    while True:
        m = re.compile(pattern).search(out, mark)
        if m:
            mark = m.end()
            return m
        left = end - time.monotonic()
        if left <= 0:
            fail("no %r within %d s" % (pattern, timeout))
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            if not data:
                fail("terminal closed while waiting for %r" % pattern)
            out += data.decode("utf-8", "replace")


def send(s):
    os.write(fd, s.encode())


def owner():
    r = subprocess.run(["redis-cli", "-u", redis_url, "GET", lock],
                       capture_output=True, text=True)
    return r.stdout.strip()


def state(pid):
    # a process reaped between a caller's check and this read is gone:
    # "X" (dead), as the kernel would have said a moment before
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return "X"


def wait_state(pid, want, timeout=15):
    end = time.monotonic() + timeout
    while state(pid) not in want:
        if time.monotonic() > end:
            fail("process %d is in state %s, not %s" % (pid, state(pid), want))
        time.sleep(0.02)


env = dict(os.environ, PS1=PROMPT, HISTFILE="/dev/null", TERM="dumb")
bash, fd = pty.fork()
if bash == 0:
    # a terminal's user starts with every signal's default action (Python
    # ignores SIGPIPE and SIGXFSZ; a background "&" ignores SIGINT and SIGQUIT)
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], env)

expect(PROMPT)
run = "%s run %s --ttl 1s -- " % (fence, res)

# Ctrl-Z, the lease kept while stopped, fg
send(run + "sh -c 'echo RUN:$$; read x; echo GOT:$x'\n")
cmd = int(expect(r"RUN:(\d+)").group(1))
held_by = owner()
if not held_by:
    fail("no lock in Redis while the command runs")
send("\x1a")
expect(r"Stopped")
expect(PROMPT)
wait_state(cmd, "T")
t0 = time.monotonic()
while time.monotonic() - t0 < 2.5:      # more than two TTLs, stopped
    if owner() != held_by:
        fail("the lease was lost while the job was stopped")
    time.sleep(0.1)
send("fg\n")
wait_state(cmd, "RS")
send("hello\n")
expect(r"GOT:hello")
expect(PROMPT)
send("echo RC=$?\n")
expect(r"RC=0\r?\n")
expect(PROMPT)
if owner():
    fail("the lock is still there after fence run exited")

# bg: reading the terminal from the background stops it again
send(run + "sh -c 'echo RUN:$$; read x; echo GOT:$x'\n")
cmd = int(expect(r"RUN:(\d+)").group(1))
send("\x1a")
expect(r"Stopped")
expect(PROMPT)
send("bg\n")
expect(PROMPT)
end = time.monotonic() + 15
while True:     # bash reports the stop when it next looks at its jobs
    send("jobs\n")
    m = expect(r"(Stopped|Running)[^\n]*\n")
    expect(PROMPT)
    if m.group(1).startswith("Stopped"):
        break
    if time.monotonic() > end:
        fail("the job did not stop on reading the terminal from the background")
    time.sleep(0.05)
send("fg\n")
wait_state(cmd, "RS")
send("again\n")
expect(r"GOT:again")
expect(PROMPT)
send("echo RC=$?\n")
expect(r"RC=0\r?\n")
expect(PROMPT)

# Ctrl-C, once the command is sleep (dash may lose a SIGINT that comes
# while it starts a child, fence or no fence)
send(run + "sh -c 'echo RUN:$$; exec sleep 30'\n")
cmd = int(expect(r"RUN:(\d+)").group(1))
end = time.monotonic() + 15
while open("/proc/%d/comm" % cmd).read().strip() != "sleep":
    if time.monotonic() > end:
        fail("the command did not exec sleep")
    time.sleep(0.01)
send("\x03")
expect(PROMPT)
send("echo RC=$?\n")
expect(r"RC=130\r?\n")
expect(PROMPT)
if owner():
    fail("the lock is still there after Ctrl-C")

# a stopped job killed with -9: bash kills the stand-in, and the command,
# stopped, must still end and give the lease back
send(run + "sh -c 'echo RUN:$$; exec sleep 30'\n")
cmd = int(expect(r"RUN:(\d+)").group(1))
send("\x1a")
expect(r"Stopped")
expect(PROMPT)
wait_state(cmd, "T")
send("kill -9 %1\n")
expect(PROMPT)
end = time.monotonic() + 15
while os.path.exists("/proc/%d" % cmd) and state(cmd) != "Z":
    if time.monotonic() > end:
        fail("the stopped command outlived its killed job")
    time.sleep(0.02)
while owner():
    if time.monotonic() > end:
        fail("the lock is still renewed after the job was killed")
    time.sleep(0.05)

# bash refuses the first "exit" while it still lists a stopped job (it may
# not have reaped the killed stand-in yet); a second "exit" ends it.
end = time.monotonic() + 15
send("exit\n")
while os.waitpid(bash, os.WNOHANG)[0] == 0:
    if time.monotonic() > end:
        fail("bash did not exit")
    r, _, _ = select.select([fd], [], [], 1.0)
    if r:
        try:
            out += os.read(fd, 4096).decode("utf-8", "replace")
        except OSError:
            pass
    if "stopped jobs" in out[mark:]:
        mark = len(out)
        send("exit\n")
print("ok")
