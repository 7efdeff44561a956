#!/usr/bin/env bash
# doc_signatures: every signature of a fence function that README.md,
# docs/*.md, CHANGELOG.md or client/README.md writes in inline code
# exists, as the installed extension defines it.
#
# A code span "fence.NAME(...)" (or "NAME(...)" for a function of schema
# fence) is a signature when one of its arguments starts with a parameter
# name of NAME, says VARIADIC, or is a bare type; then its arguments must
# be, in order, the parameters of one of NAME's overloads: each "name",
# "type" or "name type" as pg_proc has it, VARIADIC where the function is
# variadic, DEFAULT only where it has one, a "[, ...]" part optional, and
# "→ type" the result type.  Any other span is a call ("fence.mark(R)",
# "fence.reset('inventory', 10)") and needs only a function of that name
# that takes that many arguments.  0.2.0's CHANGELOG announced a
# "fenced_update(resource, token, owner, sql, VARIADIC text[])" that never
# existed.
. "$(dirname "$0")/../lib/lib.sh"
e2e_init doc_signatures

sql -c "SELECT json_agg(json_build_object(
		'name', p.proname,
		'argnames', coalesce(p.proargnames, '{}'),
		'argtypes', (SELECT coalesce(array_agg(format_type(t, NULL) ORDER BY i), '{}')
			FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(t, i)),
		'defaults', p.pronargdefaults,
		'variadic', p.provariadic <> 0,
		'result', format_type(p.prorettype, NULL)))
	FROM pg_proc p WHERE p.pronamespace = 'fence'::regnamespace" >"$WORK/functions.json"

cd "$TOP"
rc=0
docs=(README.md docs/*.md CHANGELOG.md client/README.md)
[ -f "${docs[1]}" ] || fail "no docs/*.md"
"$E2E_PY" - "$WORK/functions.json" "${docs[@]}" <<'PY' || rc=$?
import json, re, sys

functions = {}
for f in json.load(open(sys.argv[1])):
    functions.setdefault(f["name"], []).append(f)

def words(arg):
    return arg.replace("(", " ").split()

def matches_param(arg, f, i, nargs):
    """ARG (one argument of a written signature) is parameter I of F."""
    w = arg.split()
    if w and w[0] == "VARIADIC":
        if not (f["variadic"] and i == len(f["argtypes"]) - 1):
            return False
        w = w[1:]
    if "DEFAULT" in w:
        if i < len(f["argtypes"]) - f["defaults"]:
            return False
        w = w[:w.index("DEFAULT")]
    name = f["argnames"][i] if i < len(f["argnames"]) else ""
    typ = f["argtypes"][i]
    if len(w) == 1:
        return w[0] in (name, typ)
    if len(w) == 2:
        return w[0] == name and w[1] == typ
    return False

def is_signature(args, fs):
    names = {n for f in fs for n in f["argnames"]}
    types = {t for f in fs for t in f["argtypes"]}
    for a in args:
        w = a.split()
        if w and (w[0] == "VARIADIC" or w[0] in names or (len(w) == 1 and w[0] in types)):
            return True
    return False

def check_signature(args, result, fs):
    for f in fs:
        n = len(f["argtypes"])
        if not n - f["defaults"] <= len(args) <= n:
            continue
        if all(matches_param(a, f, i, n) for i, a in enumerate(args)) and \
                (result is None or result == f["result"]):
            return True
    return False

def check_call(args, fs):
    for f in fs:
        n = len(f["argtypes"])
        low = n - f["defaults"] - (1 if f["variadic"] else 0)
        if low <= len(args) and (f["variadic"] or len(args) <= n):
            return True
    return False

span_re = re.compile(r"`([^`]+)`")
call_re = re.compile(r"(?:\bfence\.|(?<![\w.]))([a-z_]+)\((.*?)\)(?:\s*→\s*(\S+))?")
bad = checked = 0
for path in sys.argv[2:]:
    text = open(path).read()
    # inline code only: fenced blocks are examples that run (or could)
    text = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)
    for m in span_re.finditer(text):
        span = " ".join(m.group(1).split())
        line = text.count("\n", 0, m.start()) + 1
        for c in call_re.finditer(span):
            name, inner, result = c.group(1), c.group(2), c.group(3)
            if name not in functions:
                continue
            checked += 1
            fs = functions[name]
            if inner.strip() == "":
                continue        # "fence.mark()": a mention of the function
            # "[, VARIADIC params "any"]": an optional part (not text[])
            full = [a.strip() for a in re.sub(r"\[\s*,([^\[\]]*)\]", r",\1", inner).split(",") if a.strip()]
            short = [a.strip() for a in re.sub(r"\[\s*,[^\[\]]*\]", "", inner).split(",") if a.strip()]
            if is_signature(full, fs):
                ok = check_signature(full, result, fs) and check_signature(short, result, fs)
                kind = "signature"
            else:
                ok = check_call(full, fs)
                kind = "call"
            if not ok:
                bad += 1
                have = "; ".join("%s(%s) -> %s" % (name, ", ".join(
                    ((f["argnames"][i] + " ") if i < len(f["argnames"]) and f["argnames"][i] else "") + t
                    for i, t in enumerate(f["argtypes"])), f["result"]) for f in fs)
                print("%s:%d: no such %s: %s (the extension has: %s)" % (path, line, kind, span, have))
print("checked %d mentions of fence functions" % checked)
sys.exit(1 if bad else 0)
PY
[ "$rc" -eq 0 ] || fail "the documentation names functions the extension does not have"
say "pass"
