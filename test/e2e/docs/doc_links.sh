#!/usr/bin/env bash
# doc_links: every relative link of README.md, docs/*.md and
# client/README.md leads somewhere: the file or directory exists, and an
# "#anchor" names a heading of the file it points into (or of the same
# file, for a bare "#anchor").
#
# Anchors are made as GitHub makes them from a heading: its text as shown
# (code spans without their backticks, links as their text, no emphasis
# marks), lower case, every character that is not a letter, a digit, "_",
# "-" or a space dropped, spaces turned into "-"; a heading whose anchor
# came before gets "-1", "-2"... .  Links inside code (fenced blocks,
# `spans`) are no links; http:, https: and mailto: links are not checked.
#
# The checker is first run on files made here, with a link to a missing
# file and one to a missing anchor, and must refuse exactly those two:
# a checker that passes anything would pass the documentation too.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init doc_links

cat >"$WORK/checker.py" <<'PY'
import os, re, sys

def strip_code(lines):
    """LINES without fenced code blocks (kept as empty lines)."""
    out, fence = [], None
    for line in lines:
        m = re.match(r"\s*(```+|~~~+)", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append("")
        elif m:
            fence = m.group(1)
            out.append("")
        else:
            out.append(line)
    return out

def slug(text):
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("*", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")

anchors_of = {}
def anchors(path):
    if path not in anchors_of:
        seen, found = {}, set()
        for line in strip_code(open(path, encoding="utf-8").read().split("\n")):
            m = re.match(r" {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else "%s-%d" % (s, n))
            for a in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
                found.add(a)
        anchors_of[path] = found
    return anchors_of[path]

link_re = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
bad = checked = 0
for path in sys.argv[1:]:
    lines = strip_code(open(path, encoding="utf-8").read().split("\n"))
    for no, line in enumerate(lines, 1):
        line = re.sub(r"`[^`]*`", "x", line)
        for target in link_re.findall(line):
            if re.match(r"(https?|mailto):", target) or target == "":
                continue
            checked += 1
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                print("%s:%d: %s: no such file %s" % (path, no, target, dest)); bad += 1
                continue
            if anchor:
                if os.path.isdir(dest) or not dest.endswith(".md"):
                    print("%s:%d: %s: an anchor into %s, which is no Markdown file" % (path, no, target, dest)); bad += 1
                elif anchor not in anchors(dest):
                    print("%s:%d: %s: %s has no heading whose anchor is #%s" % (path, no, target, dest, anchor)); bad += 1
print("checked %d relative links in %d files, %d broken" % (checked, len(sys.argv) - 1, bad))
sys.exit(1 if bad else 0)
PY

# the checker refuses a broken link and a broken anchor, and only those
mkdir -p "$WORK/try/docs"
cat >"$WORK/try/README.md" <<'MD'
# Try

## Statistics: `fence.stats`

## Statistics: `fence.stats`

See [stats](#statistics-fencestats), [again](#statistics-fencestats-1),
[the doc](docs/a.md#what-a-resource-costs), [a dir](docs/) and
`[no link](#nowhere)`.

```
[no link either](nowhere.md)
```

A [missing file](docs/gone.md) and a [missing anchor](docs/a.md#what-it-costs).
MD
cat >"$WORK/try/docs/a.md" <<'MD'
# What a resource costs

Back to [the README](../README.md#try).
MD
if (cd "$WORK/try" && "$E2E_PY" "$WORK/checker.py" README.md docs/a.md) >"$WORK/try.out" 2>&1; then
	cat "$WORK/try.out"
	fail "the checker passed a missing file and a missing anchor"
fi
sed 's/^/    | /' "$WORK/try.out"
[ "$(grep -c ': no such file \|: .* has no heading' "$WORK/try.out")" = 2 ] &&
	grep -q '^README.md:15: docs/gone.md: no such file' "$WORK/try.out" &&
	grep -q '^README.md:15: docs/a.md#what-it-costs: docs/a.md has no heading' "$WORK/try.out" ||
	fail "the checker did not refuse exactly the two broken links"
say "the checker refuses a missing file and a missing anchor, and passes the rest"

# the documentation
cd "$TOP"
docs=(README.md docs/*.md client/README.md)
[ -f "${docs[1]}" ] || fail "no docs/*.md"
"$E2E_PY" "$WORK/checker.py" "${docs[@]}" || fail "a link of the documentation leads nowhere"
say "pass"
