"""pgfence._lib: libfence.so.2 and libpq.so.5 through ctypes.

libfence is the one implementation of the lease protocol; this module only
finds it, declares the prototypes of the functions fence.h exports, and
reads the two public fields of a context that carry its errors ("err" and
"errstr", fence.h's hiredis-style error model).  Every other libfence type
is handled through an opaque pointer, so that a change of a private layout
in the C library cannot go unnoticed here.

libpq is loaded only when a client announces to PostgreSQL: fence_announce
takes a PGconn, which libpq's PQconnectdb makes.  libfence itself opens
libpq by its soname at its first use (client/pq.h), and the dynamic linker
hands both of us the same copy.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_int,
    c_long,
    c_longlong,
    c_size_t,
    c_void_p,
)

from .errors import ConfigurationError, LibraryNotFound

SONAME = "libfence.so.2"
LIBPQ_SONAME = "libpq.so.5"
# fence.h
ERRSTR_LEN = 256
MAX_TTL_MS = 100000000000

# the places "make install" (PREFIX=/usr/local) and the Debian package put it
_DIRS = (
    "/usr/local/lib",
    "/usr/local/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib",
)

_MISSING = (
    "libfence.so.2 not found ({tried}): install the Debian package "
    "libfence2 (apt install libfence2), or build pgfence and run "
    "\"make install\" (into /usr/local/lib, then ldconfig); or set "
    "PGFENCE_LIBFENCE to the library's path"
)


class _CtxHead(Structure):
    """The public head of fence_ctx: the error model fence.h documents
    ("ctx->err", "ctx->errstr").  The private part after it is never read."""

    _fields_ = [("err", c_int), ("errstr", c_char * ERRSTR_LEN)]


LOST_FN = CFUNCTYPE(None, c_void_p, c_void_p)
LEASES_LOST_FN = CFUNCTYPE(None, c_void_p, c_void_p, c_void_p)

# name: (restype, argtypes), for every function this package calls
_PROTOTYPES = {
    "fence_connect_timeout": (POINTER(_CtxHead), [c_char_p, c_long, c_long]),
    "fence_free": (None, [POINTER(_CtxHead)]),
    "fence_strerror": (c_char_p, [c_int]),
    "fence_set_owner_name": (c_int, [POINTER(_CtxHead), c_char_p]),
    "fence_set_min_replicas": (c_int, [POINTER(_CtxHead), c_int, c_long]),
    "fence_parse_duration": (c_int, [c_char_p, POINTER(c_longlong), c_char_p, c_size_t]),
    "fence_acquire": (c_void_p, [POINTER(_CtxHead), c_char_p, c_longlong]),
    "fence_acquire_wait": (c_void_p, [POINTER(_CtxHead), c_char_p, c_longlong, c_longlong]),
    "fence_cancel_wait": (None, [POINTER(_CtxHead)]),
    "fence_extend": (c_int, [POINTER(_CtxHead), c_void_p, c_longlong]),
    "fence_release": (c_int, [POINTER(_CtxHead), c_void_p]),
    "fence_release_acquire": (
        c_void_p,
        [POINTER(_CtxHead), c_void_p, c_char_p, c_longlong, c_longlong, POINTER(c_int)],
    ),
    "fence_lease_free": (None, [c_void_p]),
    "fence_lease_resource": (c_char_p, [c_void_p]),
    "fence_lease_owner": (c_char_p, [c_void_p]),
    "fence_lease_token": (c_longlong, [c_void_p]),
    "fence_lease_ttl": (c_longlong, [c_void_p]),
    "fence_lease_state": (c_int, [c_void_p]),
    "fence_heartbeat_start": (c_int, [POINTER(_CtxHead), c_void_p, LOST_FN, c_void_p]),
    "fence_heartbeat_stop": (None, [c_void_p]),
    "fence_announce": (c_int, [POINTER(_CtxHead), c_void_p, c_void_p]),
    "fence_pg_hint": (c_char_p, [POINTER(_CtxHead)]),
    "fence_acquire_many_wait": (
        c_void_p,
        [POINTER(_CtxHead), POINTER(c_char_p), c_size_t, c_longlong, c_longlong],
    ),
    "fence_leases_count": (c_size_t, [c_void_p]),
    "fence_leases_member": (c_void_p, [c_void_p, c_size_t]),
    "fence_leases_state": (c_int, [c_void_p]),
    "fence_leases_extend": (c_int, [POINTER(_CtxHead), c_void_p, c_longlong]),
    "fence_leases_release": (c_int, [POINTER(_CtxHead), c_void_p]),
    "fence_leases_free": (None, [c_void_p]),
    "fence_leases_heartbeat_start": (
        c_int,
        [POINTER(_CtxHead), c_void_p, LEASES_LOST_FN, c_void_p],
    ),
    "fence_leases_heartbeat_stop": (None, [c_void_p]),
    "fence_leases_announce": (c_int, [POINTER(_CtxHead), c_void_p, c_void_p]),
    "fence_leases_tokens": (c_void_p, [c_void_p]),
    # returns malloc'd memory: c_void_p, read and free()d by format_tokens
    "fence_format_tokens": (
        c_void_p,
        [c_size_t, POINTER(c_char_p), POINTER(c_longlong), POINTER(c_char_p)],
    ),
}

_LIBPQ_PROTOTYPES = {
    "PQconnectdb": (c_void_p, [c_char_p]),
    "PQstatus": (c_int, [c_void_p]),
    "PQerrorMessage": (c_char_p, [c_void_p]),
    "PQfinish": (None, [c_void_p]),
    "PQreset": (None, [c_void_p]),
}
CONNECTION_OK = 0

_lock = threading.Lock()
_fence = None
_libpq = None
_libc = None


def _candidates():
    env = os.environ.get("PGFENCE_LIBFENCE")
    if env:
        # an explicit choice: that file, or nothing
        return [env]
    found = [SONAME]  # the dynamic linker's own search (ld.so.cache, LD_LIBRARY_PATH)
    name = ctypes.util.find_library("fence")
    if name and name not in found:
        found.append(name)
    found += [os.path.join(d, SONAME) for d in _DIRS]
    return found


def _declare(lib, prototypes):
    for name, (restype, argtypes) in prototypes.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


def fence():
    """libfence.so.2, loaded and declared once; LibraryNotFound otherwise."""
    global _fence, _libc
    if _fence is not None:
        return _fence
    with _lock:
        if _fence is None:
            tried = []
            lib = None
            for path in _candidates():
                try:
                    lib = ctypes.CDLL(path)
                    break
                except OSError:
                    tried.append(path)
            if lib is None:
                raise LibraryNotFound(_MISSING.format(tried=", ".join(tried)))
            try:
                _declare(lib, _PROTOTYPES)
            except AttributeError as e:
                raise LibraryNotFound(
                    "%s lacks a function this package needs (%s): install "
                    "libfence 0.3.0 or later" % (path, e)
                ) from None
            _libc = ctypes.CDLL(None)
            _libc.free.restype = None
            _libc.free.argtypes = [c_void_p]
            _fence = lib
    return _fence


def libpq():
    """libpq.so.5 (for PQconnectdb), loaded on first use."""
    global _libpq
    if _libpq is not None:
        return _libpq
    with _lock:
        if _libpq is None:
            try:
                lib = ctypes.CDLL(LIBPQ_SONAME)
            except OSError:
                raise ConfigurationError(
                    "libpq.so.5 not found: announcing to PostgreSQL needs "
                    "libpq (apt install libpq5)"
                ) from None
            _declare(lib, _LIBPQ_PROTOTYPES)
            _libpq = lib
    return _libpq


def strerror(code: int) -> str:
    return fence().fence_strerror(code).decode()


def ctx_error(ctx):
    """(err, errstr) of a context, as its last failing call left them."""
    head = ctx.contents
    return head.err, head.errstr.decode(errors="replace")


def format_tokens(resources, tokens, owners) -> str:
    """fence_format_tokens: the fence.tokens value naming each triple."""
    n = len(resources)
    res = (c_char_p * n)(*[r.encode() for r in resources])
    tok = (c_longlong * n)(*tokens)
    own = (c_char_p * n)(*[o.encode() if o else None for o in owners])
    return take_string(fence().fence_format_tokens(n, res, tok, own))


def take_string(p) -> str:
    """The text of a string libfence malloc'd, which is then free()d."""
    if not p:
        raise MemoryError("fence_format_tokens")
    try:
        return ctypes.string_at(p).decode()
    finally:
        _libc.free(p)
