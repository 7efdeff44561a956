#!/usr/bin/env python3
"""test/e2e/lib/check_history.py: check the history of a fault test.

A history is a text file, one event a line, tab-separated:

    worker  op  resource  token  owner  start  end  outcome  [key=value ...]

"start" and "end" are wall-clock milliseconds, for people reading the file;
nothing below orders events by them.  Order comes from PostgreSQL: every
accepted write inserts a row into a log table in the same transaction,
after it wrote the data row, so it takes its sequence number while holding
the data row's lock, and sequence order is commit order among writes of
that row.  Those rows are dumped into the history as "commit" events with
"seq=N" (and "xid=N").

Events the checker reads:
  commit   an accepted (committed) write, from the database's log table
  write    a worker's attempt; outcome "ok" (with seq=N) or an SQLSTATE
  counter  the counter row a test changes by read-modify-write under the
           lock: "initial=N final=N step=S" (step defaults to 1)
Every other op (acquire, read, release, note...) is kept for the reader.

It asserts, per resource:
  token-down   accepted tokens never go down in commit order;
  two-owners   no token is accepted for two different owners;
  lost-update  final = initial + step * (number of accepted writes);
  phantom      a worker that saw "ok" has a matching commit.

Exit status: 0 all hold, 1 some violation (each printed as
"violation KIND: ..."), 2 unreadable history.
"""
import sys
from collections import defaultdict

FIELDS = ("worker", "op", "resource", "token", "owner", "start", "end", "outcome")


def parse(path):
    events = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) < len(FIELDS):
                raise ValueError("%s:%d: %d fields, want at least %d"
                                 % (path, n, len(parts), len(FIELDS)))
            ev = dict(zip(FIELDS, parts))
            for extra in parts[len(FIELDS):]:
                k, sep, v = extra.partition("=")
                if not sep:
                    raise ValueError("%s:%d: bad extra field %r" % (path, n, extra))
                ev[k] = v
            ev["line"] = n
            events.append(ev)
    return events


def as_int(ev, key):
    try:
        return int(ev[key])
    except (KeyError, ValueError):
        raise ValueError("line %d: %s is not an integer: %r"
                         % (ev["line"], key, ev.get(key)))


def check(events):
    violations = []
    # The accepted writes of a resource are its "commit" events, from the
    # database; a test without a log table may instead report them as "ok"
    # writes carrying seq=N.
    commits = defaultdict(list)
    for ev in events:
        if ev["op"] == "commit":
            commits[ev["resource"]].append(ev)
    accepted = defaultdict(list, {r: list(evs) for r, evs in commits.items()})
    for ev in events:
        if ev["op"] != "write" or ev["outcome"] != "ok":
            continue
        if ev["resource"] in commits:
            # phantom: a worker saw "ok" for a write the database does not have
            if ev.get("seq") not in {c.get("seq") for c in commits[ev["resource"]]}:
                violations.append(("phantom", "%s's write with token %s (line %d) "
                                   "is not in the commit log"
                                   % (ev["worker"], ev["token"], ev["line"])))
        elif "seq" not in ev:
            raise ValueError("line %d: accepted write without seq" % ev["line"])
        else:
            accepted[ev["resource"]].append(ev)

    for res, evs in sorted(accepted.items()):
        evs.sort(key=lambda e: as_int(e, "seq"))
        prev = None
        for ev in evs:
            tok = as_int(ev, "token")
            if prev is not None and tok < as_int(prev, "token"):
                violations.append(("token-down",
                                   "resource %s: token %d (%s, seq %s) committed after "
                                   "token %s (%s, seq %s)"
                                   % (res, tok, ev["worker"], ev["seq"], prev["token"],
                                      prev["worker"], prev["seq"])))
            prev = ev
        owners = defaultdict(set)
        for ev in evs:
            if ev["owner"] not in ("", "-"):
                owners[as_int(ev, "token")].add(ev["owner"])
        for tok, who in sorted(owners.items()):
            if len(who) > 1:
                violations.append(("two-owners", "resource %s: token %d accepted for owners %s"
                                   % (res, tok, ", ".join(sorted(who)))))

    for ev in events:
        if ev["op"] != "counter":
            continue
        res = ev["resource"]
        initial, final = as_int(ev, "initial"), as_int(ev, "final")
        step = int(ev.get("step", "1"))
        n = len(accepted.get(res, []))
        if final != initial + step * n:
            violations.append(("lost-update",
                               "resource %s: %d accepted writes of %+d from %d should give "
                               "%d, the row holds %d"
                               % (res, n, step, initial, initial + step * n, final)))
    return accepted, violations


def main(argv):
    if len(argv) != 2:
        print("usage: check_history.py HISTORY", file=sys.stderr)
        return 2
    try:
        events = parse(argv[1])
        accepted, violations = check(events)
    except (OSError, ValueError) as e:
        print("check_history: %s" % e, file=sys.stderr)
        return 2
    for res, evs in sorted(accepted.items()):
        print("resource %s: %d accepted writes, tokens in commit order: %s"
              % (res, len(evs), " ".join(e["token"] for e in evs)))
    for kind, msg in violations:
        print("violation %s: %s" % (kind, msg))
    if not violations:
        print("history ok: %d events" % len(events))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
