# test/packaging/lib.sh: shared helpers of the packaging checks.
#
# A check sources this file, then calls pkg_init NAME: $WORK is a temp
# dir removed on exit, $TOP the source tree, $FENCE_BIN the fence command
# built there.  Exit status: 0 pass, 77 skip, anything else fail.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FENCE_BIN=${FENCE_BIN:-$TOP/client/fence}
PKG_ON_EXIT=

pkg_init() {
	PKG_NAME=$1
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/pgfence-$PKG_NAME.XXXXXX")
	chmod 755 "$WORK"
	trap pkg_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

pkg_cleanup() {
	local rc=$?
	trap - EXIT
	[ -z "$PKG_ON_EXIT" ] || $PKG_ON_EXIT || true
	[ -n "${FENCE_KEEP_TMP:-}" ] || rm -rf "$WORK"
	exit "$rc"
}

say() { printf '%s %s: %s\n' "$(date +%T.%3N)" "$PKG_NAME" "$*"; }
fail() { say "FAIL: $*"; exit 1; }
skip() { say "SKIP: $*"; exit 77; }

# version_of_header FILE: the FENCE_VERSION that a fence.h defines.
version_of_header() {
	sed -n 's/^#define FENCE_VERSION "\(.*\)"/\1/p' "$1"
}

# help_long_options: every long option "fence --help" names, one a line.
help_long_options() {
	"$FENCE_BIN" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u
}

# help_verbs: the verbs of the Usage lines of "fence --help".
help_verbs() {
	"$FENCE_BIN" --help | sed -n 's/^  fence \([a-z]*\) .*/\1/p'
}
