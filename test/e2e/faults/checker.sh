#!/usr/bin/env bash
# checker: the history checker itself, on histories written by hand: one
# that holds, and one for each kind of violation it must report.
set -euo pipefail
E2E_DIR=$(cd "$(dirname "$0")/../lib" && pwd)
E2E_PY=${E2E_PY:-$(command -v /usr/bin/python3 || command -v python3)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
T=$'\t'

# case NAME WANT_EXIT [KIND]: history from stdin
case_() {
	local name=$1 want=$2 kind=${3:-} out rc
	cat >"$dir/$name"
	set +e
	out=$("$E2E_PY" "$E2E_DIR/check_history.py" "$dir/$name" 2>&1)
	rc=$?
	set -e
	[ "$rc" = "$want" ] || { echo "$out"; echo "FAIL: $name: exit $rc, expected $want"; exit 1; }
	[ -z "$kind" ] || grep -q "^violation $kind:" <<<"$out" || { echo "$out"; echo "FAIL: $name: no $kind"; exit 1; }
	echo "ok: $name"
}

case_ holds 0 <<EOF2
A${T}commit${T}r${T}1${T}a${T}-${T}-${T}committed${T}seq=1
B${T}commit${T}r${T}2${T}b${T}-${T}-${T}committed${T}seq=2
B${T}write${T}r${T}2${T}b${T}-${T}-${T}ok${T}seq=2
A${T}write${T}r${T}1${T}a${T}-${T}-${T}LF001
C${T}commit${T}r${T}2${T}-${T}-${T}-${T}committed${T}seq=3
check${T}counter${T}r${T}-${T}-${T}-${T}-${T}-${T}initial=10${T}final=7${T}step=-1
EOF2
# seq order, not line order, is commit order
case_ token-down 1 token-down <<EOF2
B${T}commit${T}r${T}2${T}b${T}-${T}-${T}committed${T}seq=1
A${T}commit${T}r${T}1${T}a${T}-${T}-${T}committed${T}seq=2
EOF2
case_ seq-order 0 <<EOF2
B${T}commit${T}r${T}2${T}b${T}-${T}-${T}committed${T}seq=2
A${T}commit${T}r${T}1${T}a${T}-${T}-${T}committed${T}seq=1
EOF2
case_ two-owners 1 two-owners <<EOF2
A${T}commit${T}r${T}1${T}a${T}-${T}-${T}committed${T}seq=1
B${T}commit${T}r${T}1${T}b${T}-${T}-${T}committed${T}seq=2
EOF2
case_ lost-update 1 lost-update <<EOF2
A${T}commit${T}r${T}1${T}a${T}-${T}-${T}committed${T}seq=1
B${T}commit${T}r${T}2${T}b${T}-${T}-${T}committed${T}seq=2
check${T}counter${T}r${T}-${T}-${T}-${T}-${T}-${T}initial=10${T}final=9${T}step=-1
EOF2
case_ phantom 1 phantom <<EOF2
A${T}commit${T}r${T}1${T}a${T}-${T}-${T}committed${T}seq=1
B${T}write${T}r${T}2${T}b${T}-${T}-${T}ok${T}seq=7
EOF2
case_ worker-reported 1 token-down <<EOF2
B${T}write${T}r${T}2${T}b${T}-${T}-${T}ok${T}seq=1
A${T}write${T}r${T}1${T}a${T}-${T}-${T}ok${T}seq=2
EOF2
case_ per-resource 0 <<EOF2
B${T}commit${T}r${T}2${T}b${T}-${T}-${T}committed${T}seq=1
A${T}commit${T}s${T}1${T}a${T}-${T}-${T}committed${T}seq=2
EOF2
case_ malformed 2 <<EOF2
A${T}commit${T}r
EOF2
case_ no-seq 2 <<EOF2
A${T}commit${T}r${T}1${T}a${T}-${T}-${T}committed
EOF2
echo pass
