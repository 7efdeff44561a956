#!/usr/bin/env bash
# versions: one release version everywhere it is written.  client/fence.h
# (FENCE_VERSION, which the client's Makefile, "fence --version" and "make
# dist" read), META.json, debian/changelog (its upstream part), the man
# page and the newest CHANGELOG.md section ("## X.Y.Z (unreleased)" or
# "## X.Y.Z (YYYY-MM-DD)") must agree, and every release tag vX.Y.Z must
# have a dated CHANGELOG.md section.  The extension's own version
# (extension/Makefile, the control file, META.json's provides) agrees
# within itself.
. "$(dirname "$0")/lib.sh"
pkg_init versions
cd "$TOP"

bad=0
# same WHAT VALUE EXPECTED
same() {
	if [ "$2" = "$3" ]; then
		say "$1: $2"
	else
		say "$1 says '$2', expected '$3'"
		bad=$((bad + 1))
	fi
}

release=$(version_of_header client/fence.h)
[[ $release =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "client/fence.h: FENCE_VERSION '$release'"
same "client/fence.h FENCE_VERSION" "$release" "$release"
same "client/fence.h FENCE_VERSION_MAJOR.MINOR.PATCH" \
	"$(awk '$1 == "#define" && $2 ~ /^FENCE_VERSION_(MAJOR|MINOR|PATCH)$/ { v = v sep $3; sep = "." } END { print v }' client/fence.h)" "$release"
same "META.json version" "$(/usr/bin/python3 -c 'import json; print(json.load(open("META.json"))["version"])')" "$release"
debian=$(dpkg-parsechangelog -l debian/changelog -S Version)
same "debian/changelog (upstream part of $debian)" "${debian%-*}" "$release"
same "client/cli/fence.1 .TH" "$(sed -n 's/^\.TH FENCE 1 "[^"]*" "pgfence \([^"]*\)".*/\1/p' client/cli/fence.1)" "$release"
top=$(grep -m1 '^## ' CHANGELOG.md)
[[ $top =~ ^"## $release ("(unreleased|[0-9]{4}-[0-9]{2}-[0-9]{2})")"$ ]] ||
	{ say "CHANGELOG.md's newest section is '$top', expected '## $release (unreleased)' or a date"; bad=$((bad + 1)); }

for tag in $(git tag -l 'v[0-9]*'); do
	grep -qE "^## ${tag#v} \([0-9]{4}-[0-9]{2}-[0-9]{2}\)$" CHANGELOG.md ||
		{ say "tag $tag has no dated section in CHANGELOG.md"; bad=$((bad + 1)); }
done

ext=$(sed -n 's/^EXTVERSION = //p' extension/Makefile)
same "extension/fence.control default_version" "$(sed -n "s/^default_version = '\(.*\)'/\1/p" extension/fence.control)" "$ext"
same "META.json provides.fence.version" \
	"$(/usr/bin/python3 -c 'import json; print(json.load(open("META.json"))["provides"]["fence"]["version"])')" "$ext"

[ "$bad" -eq 0 ] || fail "$bad versions disagree"
say "pass: release $release, extension $ext"
