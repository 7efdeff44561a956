"""pgfence: fenced leases on Redis, fencing tokens checked by PostgreSQL.

A thin binding over libfence (libfence.so.2, through ctypes): the C library
is the one implementation of the lease protocol, and every topology and
guarantee of the ``fence`` command holds here.

    import pgfence

    client = pgfence.Client(pg="dbname=app")        # Redis: $FENCE_REDIS_URL
    with client.lease("inventory:sku-1", ttl="10s", wait="5s") as lease:
        with psycopg.connect("dbname=app") as conn:
            pgfence.set_tokens(conn, lease)         # SET LOCAL fence.tokens
            conn.execute("UPDATE stock SET qty = qty - 1 WHERE sku = 'sku-1'")

See docs/python.md.
"""
from .client import Client, Lease, LeaseSet, Member, duration_ms
from .errors import (
    ConfigurationError,
    FenceError,
    LeaseLost,
    LibraryNotFound,
    NotAcquired,
    StaleToken,
    Unreachable,
    is_stale,
    sqlstate,
)
from .sql import aset_tokens, afenced_update, fenced_update, server_settings, set_tokens

__version__ = "0.3.0"

__all__ = [
    "Client",
    "Lease",
    "LeaseSet",
    "Member",
    "duration_ms",
    "FenceError",
    "NotAcquired",
    "LeaseLost",
    "Unreachable",
    "ConfigurationError",
    "LibraryNotFound",
    "StaleToken",
    "is_stale",
    "sqlstate",
    "set_tokens",
    "fenced_update",
    "aset_tokens",
    "afenced_update",
    "server_settings",
]
