#!/usr/bin/env python3
"""test/interop/fence_worker.py: a Python client of fence's protocol.

Runs the shipped scripts (client/lua/*.lua, or FENCE_LUA_DIR) with redis-py
as client/lua/PROTOCOL.md says, so that it shares leases, the waiting queue
and tokens with `fence`.  One master only (single node, Sentinel, Cluster
need the same calls; this worker speaks to one redis:// URL).

Commands, one a line on stdin, answers on stdout (times: wall clock, ms):
  acquire R TTL_MS WAIT_MS   ok TOKEN OWNER T_GOT | busy T | timeout T
  release R                  released RC T_SENT    (RC 1 released, 0 not ours)
  loop R N COUNTER LOG       N times: take R (waiting), add 1 to the number
                             in file COUNTER, append "python TOKEN" to LOG,
                             release; then "done N"
  quit

FENCE_WORKER_RELEASE=del makes release a bare compare-and-DEL that ignores
the queue, as a client that does not follow the protocol would: the
negative control of test/e2e/features/interop.sh (its waiters wake late).
"""
import hashlib
import os
import sys
import time

import redis

LUA_DIR = os.environ.get("FENCE_LUA_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "client", "lua")
WAIT_BEAT_MS = 500  # ask again at least this often, keeping the place


def now_ms():
    return time.time() * 1000.0


class Script:
    """One script file, sent as EVALSHA and, on NOSCRIPT, as EVAL."""

    def __init__(self, name):
        with open(os.path.join(LUA_DIR, name + ".lua"), "rb") as f:
            self.text = f.read()
        self.sha = hashlib.sha1(self.text).hexdigest()

    def args(self, keys, argv):
        return [len(keys)] + list(keys) + list(argv)

    def __call__(self, r, keys, argv):
        try:
            return r.execute_command("EVALSHA", self.sha, *self.args(keys, argv))
        except redis.exceptions.NoScriptError:
            return r.execute_command("EVAL", self.text, *self.args(keys, argv))


ACQUIRE, RELEASE = Script("acquire"), Script("release")
NAIVE_RELEASE = ("if redis.call('GET', KEYS[1]) == ARGV[1] then "
                 "return redis.call('DEL', KEYS[1]) end return 0")


def tag(resource):
    """T of PROTOCOL.md: '%', '{', '}' percent-encoded."""
    out = bytearray()
    for b in resource.encode():
        out += b"%%%02X" % b if b in b"%{}" else bytes([b])
    return bytes(out)


def key(resource, suffix):
    """fence:{T}:SUFFIX, as bytes: a resource is bytes, not text."""
    return b"fence:{" + tag(resource) + b"}:" + suffix.encode()


def keys(resource):
    return [key(resource, k) for k in ("lock", "token", "queue", "alive")]


def owner_id():
    return "python:%d/%s" % (os.getpid(), os.urandom(16).hex())


def token_of(reply):
    """The token, or None for a busy {PTTL}."""
    if isinstance(reply, list):
        return None
    return int(reply)


class Client:
    def __init__(self, url):
        self.r = redis.Redis.from_url(url, socket_timeout=5)
        self.held = {}  # resource -> owner

    def acquire(self, resource, ttl_ms, wait_ms):
        """(token, owner), or None when the wait ran out."""
        k = keys(resource)
        owner = owner_id()
        wake = key(resource, "wake:" + owner)
        deadline = now_ms() + wait_ms
        how = "1" if wait_ms > 0 else "0"
        reply = ACQUIRE(self.r, k, [owner, ttl_ms, how])
        while True:
            tok = token_of(reply)
            if tok is not None:
                self.held[resource] = owner
                return tok, owner
            left = deadline - now_ms()
            if wait_ms == 0:
                return None
            if left <= 0:
                # the last attempt: take a lock handed over at the last
                # moment, or give up the place
                reply = ACQUIRE(self.r, k, [owner, ttl_ms, "2"])
                if token_of(reply) is None:
                    return None
                continue
            pttl = reply[0]
            block = max(1, min(pttl + 1, WAIT_BEAT_MS, int(left) + 1))
            # BLPOP and the next attempt in one write: Redis runs the
            # attempt the moment the BLPOP returns (PROTOCOL.md, Waiting)
            p = self.r.pipeline(transaction=False)
            p.execute_command("BLPOP", wake, "%.3f" % (block / 1000.0))
            p.execute_command("EVALSHA", ACQUIRE.sha, *ACQUIRE.args(k, [owner, ttl_ms, "1"]))
            res = p.execute(raise_on_error=False)
            reply = res[1]
            if isinstance(reply, redis.exceptions.NoScriptError):
                reply = ACQUIRE(self.r, k, [owner, ttl_ms, "1"])
            elif isinstance(reply, Exception):
                raise reply

    def release(self, resource):
        owner = self.held.pop(resource)
        if os.environ.get("FENCE_WORKER_RELEASE") == "del":
            return int(self.r.eval(NAIVE_RELEASE, 1, keys(resource)[0], owner))
        # "1": hand the lock to the first waiter and wake it
        return int(RELEASE(self.r, keys(resource)[:1], [owner, "1"]))


def loop(c, resource, n, counter, log):
    for _ in range(n):
        got = c.acquire(resource, 10000, 60000)
        if got is None:
            print("timeout %.3f" % now_ms(), flush=True)
            return
        with open(counter) as f:
            v = int(f.read().strip() or 0)
        with open(counter, "w") as f:
            f.write("%d\n" % (v + 1))
        with open(log, "a") as f:
            f.write("python %d\n" % got[0])
        if c.release(resource) != 1:
            print("lost %d" % got[0], flush=True)
            return
    print("done %d" % n, flush=True)


def main():
    c = Client(os.environ.get("FENCE_REDIS_URL", "redis://127.0.0.1:6379"))
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        if w[0] == "acquire":
            got = c.acquire(w[1], int(w[2]), int(w[3]))
            t = now_ms()
            if got:
                print("ok %d %s %.3f" % (got[0], got[1], t), flush=True)
            else:
                print("%s %.3f" % ("timeout" if int(w[3]) else "busy", t), flush=True)
        elif w[0] == "release":
            t = now_ms()
            rc = c.release(w[1])
            print("released %d %.3f" % (rc, t), flush=True)
        elif w[0] == "loop":
            loop(c, w[1], int(w[2]), w[3], w[4])
        elif w[0] == "quit":
            return
        else:
            print("error unknown command %s" % w[0], flush=True)


if __name__ == "__main__":
    main()
