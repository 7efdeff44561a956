#!/usr/bin/env bash
# bench_figures: the figures the documentation quotes from the benchmarks
# are rows of bench/results.md, which bench/run.sh writes (ratios
# typed in with no output behind them had crept into the README and docs/).
#
# - README.md's cost table, the lines between "<!-- bench figures -->" and
#   "<!-- end of bench figures -->": each row names its scenario in its
#   last cell, and every ratio in the row ("0.74x": digits, a point, two
#   digits, "x") is the ratio of a row of that scenario in results.md.
# - Everywhere else in README.md, docs/*.md and bench/README.md (outside
#   fenced code): every such ratio is the ratio or the target of some row
#   of results.md.  The CHANGELOG is history and keeps its figures.
#
# The checker is first run on files made here, with a made-up ratio in a
# cost table, one quoted for the wrong scenario and one in the prose, and
# must refuse exactly those three: a checker that passes anything would
# pass the documentation too.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init bench_figures

cat >"$WORK/checker.py" <<'PY'
import re, sys

RATIO = re.compile(r"(?<![\d.])(\d+\.\d\d)x")

def prose(lines):
    """(number, line) of LINES outside fenced code blocks."""
    fence = None
    for no, line in enumerate(lines, 1):
        m = re.match(r"\s*(```+|~~~+)", line)
        if fence:
            if m and m.group(1)[0] == fence[0]:
                fence = None
        elif m:
            fence = m.group(1)
        else:
            yield no, line

def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]

# results.md: scenario -> its rows' ratios; every ratio and target
by_scenario, anywhere = {}, set()
for _, line in prose(open(sys.argv[1], encoding="utf-8").read().split("\n")):
    if not re.match(r"\|\s*\d+\s*\|", line):
        continue
    c = cells(line)
    ratios = set(RATIO.findall(c[4])) if len(c) > 6 else set()
    by_scenario.setdefault(c[0], set()).update(ratios)
    anywhere.update(ratios)
    if len(c) > 6:
        anywhere.update(RATIO.findall(c[5]))
if not anywhere:
    sys.exit("%s: no row with a ratio" % sys.argv[1])

bad = quoted = 0
for path in sys.argv[2:]:
    lines = open(path, encoding="utf-8").read().split("\n")
    table = False
    for no, line in prose(lines):
        if "<!-- bench figures" in line:
            table = True
            continue
        if "<!-- end of bench figures -->" in line:
            table = False
            continue
        figures = RATIO.findall(line)
        if table and line.startswith("|") and not re.match(r"\|[\s|:-]*$", line):
            scen = cells(line)[-1]
            if not scen.isdigit() and not figures:
                continue        # the header
            rows = by_scenario.get(scen)
            if rows is None:
                print("%s:%d: the cost table's row names scenario \"%s\", which results.md has no row of" % (path, no, scen))
                bad += 1
                continue
            for f in figures:
                quoted += 1
                if f not in rows:
                    print("%s:%d: %sx is no ratio of scenario %s in results.md" % (path, no, f, scen))
                    bad += 1
        else:
            for f in figures:
                quoted += 1
                if f not in anywhere:
                    print("%s:%d: %sx is no ratio or target of results.md" % (path, no, f))
                    bad += 1
print("%d figures checked, %d not in results.md" % (quoted, bad))
sys.exit(1 if bad else 0)
PY

# The checker on made-up files: three figures without a row behind them.
mkdir -p "$WORK/try"
cat >"$WORK/try/results.md" <<'MD'
| # | measurement | median | vs (median) | ratio | target | met | run (UTC) |
|---|---|---|---|---|---|---|---|
| 1 | fenced vs plain | 6911 tx/s | plain (9351) | 0.74x | >= 0.80x | **no** | 2026-12-07 22:00 |
| 2 | guarded vs plain | 8877 tx/s | plain (12935) | 0.69x |  |  | 2026-12-07 22:00 |
MD
cat >"$WORK/try/README.md" <<'MD'
# Try

<!-- bench figures -->
| what | ratio | scenario |
|---|---|---|
| fenced | 0.74x | 1 |
| guarded | 0.74x | 2 |
| made up | 0.91x | 1 |
<!-- end of bench figures -->

Fenced writes run at 0.74x, and at 0.63x in a second run; the target is 0.80x.

```
0.55x in code is no figure
```
MD
if "$E2E_PY" "$WORK/checker.py" "$WORK/try/results.md" "$WORK/try/README.md" >"$WORK/try.out" 2>&1; then
	cat "$WORK/try.out"
	fail "the checker passed figures that results.md does not have"
fi
sed 's/^/    | /' "$WORK/try.out"
[ "$(grep -c 'no ratio' "$WORK/try.out")" = 3 ] &&
	grep -q 'README.md:7: 0.74x is no ratio of scenario 2' "$WORK/try.out" &&
	grep -q 'README.md:8: 0.91x is no ratio of scenario 1' "$WORK/try.out" &&
	grep -q 'README.md:11: 0.63x is no ratio or target' "$WORK/try.out" ||
	fail "the checker did not refuse exactly the three figures without a row"
say "the checker refuses figures without a row behind them, and passes the rest"

# the documentation
cd "$TOP"
grep -q '<!-- bench figures' README.md || fail "README.md has no cost table (<!-- bench figures -->)"
"$E2E_PY" "$WORK/checker.py" bench/results.md README.md docs/*.md bench/README.md ||
	fail "the documentation quotes a figure that bench/results.md does not have"
say "pass"
