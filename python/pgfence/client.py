"""pgfence.client: a client, its leases and its sets of leases.

A Client holds the Redis URL (and, optionally, a PostgreSQL conninfo to
announce tokens to) and a small pool of libfence contexts: a fence_ctx is
not thread-safe, so each call takes one from the pool for its duration, and
threads (and the threads that asyncio waits run in) never share one.

A Lease (or LeaseSet) is made by Client.lease() (Client.leases()) and taken
by ``with``, ``async with`` or acquire(): libfence takes it (queueing in
Redis while another owner holds it, for at most "wait"), announces its
token to PostgreSQL, and starts its heartbeat thread, which renews it every
ttl/3 and sets ``lost`` when it cannot.  Leaving the block releases it.
"""
from __future__ import annotations

import asyncio
import ctypes
import math
import os
import threading
from datetime import timedelta
from typing import Any, Dict, Iterable, List, Optional, TypeVar, Union

from . import _lib
from .errors import (
    ERR_ARG,
    ERR_IO,
    ERR_LOST,
    ERR_PG,
    ERR_PROTOCOL,
    ConfigurationError,
    FenceError,
    LeaseLost,
    Unreachable,
    error_for,
)

Duration = Union[str, int, float, timedelta, None]

DEFAULT_URL = "redis://127.0.0.1:6379"

# fence.h's lease states, by name
HELD, SUSPECT, LOST = "held", "suspect", "lost"
_STATES = {0: HELD, 1: SUSPECT, 2: LOST}


def duration_ms(value: Duration, what: str, allow_inf: bool = False) -> int:
    """Milliseconds of a duration: a string with a unit as the fence command
    takes it ("250ms", "10s", "2m", "1h"; "inf" for a wait), a number of
    seconds, or a timedelta.  None is 0."""
    if value is None:
        return 0
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if isinstance(value, str):
        text = value.strip()
        if allow_inf and text == "inf":
            return _lib.MAX_TTL_MS
        if text.isdigit():
            raise ConfigurationError(
                'invalid %s "%s": a duration needs a unit (ms, s, m or h), '
                "or pass a number of seconds" % (what, value), 10
            )
        ms = ctypes.c_longlong()
        err = ctypes.create_string_buffer(256)
        if _lib.fence().fence_parse_duration(text.encode(), ctypes.byref(ms), err, 256) != 0:
            raise ConfigurationError("invalid %s: %s" % (what, err.value.decode()), 10)
        return ms.value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if allow_inf and math.isinf(value) and value > 0:
            return _lib.MAX_TTL_MS
        if value < 0 or math.isnan(value) or math.isinf(value):
            raise ConfigurationError("invalid %s: %r" % (what, value), 10)
        return int(round(value * 1000))
    raise ConfigurationError("invalid %s: %r" % (what, value), 10)


class _Slot:
    """One libfence context, and the PostgreSQL connection announces use on
    it; used by one thread at a time."""

    __slots__ = ("ctx", "pg")

    def __init__(self, ctx):
        self.ctx = ctx
        self.pg = None

    def close(self):
        if self.pg:
            _lib.libpq().PQfinish(self.pg)
            self.pg = None
        if self.ctx:
            _lib.fence().fence_free(self.ctx)
            self.ctx = None


class Client:
    """A pgfence client: leases on the Redis at "redis_url", tokens
    announced to the PostgreSQL at "pg".

    "redis_url" is anything libfence takes (redis://, rediss://, unix://,
    redis-sentinel://, redis-cluster://, or several URLs separated by
    whitespace for a quorum); None means $FENCE_REDIS_URL, else
    redis://127.0.0.1:6379.  "pg" is a libpq conninfo ("dbname=app" or a
    postgresql:// URI); without it tokens are not announced, and the first
    fenced write announces them instead.  "owner_name" goes in front of the
    owner ids ("NAME/HEX"), so that who holds a lease shows in Redis and in
    fence.fences.  Timeouts are in seconds (or durations).

    The client connects to Redis when it is made, so that a wrong URL or a
    server that is down shows at once (ConfigurationError, Unreachable).
    Close it (or use it in a ``with``) to free its connections.
    """

    def __init__(
        self,
        redis_url: Optional[str] = None,
        pg: Optional[str] = None,
        *,
        owner_name: Optional[str] = None,
        connect_timeout: Duration = 5.0,
        command_timeout: Duration = 5.0,
    ) -> None:
        self.redis_url = redis_url or os.environ.get("FENCE_REDIS_URL") or DEFAULT_URL
        self.pg = pg
        self.owner_name = owner_name
        self._connect_ms = duration_ms(connect_timeout, "connect timeout")
        self._command_ms = duration_ms(command_timeout, "command timeout")
        self._free: List[_Slot] = []
        self._lock = threading.Lock()
        self._closed = False
        self._checkin(self._new_slot())

    # -- the pool of contexts -------------------------------------------

    def _new_slot(self) -> _Slot:
        lib = _lib.fence()
        ctx = lib.fence_connect_timeout(self.redis_url.encode(), self._connect_ms, self._command_ms)
        if not ctx:
            raise MemoryError("fence_connect")
        slot = _Slot(ctx)
        code, message = _lib.ctx_error(ctx)
        if code == 0 and self.owner_name is not None:
            if lib.fence_set_owner_name(ctx, self.owner_name.encode()) != 0:
                code, message = _lib.ctx_error(ctx)
        if code:
            slot.close()
            raise error_for(code, message)
        return slot

    def _checkout(self) -> _Slot:
        if self._closed:
            raise FenceError("client is closed")
        with self._lock:
            if self._free:
                return self._free.pop()
        return self._new_slot()

    def _checkin(self, slot: _Slot) -> None:
        with self._lock:
            if not self._closed and len(self._free) < 8:
                self._free.append(slot)
                return
        slot.close()

    def _fail(self, slot: _Slot) -> FenceError:
        """The exception for the last error on "slot"'s context.  A context
        whose connection broke is not reused (the next gets a new one)."""
        code, message = _lib.ctx_error(slot.ctx)
        hint = None
        if code == ERR_PG:
            raw = _lib.fence().fence_pg_hint(slot.ctx)
            hint = raw.decode() if raw else None
        exc = error_for(code, message, hint)
        if code in (ERR_IO, ERR_PROTOCOL):
            slot.close()
            slot.ctx = _lib.fence().fence_connect_timeout(
                self.redis_url.encode(), self._connect_ms, self._command_ms
            )
            if self.owner_name is not None and slot.ctx:
                _lib.fence().fence_set_owner_name(slot.ctx, self.owner_name.encode())
        return exc

    def _pgconn(self, slot: _Slot):
        """The slot's PostgreSQL connection, made or mended."""
        pq = _lib.libpq()
        if slot.pg and pq.PQstatus(slot.pg) != _lib.CONNECTION_OK:
            pq.PQreset(slot.pg)
        if not slot.pg:
            slot.pg = pq.PQconnectdb(self.pg.encode())
            if not slot.pg:
                raise MemoryError("PQconnectdb")
        if pq.PQstatus(slot.pg) != _lib.CONNECTION_OK:
            message = pq.PQerrorMessage(slot.pg).decode(errors="replace").strip()
            pq.PQfinish(slot.pg)
            slot.pg = None
            raise Unreachable("PostgreSQL: %s" % message, ERR_PG)
        return slot.pg

    # -- public ---------------------------------------------------------

    def lease(
        self,
        resource: str,
        ttl: Duration = "10s",
        wait: Duration = None,
        *,
        announce: bool = True,
        heartbeat: bool = True,
    ) -> "Lease":
        """A lease on "resource", to take with ``with``, ``async with`` or
        acquire().  "ttl": how long Redis keeps it without renewal (the
        heartbeat renews it every ttl/3).  "wait": how long to queue for it
        while another owner holds it (None or 0: not at all; "inf": without
        limit); NotAcquired when it runs out.  "announce": announce the
        token to the client's PostgreSQL (when it has one) before the block
        runs, so that every older token is refused from then on."""
        return Lease(self, resource, ttl, wait, announce, heartbeat)

    def leases(
        self,
        resources: Iterable[str],
        ttl: Duration = "10s",
        wait: Duration = None,
        *,
        announce: bool = True,
        heartbeat: bool = True,
    ) -> "LeaseSet":
        """A set of leases held together (a transfer between two accounts):
        taken in the bytewise order of their names whatever order
        "resources" gives, all or none, sharing one owner id; "wait" bounds
        the whole set.  Otherwise as lease()."""
        return LeaseSet(self, list(resources), ttl, wait, announce, heartbeat)

    def close(self) -> None:
        """Free the client's connections (leases still held keep theirs)."""
        with self._lock:
            self._closed = True
            slots, self._free = self._free, []
        for slot in slots:
            slot.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<pgfence.Client %s>" % self.redis_url.split("@")[-1]


# The heartbeat's lost callbacks find their Event here by number: ctypes
# keeps one C function alive for all leases, and no Python object's address
# ever reaches C.
_lost_events: Dict[int, threading.Event] = {}
_lost_next = [0]
_lost_lock = threading.Lock()


def _on_lost(_lease, arg):
    event = _lost_events.get(arg or 0)
    if event is not None:
        event.set()


def _on_set_lost(_set, _member, arg):
    _on_lost(None, arg)


_ON_LOST = _lib.LOST_FN(_on_lost)
_ON_SET_LOST = _lib.LEASES_LOST_FN(_on_set_lost)


_H = TypeVar("_H", bound="_Held")


class _Held:
    """What a lease and a set of leases share: taking, announcing, the
    heartbeat, the lost signal, releasing, the context managers."""

    _kind = "lease"

    def __init__(self, client, ttl, wait, announce, heartbeat):
        self._client = client
        self._ttl_ms = duration_ms(ttl, "ttl")
        self._wait_ms = duration_ms(wait, "wait", allow_inf=True)
        self._announce_on = announce and client.pg is not None
        self._heartbeat_on = heartbeat
        self._ptr = None
        self._id = 0
        #: set (from the heartbeat thread) when the lease is lost
        self.lost = threading.Event()

    # hooks, per kind
    def _take(self, ctx):
        raise NotImplementedError

    def _record(self):
        raise NotImplementedError

    # -- taking ---------------------------------------------------------

    def acquire(self: _H) -> _H:
        """Take the lease (waiting as "wait" says), announce its token,
        start its heartbeat.  Returns self; NotAcquired, Unreachable,
        ConfigurationError, StaleToken on failure."""
        slot = self._client._checkout()
        try:
            self._acquire_on(slot)
        finally:
            self._client._checkin(slot)
        return self

    def _acquire_on(self, slot: _Slot) -> None:
        if self._ptr is not None:
            raise FenceError("%s is held already" % self._kind)
        ptr = self._take(slot.ctx)
        if not ptr:
            raise self._client._fail(slot)
        self._ptr = ptr
        self.lost.clear()
        try:
            if self._announce_on:
                if self._c_announce(slot.ctx, ptr, self._client._pgconn(slot)) != 0:
                    raise self._client._fail(slot)
            if self._heartbeat_on:
                with _lost_lock:
                    _lost_next[0] += 1
                    self._id = _lost_next[0]
                    _lost_events[self._id] = self.lost
                if self._c_hb_start(slot.ctx, ptr, self._id) != 0:
                    raise self._client._fail(slot)
        except BaseException:
            self._drop(slot)
            raise
        self._record()

    def _drop(self, slot: _Slot) -> None:
        """Give back what a failed acquire took, whatever else fails."""
        ptr, self._ptr = self._ptr, None
        self._c_release(slot.ctx, ptr)
        self._forget(ptr)

    def _forget(self, ptr) -> None:
        if self._id:
            with _lost_lock:
                _lost_events.pop(self._id, None)
            self._id = 0
        self._c_free(ptr)

    # -- while held -----------------------------------------------------

    @property
    def held(self) -> bool:
        """True from acquire to release, while the lease is not lost."""
        return self._ptr is not None and self.state != LOST

    @property
    def state(self) -> str:
        """"held" (the last renewal worked), "suspect" (Redis unreachable
        since, deadline not passed yet) or "lost"."""
        if self._ptr is None:
            return LOST
        state = _STATES.get(self._c_state(self._ptr), LOST)
        if state == LOST:
            self.lost.set()
        return state

    def check(self) -> None:
        """Raise LeaseLost when the lease is lost (or released); call it
        between units of work, before starting the next one."""
        if self.lost.is_set() or self.state == LOST:
            raise LeaseLost("%s on %s is lost" % (self._kind, self._names()), ERR_LOST)

    def extend(self, ttl: Duration = None) -> None:
        """Renew now, for "ttl" (default: the lease's TTL); the heartbeat
        does this by itself."""
        if self._ptr is None:
            raise LeaseLost("%s on %s is not held" % (self._kind, self._names()), ERR_LOST)
        ms = duration_ms(ttl, "ttl") if ttl is not None else self._ttl_ms
        slot = self._client._checkout()
        try:
            if self._c_extend(slot.ctx, self._ptr, ms) != 0:
                exc = self._client._fail(slot)
                if isinstance(exc, LeaseLost):
                    self.lost.set()
                raise exc
        finally:
            self._client._checkin(slot)

    def release(self) -> None:
        """Stop the heartbeat and give the lease back.  LeaseLost when it
        was no longer ours (then someone else may have written since);
        Unreachable when Redis did not answer (the lease then ends with its
        TTL).  Releasing twice does nothing."""
        if self._ptr is None:
            return
        slot = self._client._checkout()
        ptr, self._ptr = self._ptr, None
        try:
            rc = self._c_release(slot.ctx, ptr)
            if rc != 0:
                exc = self._client._fail(slot)
                if isinstance(exc, LeaseLost):
                    self.lost.set()
                raise exc
        finally:
            self._forget(ptr)
            self._client._checkin(slot)

    # -- with / async with ----------------------------------------------

    def __enter__(self: _H) -> _H:
        return self.acquire()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self._exit(exc_type)

    def _exit(self, exc_type) -> None:
        try:
            self.release()
        except LeaseLost:
            # the block's own exception says more than this one
            if exc_type is None:
                raise
        except Unreachable:
            # Redis is away: the lease ends with its TTL; nothing to undo
            pass

    async def acquire_async(self: _H) -> _H:
        """acquire() for asyncio: the wait runs in a thread of its own, so
        the event loop runs other tasks meanwhile.  Cancelling the task
        cancels the wait (fence_cancel_wait) within about half a second,
        and gives back the lease if it was taken meanwhile."""
        loop = asyncio.get_running_loop()
        slot = self._client._checkout()
        done = loop.create_future()

        def finish(result):
            if not done.done():
                if isinstance(result, BaseException):
                    done.set_exception(result)
                else:
                    done.set_result(result)

        def run():
            try:
                self._acquire_on(slot)
                result = None
            except BaseException as e:  # handed to the awaiting task
                result = e
            loop.call_soon_threadsafe(finish, result)

        threading.Thread(target=run, name="pgfence-acquire", daemon=True).start()
        try:
            await asyncio.shield(done)
        except asyncio.CancelledError:
            _lib.fence().fence_cancel_wait(slot.ctx)
            while not done.done():
                try:
                    await asyncio.shield(done)
                except asyncio.CancelledError:
                    continue
                except BaseException:
                    break
            if not done.cancelled():
                done.exception()  # retrieved: the cancellation wins
            # fence_cancel_wait also stops the next wait on that context
            slot.close()
            if self._ptr is not None:
                await asyncio.shield(asyncio.to_thread(self._exit, Exception))
            raise
        except BaseException:
            self._client._checkin(slot)
            raise
        self._client._checkin(slot)
        return self

    async def release_async(self) -> None:
        """release() in a thread, off the event loop."""
        await asyncio.to_thread(self.release)

    async def __aenter__(self: _H) -> _H:
        return await self.acquire_async()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        await asyncio.to_thread(self._exit, exc_type)

    def __del__(self):
        # an abandoned lease: stop its heartbeat and let it expire
        ptr = getattr(self, "_ptr", None)
        if ptr is not None:
            self._ptr = None
            try:
                self._forget(ptr)
            except Exception:
                pass


class Lease(_Held):
    """A lease on one resource (Client.lease()).  While held: ``token`` (the
    fencing token, to carry into every write), ``owner`` (the owner id),
    ``resource``, ``tokens`` (the value for fence.tokens), ``lost`` (an
    Event the heartbeat sets when the lease is lost), check()."""

    _kind = "lease"

    def __init__(self, client, resource, ttl, wait, announce, heartbeat):
        super().__init__(client, ttl, wait, announce, heartbeat)
        if not isinstance(resource, str):
            raise ConfigurationError("resource must be a str, not %s" % type(resource).__name__, 10)
        self.resource: str = resource
        self._owner: Optional[str] = None
        self._token: Optional[int] = None
        #: how the release of release_acquire() came out (None: given back)
        self.release_error: Optional[FenceError] = None
        self._after: Optional[tuple] = None  # (lease to give back, its rc)

    def _take(self, ctx):
        after, self._after = self._after, None
        if after is None:
            return _lib.fence().fence_acquire_wait(ctx, self.resource.encode(), self._ttl_ms, self._wait_ms)
        old, rc = after
        return _lib.fence().fence_release_acquire(
            ctx, old, self.resource.encode(), self._ttl_ms, self._wait_ms, ctypes.byref(rc)
        )

    def release_acquire(
        self,
        resource: str,
        ttl: Duration = None,
        wait: Duration = None,
        *,
        announce: Optional[bool] = None,
        heartbeat: Optional[bool] = None,
    ) -> "Lease":
        """A worker loop's step: give this lease back and take one on
        "resource" (ttl, wait, announce and heartbeat as Client.lease(),
        this lease's when not given; "wait" None: not at all).  On a
        single Redis node, Sentinel or a Cluster master serving both, the
        release and the first attempt go out in one write: one round trip
        where release() and then acquire() make two; on a quorum, those two
        calls.  The release always runs first.  Returns the new lease, held;
        raises as acquire() does.  The release's outcome whatever the
        acquire's: ``self.release_error`` is None when it was given back, a
        LeaseLost when it had expired or passed to another owner (``lost``
        is set then: someone else may have written since), Unreachable when
        the outcome is unknown."""
        nxt = Lease(
            self._client,
            resource,
            ttl if ttl is not None else self._ttl_ms / 1000.0,
            wait,
            self._announce_on if announce is None else announce,
            self._heartbeat_on if heartbeat is None else heartbeat,
        )
        self.release_error = None
        if self._ptr is None:
            return nxt.acquire()
        rc = ctypes.c_int(0)
        slot = self._client._checkout()
        ptr = self._ptr
        nxt._after = (ptr, rc)
        try:
            nxt._acquire_on(slot)
        except BaseException:
            self._released_by(ptr, rc.value, slot)
            raise
        finally:
            self._client._checkin(slot)
        self._released_by(ptr, rc.value, None)
        return nxt

    def _released_by(self, ptr, rc: int, slot) -> None:
        """After fence_release_acquire: forget "ptr" (its release went out,
        "rc" says how it came out) or, when nothing was sent, give it back
        alone."""
        if self._ptr is not ptr:
            return
        if rc == ERR_ARG and slot is not None:
            # the arguments were refused before anything was sent
            try:
                self.release()
            except FenceError as exc:
                self.release_error = exc
            return
        self._ptr = None
        self._forget(ptr)
        if rc:
            self.release_error = error_for(
                rc, "release of the lease on %s: %s" % (self._names(), _lib.strerror(rc))
            )
            if isinstance(self.release_error, LeaseLost):
                self.lost.set()

    def _c_announce(self, ctx, ptr, pg):
        return _lib.fence().fence_announce(ctx, ptr, pg)

    def _c_hb_start(self, ctx, ptr, ident):
        return _lib.fence().fence_heartbeat_start(ctx, ptr, _ON_LOST, ident)

    def _c_extend(self, ctx, ptr, ms):
        return _lib.fence().fence_extend(ctx, ptr, ms)

    def _c_release(self, ctx, ptr):
        return _lib.fence().fence_release(ctx, ptr)

    def _c_state(self, ptr):
        return _lib.fence().fence_lease_state(ptr)

    def _c_free(self, ptr):
        _lib.fence().fence_lease_free(ptr)

    def _record(self):
        # kept for after the release (logging, the SQL helpers' errors);
        # the token may change only when announce heals it, which ran on
        # the thread that acquired, before this
        lib = _lib.fence()
        self._owner = lib.fence_lease_owner(self._ptr).decode()
        self._token = lib.fence_lease_token(self._ptr)

    def _names(self) -> str:
        return '"%s"' % self.resource

    @property
    def token(self) -> int:
        """The fencing token (None before the lease was taken)."""
        return self._token  # type: ignore[return-value]

    @property
    def owner(self) -> str:
        """The owner id ("NAME/HEX" with an owner name)."""
        return self._owner  # type: ignore[return-value]

    @property
    def ttl(self) -> float:
        """The TTL of the last acquire or renewal, in seconds."""
        if self._ptr is None:
            return self._ttl_ms / 1000.0
        return _lib.fence().fence_lease_ttl(self._ptr) / 1000.0

    @property
    def resources(self) -> List[str]:
        return [self.resource]

    @property
    def token_list(self) -> List[int]:
        return [self.token]

    @property
    def tokens(self) -> str:
        """The fence.tokens value for this lease: RESOURCE=TOKEN/OWNER."""
        self._need()
        return _lib.format_tokens([self.resource], [self.token], [self.owner])

    def _need(self):
        if self._token is None:
            raise FenceError("lease on %s was never acquired" % self._names())

    def __repr__(self) -> str:
        return "<pgfence.Lease %r token=%s %s>" % (self.resource, self._token, self.state if self._ptr else "not held")


class Member:
    """One lease of a LeaseSet: resource, token, owner."""

    __slots__ = ("resource", "token", "owner")

    def __init__(self, resource: str, token: int, owner: str):
        self.resource = resource
        self.token = token
        self.owner = owner

    def __repr__(self) -> str:
        return "<pgfence.Member %r token=%d>" % (self.resource, self.token)


class LeaseSet(_Held):
    """Several leases held together (Client.leases()): all or none, one
    owner id, one heartbeat per member, ``lost`` set when any member is
    lost.  ``members`` lists them in canonical (bytewise) order,
    ``tokens`` is the fence.tokens value naming them all, ``token_of(r)``
    one member's token."""

    _kind = "set of leases"

    def __init__(self, client, resources, ttl, wait, announce, heartbeat):
        super().__init__(client, ttl, wait, announce, heartbeat)
        for r in resources:
            if not isinstance(r, str):
                raise ConfigurationError("resources must be str, not %s" % type(r).__name__, 10)
        self._asked: List[str] = resources
        self.members: List[Member] = []
        self._tokens: Optional[str] = None

    def _take(self, ctx):
        n = len(self._asked)
        names = (ctypes.c_char_p * max(n, 1))(*[r.encode() for r in self._asked])
        return _lib.fence().fence_acquire_many_wait(ctx, names, n, self._ttl_ms, self._wait_ms)

    def _c_announce(self, ctx, ptr, pg):
        return _lib.fence().fence_leases_announce(ctx, ptr, pg)

    def _c_hb_start(self, ctx, ptr, ident):
        return _lib.fence().fence_leases_heartbeat_start(ctx, ptr, _ON_SET_LOST, ident)

    def _c_extend(self, ctx, ptr, ms):
        return _lib.fence().fence_leases_extend(ctx, ptr, ms)

    def _c_release(self, ctx, ptr):
        return _lib.fence().fence_leases_release(ctx, ptr)

    def _c_state(self, ptr):
        return _lib.fence().fence_leases_state(ptr)

    def _c_free(self, ptr):
        _lib.fence().fence_leases_free(ptr)

    def _record(self):
        lib = _lib.fence()
        members = []
        for i in range(lib.fence_leases_count(self._ptr)):
            m = lib.fence_leases_member(self._ptr, i)
            members.append(
                Member(
                    lib.fence_lease_resource(m).decode(),
                    lib.fence_lease_token(m),
                    lib.fence_lease_owner(m).decode(),
                )
            )
        self.members = members
        self._tokens = _lib.take_string(lib.fence_leases_tokens(self._ptr))

    def _names(self) -> str:
        return ", ".join('"%s"' % r for r in self._asked)

    @property
    def resources(self) -> List[str]:
        """The resources, in canonical order once taken."""
        return [m.resource for m in self.members] or list(self._asked)

    @property
    def token_list(self) -> List[int]:
        return [m.token for m in self.members]

    @property
    def owner(self) -> str:
        """The owner id the members share."""
        return self.members[0].owner if self.members else None  # type: ignore[return-value]

    @property
    def tokens(self) -> str:
        """The fence.tokens value naming every member."""
        if self._tokens is None:
            raise FenceError("set of leases on %s was never acquired" % self._names())
        return self._tokens

    def token_of(self, resource: str) -> int:
        """The token of member "resource"."""
        for m in self.members:
            if m.resource == resource:
                return m.token
        raise KeyError(resource)

    def __iter__(self):
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def __repr__(self) -> str:
        return "<pgfence.LeaseSet %s>" % ", ".join("%s=%s" % (m.resource, m.token) for m in self.members)
