#!/usr/bin/env python3
"""test/interop/handoff.py: how fast a release wakes a waiter, across languages.

    handoff.py RESOURCE N PAIR...     PAIR: HOLDER-WAITER, each of c, python, node

For each pair, N times: the holder takes RESOURCE; the waiter asks for it
with a wait and is seen in the queue (its place, fence:{R}:queue, read from
Redis: no sleep); the holder releases; the waiter gets it and releases
too.  The handoff latency is from just before the release was sent to just
after the waiter had the lease (wall clock, one machine).  "c" is the fence
command (see Fence below for what its times include).

Prints one line per pair, "PAIR n=N median=MS p99=MS max=MS", and exits 1
when something failed (a lease not obtained, a token not above the last).
Environment: FENCE_REDIS_URL, FENCE_BIN, NODE_PATH, FENCE_PY (the Python
for fence_worker.py).
"""
import os
import subprocess
import sys
import time

import redis

HERE = os.path.dirname(os.path.abspath(__file__))
FENCE = os.environ.get("FENCE_BIN", "fence")
PY = os.environ.get("FENCE_PY", sys.executable)
WAIT_MS = 20000
TTL_MS = 20000


class Worker:
    """fence_worker.py or fence_worker.js, spoken to line by line."""

    def __init__(self, lang):
        argv = [PY, os.path.join(HERE, "fence_worker.py")] if lang == "python" else \
            ["node", os.path.join(HERE, "fence_worker.js")]
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def answer(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("worker exited")
        return line.split()

    def take(self, res):  # holder: blocks until it has the lease
        self.send("acquire %s %d %d" % (res, TTL_MS, WAIT_MS))
        return self.got()

    def ask(self, res):  # waiter: returns at once
        self.send("acquire %s %d %d" % (res, TTL_MS, WAIT_MS))

    def got(self):
        a = self.answer()
        if a[0] != "ok":
            raise RuntimeError("no lease: %s" % " ".join(a))
        return int(a[1]), float(a[3])

    def release(self):
        self.send("release %s" % self.res)
        a = self.answer()
        if a[:2] != ["released", "1"]:
            raise RuntimeError("release: %s" % " ".join(a))
        return float(a[2])

    def close(self):
        self.send("quit")
        self.p.wait(timeout=10)


class Fence:
    """The fence command.  A waiter is "fence acquire --wait", which exits
    with the lease; its time is when its FENCE_* lines reach this process.
    A holder is "fence run" around a shell that, told to, prints the time and
    exits, upon which fence run releases: the latency includes the
    shell's exit, as a user of fence run pays it."""

    HOLD = 'echo ok "$FENCE_TOKEN"; read x; date +%s%N'

    def ask(self, res):
        self.p = subprocess.Popen(
            [FENCE, "acquire", res, "--ttl", "%dms" % TTL_MS, "--wait", "%dms" % WAIT_MS],
            stdout=subprocess.PIPE, text=True)

    def got(self):
        out = self.p.stdout.read()
        t = time.time() * 1000.0
        if self.p.wait(timeout=20) != 0:
            raise RuntimeError("fence acquire: no lease (%s)" % out)
        env = dict(l.split("=", 1) for l in out.splitlines() if "=" in l)
        self.owner = env["FENCE_OWNER"]
        return int(env["FENCE_TOKEN"]), t

    def take(self, res):
        self.p = subprocess.Popen(
            [FENCE, "run", res, "--ttl", "%dms" % TTL_MS, "--", "sh", "-c", self.HOLD],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        a = self.p.stdout.readline().split()
        if a[:1] != ["ok"]:
            raise RuntimeError("fence run: no lease (%s)" % a)
        self.owner = None
        return int(a[1]), 0.0

    def release(self):
        if self.owner:  # a waiter's lease, from fence acquire
            rc = subprocess.call([FENCE, "release", self.res, self.owner],
                                 stdout=subprocess.DEVNULL)
            if rc != 0:
                raise RuntimeError("fence release exited %d" % rc)
            return 0.0
        self.p.stdin.write("go\n")
        self.p.stdin.flush()
        t = int(self.p.stdout.readline()) / 1e6
        if self.p.wait(timeout=20) != 0:
            raise RuntimeError("fence run exited %d" % self.p.returncode)
        return t

    def close(self):
        pass


def main():
    res, n, pairs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    r = redis.Redis.from_url(os.environ["FENCE_REDIS_URL"])
    tag = res.replace("%", "%25").replace("{", "%7B").replace("}", "%7D")
    queue = "fence:{%s}:queue" % tag
    langs = {l for p in pairs for l in p.split("-")} - {"c"}
    # two of each, so that a pair of one language has a holder and a waiter
    workers = {l: (Worker(l), Worker(l)) for l in langs}
    last, failed = 0, 0
    for pair in pairs:
        hl, wl = pair.split("-")
        lat = []
        for _ in range(n):
            h = Fence() if hl == "c" else workers[hl][0]
            w = Fence() if wl == "c" else workers[wl][1]
            h.res = w.res = res
            tok, _ = h.take(res)
            if tok <= last:
                print("token %d after %d" % (tok, last))
                failed = 1
            last = tok
            w.ask(res)
            t0 = time.monotonic()
            while r.zcard(queue) < 1:
                if time.monotonic() - t0 > 20:
                    raise RuntimeError("%s: the waiter never queued" % pair)
                time.sleep(0.002)
            t_rel = h.release()
            tok, t_got = w.got()
            if tok <= last:
                print("token %d after %d" % (tok, last))
                failed = 1
            last = tok
            lat.append(t_got - t_rel)
            w.release()
        lat.sort()
        print("%s n=%d median=%.1f p99=%.1f max=%.1f" % (
            pair, n, lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))], lat[-1]),
            flush=True)
    for a, b in workers.values():
        a.close()
        b.close()
    sys.exit(failed)


if __name__ == "__main__":
    main()
