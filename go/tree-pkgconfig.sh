#!/bin/sh
# go/tree-pkgconfig.sh DIR: write DIR/libfence.pc for the libfence built in
# this tree's client/ (not installed), so that cgo's pkg-config finds it as
# a user's finds the installed one: PKG_CONFIG_PATH=DIR go test ./...
# The rpath lets the programs built find libfence.so.2 when they run.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
cat >"$1/libfence.pc" <<PC
Name: libfence
Description: libfence of the tree at $top (not installed)
Version: $(sed -n 's/^#define FENCE_VERSION "\(.*\)"/\1/p' "$top/client/fence.h")
Requires: libpq
Libs: -L$top/client -Wl,-rpath,$top/client -lfence
Cflags: -I$top/client
PC
