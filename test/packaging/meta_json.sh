#!/usr/bin/env bash
# meta_json: META.json is valid JSON and a valid PGXN distribution file
# (https://pgxn.org/spec/, meta-spec 1.0.0): the required keys, a
# semantic version, a license PGXN knows (postgresql, as LICENSE says),
# each extension it provides with a version and a file and a docfile that
# exist (versions.sh compares the versions with the sources).
. "$(dirname "$0")/lib.sh"
pkg_init meta_json
cd "$TOP"

/usr/bin/python3 - <<'PY' || fail "META.json is not a valid PGXN META.json"
import json, re, sys

problems = []
try:
    with open("META.json", encoding="utf-8") as f:
        meta = json.load(f)
except ValueError as e:
    sys.exit("META.json: not JSON: %s" % e)

def bad(msg):
    problems.append(msg)

semver = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+)?$")
required = ["name", "abstract", "maintainer", "license", "provides", "version", "meta-spec"]
known = required + ["description", "prereqs", "release_status", "resources", "tags",
                    "no_index", "generated_by"]
for key in required:
    if key not in meta:
        bad("missing required key %r" % key)
for key in meta:
    if key not in known and not key.lower().startswith("x_"):
        bad("unknown key %r" % key)

if not re.match(r"^[^\s/\\:]{2,}$", meta.get("name", "")):
    bad("name %r is not a valid distribution name" % meta.get("name"))
if not semver.match(meta.get("version", "")):
    bad("version %r is not a semantic version" % meta.get("version"))
if meta.get("meta-spec", {}).get("version") != "1.0.0":
    bad("meta-spec version is not 1.0.0")
maint = meta.get("maintainer")
if not (isinstance(maint, str) or (isinstance(maint, list) and maint and all(isinstance(m, str) for m in maint))):
    bad("maintainer must be a string or a list of strings")
if meta.get("license") != "postgresql":
    bad("license is %r; LICENSE holds the PostgreSQL License (\"postgresql\")" % meta.get("license"))
if meta.get("release_status", "stable") not in ("stable", "testing", "unstable"):
    bad("release_status %r" % meta.get("release_status"))
for tag in meta.get("tags", []):
    if not isinstance(tag, str) or not 0 < len(tag) < 256:
        bad("tag %r" % tag)

provides = meta.get("provides", {})
if not provides:
    bad("provides names no extension")
for ext, info in provides.items():
    for key in ("file", "version"):
        if key not in info:
            bad("provides.%s has no %s" % (ext, key))
    if not semver.match(info.get("version", "")):
        bad("provides.%s.version %r is not a semantic version" % (ext, info.get("version")))
    for key in ("file", "docfile"):
        path = info.get(key)
        if path is not None:
            try:
                open(path).close()
            except OSError:
                bad("provides.%s.%s: no file %s" % (ext, key, path))

for phase, relations in meta.get("prereqs", {}).items():
    if phase not in ("configure", "build", "test", "runtime", "develop"):
        bad("prereqs phase %r" % phase)
    for relation, reqs in relations.items():
        if relation not in ("requires", "recommends", "suggests", "conflicts"):
            bad("prereqs relation %r" % relation)
        for name, version in reqs.items():
            if not (version == 0 or semver.match(str(version))):
                bad("prereqs %s %s: version %r" % (phase, name, version))

for p in problems:
    print("META.json: " + p)
sys.exit(1 if problems else 0)
PY
say "pass: META.json $(/usr/bin/python3 -c 'import json; m = json.load(open("META.json")); print(m["name"], m["version"], "provides", ", ".join("%s %s" % (k, v["version"]) for k, v in m["provides"].items()))')"
