# test/lib/platform.sh: what this platform's Debian cannot give a test.
#
# A test whose dependency is missing skips.  Under CI that skip is a
# failure where "make test" (test/lib/deps.sh) would have installed the
# dependency (its reason says "not installed"), and not where this
# Debian's archive has no such package at all, which deps.sh leaves out
# and says so (psycopg 3 and Debian's pgx before bookworm): no command of
# the README can install it there.  The reason then names the platform,
# and never the words of a missing dependency (run.sh's dep_skip).

# platform_name: this Debian's codename, or its name.
platform_name() {
	local name=
	[ -r /etc/os-release ] &&
		name=$(. /etc/os-release && echo "${VERSION_CODENAME:-${PRETTY_NAME:-}}")
	echo "${name:-this platform}"
}

# platform_lacks PACKAGE: true when apt knows no package PACKAGE here
# (false where there is no apt: the dependency is then only missing).
platform_lacks() {
	command -v apt-cache >/dev/null &&
		[ -z "$(apt-cache show --no-all-versions "$1" 2>/dev/null | head -n 1)" ]
}

# platform_skip_reason PACKAGE WHAT: the reason of a skip for WHAT, which
# needs PACKAGE, that this Debian lacks.
platform_skip_reason() {
	echo "$(platform_name) has no package $1 ($2)"
}
