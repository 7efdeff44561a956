// go/cgo.go: how the binding finds libfence.  pkg-config reads
// libfence.pc, which "make install" and the Debian package libfence-dev
// put where pkg-config looks (PKG_CONFIG_PATH for anywhere else); its
// Requires brings libpq, whose PQconnectdb makes the connections that
// announces run on.  The flags hold for every file of the package,
// pgfence.c too.

package pgfence

// #cgo pkg-config: libfence
import "C"
