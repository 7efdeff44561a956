#!/usr/bin/python3
"""bench/py_cycles.py: scenario 16, acquire + release cycles per second from
Python, on one connection and one resource, for as many seconds as asked.

    py_cycles.py pgfence|pgfence-heartbeat|redis-py SECONDS

pgfence: ``with client.lease(r, ttl=10, heartbeat=False)``, the same two
round trips as bench/fence_cycles (one EVALSHA each way); pgfence-heartbeat:
the default, which also starts and stops the renewal thread, on a Redis
connection of its own; redis-py: its Lock (``with r.lock(name, timeout=10)``,
SET NX PX, then a Lua compare-and-DEL).  Prints cycles_per_s=N.
Redis: $FENCE_REDIS_URL.  pgfence from python/ of this tree, with
PGFENCE_LIBFENCE naming the libfence built here.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


def cycles(one, seconds):
    n = 0
    end = time.monotonic() + seconds
    while True:
        for _ in range(100):
            one()
        n += 100
        if time.monotonic() >= end:
            return n / seconds


def main():
    variant, seconds = sys.argv[1], float(sys.argv[2])
    url = os.environ["FENCE_REDIS_URL"]
    if variant.startswith("pgfence"):
        import pgfence

        client = pgfence.Client(url)
        hb = variant == "pgfence-heartbeat"

        def one():
            with client.lease("bench:py", ttl=10, heartbeat=hb):
                pass
    elif variant == "redis-py":
        import redis

        r = redis.Redis.from_url(url)

        def one():
            with r.lock("bench:redis-py", timeout=10):
                pass
    else:
        sys.exit("unknown variant %s" % variant)
    one()  # connect, load the scripts
    print("cycles_per_s=%.0f" % cycles(one, seconds))


main()
