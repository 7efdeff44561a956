"""pgfence.errors: libfence's outcomes as Python exceptions.

Every exception is a FenceError, which carries libfence's error kind
(``code``, one of fence.h's FENCE_ERR_* numbers; 0 for errors made here)
and its message.  The classes sort the kinds by what a caller does next:

========================  ==========================================  ==========================
exception                 libfence kinds                              what to do
========================  ==========================================  ==========================
NotAcquired               BUSY, TIMEOUT, REPLICAS                     try later, or wait longer
LeaseLost                 LOST                                        stop writing; take a new lease
Unreachable               IO, PROTOCOL, SUSPECT; PostgreSQL down      retry once the server is back
ConfigurationError        ARG, AUTH, TLS, STATE; database not set up  fix the URL, ACL or grants
StaleToken                STALE (PostgreSQL refused the token, LF001) never retry with that token
FenceError (the base)     OVERFLOW, OOM, PG                           see the message
========================  ==========================================  ==========================

:func:`is_stale` recognises a stale-token refusal (SQLSTATE ``LF001``)
raised by psycopg 3, psycopg2 or asyncpg, as well as StaleToken.
"""
from __future__ import annotations

from typing import Optional

# fence.h's FENCE_ERR_* kinds
ERR_IO = 1
ERR_PROTOCOL = 2
ERR_REPLY = 3
ERR_BUSY = 4
ERR_TIMEOUT = 5
ERR_LOST = 6
ERR_SUSPECT = 7
ERR_STALE = 8
ERR_PG = 9
ERR_ARG = 10
ERR_OVERFLOW = 11
ERR_OOM = 12
ERR_AUTH = 13
ERR_STATE = 14
ERR_REPLICAS = 15
ERR_TLS = 16

STALE_SQLSTATE = "LF001"


class FenceError(Exception):
    """A libfence call failed.  ``code`` is fence.h's FENCE_ERR_* kind
    (0 when the error was found in Python), ``message`` libfence's text,
    ``hint`` what to run when PostgreSQL is not set up for fence."""

    def __init__(self, message: str, code: int = 0, hint: Optional[str] = None):
        super().__init__(message if not hint else "%s\n%s" % (message, hint))
        self.message = message
        self.code = code
        self.hint = hint


class NotAcquired(FenceError):
    """The lease was not acquired: another owner holds it (no wait, or the
    wait ran out), or too few replicas acknowledged it."""


class LeaseLost(FenceError):
    """The lease is not (or no longer) ours: stop writing under it."""


class Unreachable(FenceError):
    """Redis or PostgreSQL could not be reached, or stopped answering."""


class ConfigurationError(FenceError):
    """Refused by configuration: a bad URL, duration or resource name, a
    login or ACL refusal, TLS refused, or a database without the fence
    extension or the grant (``hint`` then says what to run)."""


class LibraryNotFound(ConfigurationError, ImportError):
    """libfence.so.2 (or libpq.so.5) could not be loaded."""


class StaleToken(FenceError):
    """PostgreSQL refused the token (SQLSTATE LF001): a newer holder has
    announced.  Never retry with the same token."""

    sqlstate = STALE_SQLSTATE


_CLASSES = {
    ERR_BUSY: NotAcquired,
    ERR_TIMEOUT: NotAcquired,
    ERR_REPLICAS: NotAcquired,
    ERR_LOST: LeaseLost,
    ERR_IO: Unreachable,
    ERR_PROTOCOL: Unreachable,
    ERR_SUSPECT: Unreachable,
    ERR_ARG: ConfigurationError,
    ERR_AUTH: ConfigurationError,
    ERR_TLS: ConfigurationError,
    ERR_STATE: ConfigurationError,
    ERR_STALE: StaleToken,
}


def error_for(code: int, message: str, hint: Optional[str] = None) -> FenceError:
    """The exception for libfence's error kind "code"."""
    if hint:
        # PostgreSQL refused fence's own SQL: not set up (fence_pg_hint)
        return ConfigurationError(message, code, hint)
    return _CLASSES.get(code, FenceError)(message, code)


def sqlstate(exc: BaseException) -> Optional[str]:
    """The SQLSTATE of a driver's exception: psycopg2's ``pgcode``,
    psycopg 3's and asyncpg's ``sqlstate``; None for anything else."""
    for attr in ("sqlstate", "pgcode"):
        value = getattr(exc, attr, None)
        if isinstance(value, str):
            return value
    return None


def is_stale(exc: BaseException) -> bool:
    """True when "exc" is PostgreSQL refusing a stale fencing token
    (SQLSTATE LF001), from psycopg 3, psycopg2 or asyncpg, or libfence's
    StaleToken; also when that refusal is the cause of "exc" (``raise ...
    from``).  Such a write must not be retried with the same token."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, StaleToken) or sqlstate(exc) == STALE_SQLSTATE:
            return True
        exc = exc.__cause__
        seen += 1
    return False
