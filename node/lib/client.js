// pgfence/lib/client.js: a client, its leases and its sets of leases.
//
// A Client holds the Redis URL (and, optionally, a PostgreSQL conninfo to
// announce tokens to) and a small pool of libfence contexts.  A fence_ctx
// is not thread-safe: each call that talks to Redis or PostgreSQL takes a
// context from the pool for its duration, and two calls in flight never
// share one.  Where a call runs (see Client._quick): one that does not
// wait for a busy lease (an acquire without "wait", extend, release,
// releaseAcquire without "wait") runs on the main thread, bounded: if
// Redis has not answered within the inline bound (a few ms), libfence
// leaves the request in flight and the same call, made again on one of
// koffi's worker threads, reads the answer (no second send).  Everything
// else (waits, sets of leases, announcing, the heartbeat) runs on a worker
// thread, so the event loop goes on while libfence waits.
//
// A Lease (one resource) or a LeaseSet (several, the transfer case) is
// taken by client.acquire() or client.using(): libfence takes it (queueing
// in Redis while another owner holds it, for at most "wait"), announces
// its token to PostgreSQL, and starts its heartbeat thread, which renews it
// every ttl/3 and calls back when it cannot: the lease's AbortSignal is
// then aborted.  release() (or leaving using()'s function) gives it back.
'use strict';

const native = require('./native');
const {
  ERR,
  FenceError,
  ConfigRefusedError,
  LeaseLostError,
  UnreachableError,
  errorFor,
} = require('./errors');

const DEFAULT_URL = 'redis://127.0.0.1:6379';
const POOL_MAX = 16;
// the longest a call may hold up the event loop waiting for Redis, by
// default: a local Redis answers in well under 1 ms; a busy machine may
// take a few (docs/node.md, "Where calls run")
const DEFAULT_INLINE_BOUND_MS = 5;

// fence.h's lease states, by name
const STATES = { 0: 'held', 1: 'suspect', 2: 'lost' };

// durationMs(value, what, allowInf): milliseconds of a duration: a string
// with a unit as the fence command takes it ("250ms", "10s", "2m", "1h";
// "inf" for a wait) or a number of milliseconds (as setTimeout and
// node-redlock take them).  null and undefined are 0.
function durationMs(value, what, allowInf = false) {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'string') {
    const text = value.trim();
    if (allowInf && text === 'inf') return native.MAX_TTL_MS;
    if (/^[0-9]+$/.test(text)) {
      throw new ConfigRefusedError(
        `invalid ${what} "${value}": a duration needs a unit (ms, s, m or h), or pass a number of milliseconds`,
        ERR.ARG
      );
    }
    const ms = [0];
    const errbuf = Buffer.alloc(native.ERRSTR_LEN);
    if (native.fence().fn.fence_parse_duration(text, ms, errbuf, errbuf.length) !== 0) {
      const msg = errbuf.subarray(0, errbuf.indexOf(0)).toString();
      throw new ConfigRefusedError(`invalid ${what}: ${msg}`, ERR.ARG);
    }
    return Number(ms[0]);
  }
  if (typeof value === 'number') {
    if (allowInf && value === Infinity) return native.MAX_TTL_MS;
    if (!Number.isFinite(value) || value < 0) throw new ConfigRefusedError(`invalid ${what}: ${value}`, ERR.ARG);
    return Math.round(value);
  }
  throw new ConfigRefusedError(`invalid ${what}: ${String(value)}`, ERR.ARG);
}

// One libfence context, and the PostgreSQL connection announces use on it;
// used by one call at a time.
class Slot {
  constructor(ctx) {
    this.ctx = ctx;
    this.pg = null;
    this.bounded = false; // fence_set_reply_bound took the client's bound
  }

  close() {
    if (this.pg) {
      native.libpq().fn.PQfinish(this.pg);
      this.pg = null;
    }
    if (this.ctx) {
      native.fence().fn.fence_free(this.ctx);
      this.ctx = null;
    }
  }
}

// The lost signal.  libfence's heartbeat thread marks a lease lost (and
// fence_lease_state also says "lost" once the local deadline passed); a
// timer of the lease reads that state every POLL_MS (less for short TTLs)
// and aborts the lease's AbortSignal.  libfence's lost callback is not
// used: koffi runs a JS callback that a foreign thread calls by queueing it
// to the main thread, and a heartbeat that called it while Node was
// exiting crashed the process.  The timer does not keep the process
// alive: a process that ends holding a lease leaves it to expire.
const POLL_MS = 100;

function pollMs(ttlMs) {
  return Math.max(5, Math.min(POLL_MS, Math.floor(ttlMs / 10)));
}

// wantsSignal(fn): whether using()'s function can receive its second
// argument, the lease's signal.  Making an AbortSignal costs Node.js (20)
// about as much CPU as the rest of a cycle's JavaScript (bench/results.md,
// scenario 18), so a function that surely cannot see it, one whose source
// declares at most one plain parameter and, unless it is an arrow
// function, never reads "arguments", is called without it (lease.signal
// still makes it on demand).  Anything else gets it: default values,
// destructuring, rest parameters, bound and native functions.  Decided
// once per function.
const SIGNAL_FREE = [
  /^(?:async\s*)?(?:\(\s*(?:[A-Za-z_$][\w$]*)?\s*\)|[A-Za-z_$][\w$]*)\s*=>/,
  /^(?:async\s+)?function\s*\*?\s*(?:[A-Za-z_$][\w$]*)?\s*\(\s*(?:[A-Za-z_$][\w$]*)?\s*\)\s*\{/,
];
const signalWanted = new WeakMap();

function wantsSignal(fn) {
  let wanted = signalWanted.get(fn);
  if (wanted === undefined) {
    let source = '';
    try {
      source = Function.prototype.toString.call(fn);
    } catch (e) {
      // not a function whose source can be read: give it the signal
    }
    if (fn.length >= 2 || !source || source.includes('[native code]')) wanted = true;
    else if (SIGNAL_FREE[0].test(source)) wanted = false;
    else wanted = !(SIGNAL_FREE[1].test(source) && !/\barguments\b/.test(source));
    signalWanted.set(fn, wanted);
  }
  return wanted;
}

// the "failed" tests of _quick: a NULL lease, a status other than FENCE_OK
const isNull = (result) => !result;
const isNotOk = (result) => result !== 0;

function abortError(signal) {
  if (signal.reason !== undefined) return signal.reason;
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}

class Client {
  // Use connect() (below): it makes the first connection off the event loop.
  constructor(redisUrl, options = {}) {
    this.redisUrl = redisUrl || process.env.FENCE_REDIS_URL || DEFAULT_URL;
    this.pg = options.pg === undefined ? null : options.pg;
    this.ownerName = options.ownerName === undefined ? null : options.ownerName;
    this._connectMs = durationMs(options.connectTimeout === undefined ? 5000 : options.connectTimeout, 'connect timeout');
    this._commandMs = durationMs(options.commandTimeout === undefined ? 5000 : options.commandTimeout, 'command timeout');
    // where the calls that do not wait run: "bounded" (the default: on the
    // main thread for at most the inline bound, then on a worker thread),
    // "inline" (inline: true: on the main thread, however long) or
    // "worker" (inline: false, or a bound of 0: always on a worker thread)
    this._boundMs = durationMs(
      options.inlineBound === undefined ? DEFAULT_INLINE_BOUND_MS : options.inlineBound,
      'inline bound'
    );
    if (options.inline !== undefined && typeof options.inline !== 'boolean') {
      throw new ConfigRefusedError(`invalid inline: ${String(options.inline)} (true or false)`, ERR.ARG);
    }
    if (options.inline === true) this._mode = 'inline';
    else if (options.inline === false || this._boundMs === 0) this._mode = 'worker';
    else this._mode = 'bounded';
    this._free = [];
    this._closed = false;
  }

  // -- the pool of contexts ----------------------------------------------

  async _newSlot() {
    const lib = native.fence();
    const ctx = await lib.async.fence_connect_timeout(this.redisUrl, this._connectMs, this._commandMs);
    if (!ctx) throw new FenceError('fence_connect: out of memory', ERR.OOM);
    const slot = new Slot(ctx);
    let [code, message] = native.ctxError(ctx);
    if (code === 0 && this.ownerName !== null) {
      if (lib.fn.fence_set_owner_name(ctx, this.ownerName) !== 0) [code, message] = native.ctxError(ctx);
    }
    if (code) {
      slot.close();
      throw errorFor(code, message);
    }
    // a quorum refuses the bound (its rounds are not covered), as does a
    // libfence without it: those slots serve every call from a worker thread
    if (this._mode === 'bounded' && lib.bounds) slot.bounded = lib.fn.fence_set_reply_bound(ctx, this._boundMs) === 0;
    return slot;
  }

  // _waitCall(name, waitMs, ...args): an acquire of a set: one that may
  // wait always runs on a worker thread, one that does not runs inline
  // when the client is
  _waitCall(name, waitMs, ...args) {
    const lib = native.fence();
    return this._mode === 'inline' && waitMs === 0 ? lib.fn[name](...args) : lib.async[name](...args);
  }

  // _quick(slot, name, failed, ...args): libfence's "name", one of the
  // one-lease calls that do not wait, on "slot"'s context: on this thread
  // for at most the inline bound, where it is cheapest (a hand-off to a
  // worker thread and back costs about as much as a round trip to a local
  // Redis: bench/results.md, scenario 18).  When Redis has not answered by
  // then, libfence cuts the call short with its request still in flight
  // (fence_call_cut); the same call, made again on a worker thread with no
  // bound, reads that answer: one send, one answer, a lease's deadline
  // counted from before the send, as if the call had never been cut.
  // "failed(result)" says whether the call failed (only then can it have
  // been cut).  A value, or a promise when the call went off the loop.
  _quick(slot, name, failed, ...args) {
    const lib = native.fence();
    if (this._mode === 'inline') return lib.fn[name](...args);
    if (!slot.bounded) return lib.async[name](...args);
    const result = lib.fn[name](...args);
    if (!failed(result) || !lib.fn.fence_call_cut(slot.ctx)) return result;
    return this._finish(slot, name, args);
  }

  async _finish(slot, name, args) {
    const lib = native.fence();
    // no bound for the call made again: it must wait for its answer
    lib.fn.fence_set_reply_bound(slot.ctx, 0);
    try {
      return await lib.async[name](...args);
    } finally {
      // (leaves the context's error, if any, for _fail)
      if (slot.ctx) lib.fn.fence_set_reply_bound(slot.ctx, this._boundMs);
    }
  }

  // a slot from the pool (a promise only when a new one must connect)
  _checkout() {
    if (this._closed) return Promise.reject(new FenceError('client is closed'));
    return this._free.pop() || this._newSlot();
  }

  // _call(name, ...args): libfence's "name" on one of koffi's worker
  // threads (a promise), or on this thread when the client is inline (an
  // inline client blocks the event loop for every round trip, up to the
  // command timeout when Redis stalls)
  _call(name, ...args) {
    const lib = native.fence();
    return this._mode === 'inline' ? lib.fn[name](...args) : lib.async[name](...args);
  }

  _checkin(slot) {
    if (!slot.ctx) return;
    if (!this._closed && this._free.length < POOL_MAX) this._free.push(slot);
    else slot.close();
  }

  // _fail(slot): the error for the last failure on "slot"'s context.  A
  // context whose connection broke is closed (the next call makes a new one).
  _fail(slot) {
    const [code, message] = native.ctxError(slot.ctx);
    let hint = null;
    if (code === ERR.PG) hint = native.fence().fn.fence_pg_hint(slot.ctx);
    const err = errorFor(code, message, hint);
    if (code === ERR.IO || code === ERR.PROTOCOL) slot.close();
    return err;
  }

  // _pgconn(slot): the slot's PostgreSQL connection, made or mended.
  async _pgconn(slot) {
    const pq = native.libpq();
    if (slot.pg && pq.fn.PQstatus(slot.pg) !== native.CONNECTION_OK) await pq.async.PQreset(slot.pg);
    if (!slot.pg) {
      slot.pg = await pq.async.PQconnectdb(this.pg);
      if (!slot.pg) throw new FenceError('PQconnectdb: out of memory', ERR.OOM);
    }
    if (pq.fn.PQstatus(slot.pg) !== native.CONNECTION_OK) {
      const message = (pq.fn.PQerrorMessage(slot.pg) || '').trim();
      pq.fn.PQfinish(slot.pg);
      slot.pg = null;
      throw new UnreachableError(`PostgreSQL: ${message}`, ERR.PG);
    }
    return slot.pg;
  }

  // -- public --------------------------------------------------------------

  // acquire(resources, options): take a lease on one resource (a string, or
  // an array of one) or a set of leases on several (an array), announce the
  // tokens, start the heartbeat; resolves to the Lease or LeaseSet.
  async acquire(resources, options = {}) {
    let held;
    if (typeof resources === 'string') held = new Lease(this, resources, options);
    else if (Array.isArray(resources) && resources.length === 1) held = new Lease(this, resources[0], options);
    else if (Array.isArray(resources)) held = new LeaseSet(this, resources, options);
    else throw new ConfigRefusedError('resources must be a string or an array of strings', ERR.ARG);
    await held._acquire(options.signal);
    return held;
  }

  // using(resources, options, fn): acquire, run "await fn(lease, signal)",
  // release, and resolve to what fn returned.  "signal" aborts when the
  // lease is lost (its reason a LeaseLostError): stop writing then.
  async using(resources, options, fn) {
    if (typeof options === 'function') {
      fn = options;
      options = {};
    }
    const lease = await this.acquire(resources, options);
    let result;
    try {
      result = await (wantsSignal(fn) ? fn(lease, lease.signal) : fn(lease));
    } catch (e) {
      await lease._exit(true);
      throw e;
    }
    await lease._exit(false);
    return result;
  }

  // close(): free the client's connections (leases still held keep theirs).
  async close() {
    this._closed = true;
    const slots = this._free;
    this._free = [];
    for (const slot of slots) slot.close();
  }
}

// connect(redisUrl, options): a Client, connected to Redis once (off the
// event loop) so that a wrong URL or a server that is down shows at once.
async function connect(redisUrl, options) {
  if (typeof redisUrl === 'object' && redisUrl !== null) {
    options = redisUrl;
    redisUrl = options.redisUrl;
  }
  const client = new Client(redisUrl, options || {});
  client._checkin(await client._newSlot());
  return client;
}

// What a lease and a set of leases share: taking, announcing, the
// heartbeat, the lost signal, releasing.
class Held {
  constructor(client, options, kind) {
    this._client = client;
    this._kind = kind;
    this._ttlMs = durationMs(options.ttl === undefined ? '10s' : options.ttl, 'ttl');
    this._waitMs = durationMs(options.wait, 'wait', true);
    this._announceOn = options.announce !== false && client.pg !== null;
    this._heartbeatOn = options.heartbeat !== false;
    this._ptr = null;
    this._timer = null;
    // the signal is made on first use (see wantsSignal): an AbortSignal
    // costs more than the rest of the lease's JavaScript together
    this._controller = null;
    this._lostError = null;
  }

  // the AbortSignal aborted (reason: a LeaseLostError) when the lease is lost
  get signal() {
    if (this._controller === null) {
      this._controller = new AbortController();
      if (this._lostError !== null) this._controller.abort(this._lostError);
    }
    return this._controller.signal;
  }

  get lost() {
    return this._lostError !== null;
  }

  _markLost() {
    if (this._lostError !== null) return;
    this._lostError = new LeaseLostError(`${this._kind} on ${this._names()} is lost`, ERR.LOST);
    if (this._controller !== null) this._controller.abort(this._lostError);
  }

  async _acquire(signal) {
    if (this._ptr !== null) throw new FenceError(`${this._kind} is held already`);
    if (signal && signal.aborted) throw abortError(signal);
    const client = this._client;
    const slot = await client._checkout();
    let cancelled = false;
    const onAbort = () => {
      // fence_cancel_wait is safe from any thread; it also stops the next
      // wait on that context, which is therefore not reused
      cancelled = true;
      if (slot.ctx) native.fence().fn.fence_cancel_wait(slot.ctx);
    };
    if (signal) signal.addEventListener('abort', onAbort, { once: true });
    try {
      const ptr = await this._take(slot);
      if (!ptr) throw client._fail(slot);
      this._ptr = ptr;
      try {
        if (cancelled) throw abortError(signal);
        if (this._announceOn) {
          const pg = await client._pgconn(slot);
          if ((await this._cAnnounce(slot.ctx, ptr, pg)) !== 0) throw client._fail(slot);
        }
        if (this._heartbeatOn) {
          if ((await this._cHeartbeatStart(slot.ctx, ptr)) !== 0) throw client._fail(slot);
          this._timer = setInterval(() => this.state, pollMs(this._ttlMs));
          this._timer.unref();
        }
      } catch (e) {
        await this._drop(slot);
        throw e;
      }
      this._record();
    } catch (e) {
      // a cancelled wait fails as libfence's timeout would: say why instead
      throw cancelled ? abortError(signal) : e;
    } finally {
      if (signal) signal.removeEventListener('abort', onAbort);
      if (cancelled) slot.close();
      else client._checkin(slot);
    }
  }

  // _drop(slot): give back what a failed acquire took, whatever else fails.
  async _drop(slot) {
    const ptr = this._ptr;
    this._ptr = null;
    if (slot.ctx) await this._cRelease(slot, ptr);
    this._forget(ptr);
  }

  _forget(ptr) {
    if (this._timer) {
      clearInterval(this._timer);
      this._timer = null;
    }
    // after a release the heartbeat is stopped: freeing does not wait
    this._cFree(ptr);
  }

  // true from acquire to release, while the lease is not lost
  get held() {
    return this._ptr !== null && this.state !== 'lost';
  }

  // "held" (the last renewal worked), "suspect" (Redis unreachable since,
  // deadline not passed yet) or "lost"
  get state() {
    if (this._ptr === null) return 'lost';
    const state = STATES[this._cState(this._ptr)] || 'lost';
    if (state === 'lost') this._markLost();
    return state;
  }

  // check(): throw LeaseLostError when the lease is lost (or released);
  // call it between units of work.
  check() {
    if (this.lost || this.state === 'lost') {
      throw new LeaseLostError(`${this._kind} on ${this._names()} is lost`, ERR.LOST);
    }
  }

  // extend(ttl): renew now, for "ttl" (default: the lease's TTL); the
  // heartbeat does this by itself.
  async extend(ttl) {
    if (this._ptr === null) throw new LeaseLostError(`${this._kind} on ${this._names()} is not held`, ERR.LOST);
    const ms = ttl === undefined || ttl === null ? this._ttlMs : durationMs(ttl, 'ttl');
    const client = this._client;
    const slot = await client._checkout();
    try {
      if ((await this._cExtend(slot, this._ptr, ms)) !== 0) {
        const err = client._fail(slot);
        if (err instanceof LeaseLostError) this._markLost();
        throw err;
      }
    } finally {
      client._checkin(slot);
    }
  }

  // release(): stop the heartbeat and give the lease back.  LeaseLostError
  // when it was no longer ours (someone else may have written since);
  // UnreachableError when Redis did not answer (it then ends with its
  // TTL).  Releasing twice does nothing.
  async release() {
    if (this._ptr === null) return;
    const client = this._client;
    const ptr = this._ptr;
    this._ptr = null;
    let slot = null;
    try {
      slot = await client._checkout();
      if ((await this._cRelease(slot, ptr)) !== 0) {
        const err = client._fail(slot);
        if (err instanceof LeaseLostError) this._markLost();
        throw err;
      }
    } finally {
      if (slot === null) await this._cHeartbeatStop(ptr); // never ran the release
      this._forget(ptr);
      if (slot) client._checkin(slot);
    }
  }

  // _exit(failed): release on leaving using(); a lost lease is reported
  // unless the function's own error says more, an unreachable Redis is not
  // (the lease ends with its TTL; nothing to undo).
  async _exit(failed) {
    try {
      await this.release();
    } catch (e) {
      if (e instanceof LeaseLostError && !failed) throw e;
      if (!(e instanceof LeaseLostError) && !(e instanceof UnreachableError)) throw e;
    }
  }
}

class Lease extends Held {
  constructor(client, resource, options) {
    super(client, options, 'lease');
    if (typeof resource !== 'string') {
      throw new ConfigRefusedError(`resource must be a string, not ${typeof resource}`, ERR.ARG);
    }
    this.resource = resource;
    this.owner = null;
    this.token = null;
    // how the release of releaseAcquire() came out (null: given back)
    this.releaseError = null;
    this._after = null; // { ptr, rc, sent } while releaseAcquire takes this one
  }

  _take(slot) {
    const after = this._after;
    const client = this._client;
    const lib = native.fence();
    if (after === null) {
      if (this._waitMs !== 0) return lib.async.fence_acquire_wait(slot.ctx, this.resource, this._ttlMs, this._waitMs);
      return client._quick(slot, 'fence_acquire_wait', isNull, slot.ctx, this.resource, this._ttlMs, 0);
    }
    // releaseAcquire: libfence gives "after.ptr" back in the same write
    this._after = null;
    after.sent = true;
    if (this._waitMs !== 0) {
      return lib.async.fence_release_acquire(slot.ctx, after.ptr, this.resource, this._ttlMs, this._waitMs, after.rc);
    }
    return client._quick(slot, 'fence_release_acquire', isNull, slot.ctx, after.ptr, this.resource, this._ttlMs, 0, after.rc);
  }

  // releaseAcquire(resource, options): a worker loop's step: give this
  // lease back and take one on "resource" (options as client.acquire's,
  // this lease's ttl, announce and heartbeat where not given; no wait
  // unless asked).  On a single Redis node, Sentinel or a Cluster master
  // serving both resources the release and the first attempt go out in one
  // write (fence_release_acquire): one round trip where release() and
  // acquire() make two; on a quorum, those two calls.  The release runs
  // first.  Resolves to the new lease, held, or rejects as acquire() does;
  // the release's outcome, whatever the acquire's, is in releaseError:
  // null (given back), a LeaseLostError (it had expired or passed to
  // another owner: the signal is aborted, someone else may have written
  // since) or an UnreachableError (the outcome is unknown).
  async releaseAcquire(resource, options = {}) {
    const next = new Lease(this._client, resource, {
      ttl: options.ttl === undefined ? this._ttlMs : options.ttl,
      wait: options.wait,
      announce: options.announce === undefined ? this._announceOn : options.announce,
      heartbeat: options.heartbeat === undefined ? this._heartbeatOn : options.heartbeat,
    });
    this.releaseError = null;
    if (this._ptr === null) {
      await next._acquire(options.signal);
      return next;
    }
    // not this lease's any more while it is given back: a release() or
    // the lost timer meanwhile must not touch it
    const after = { ptr: this._ptr, rc: [0], sent: false };
    this._ptr = null;
    next._after = after;
    try {
      await next._acquire(options.signal);
    } finally {
      await this._releasedBy(after);
    }
    return next;
  }

  // _releasedBy(after): once releaseAcquire's acquire is over, forget the
  // lease it gave back, and keep how that went; when nothing was sent (no
  // connection, or arguments libfence refused first), give it back alone.
  async _releasedBy(after) {
    const rc = after.rc[0];
    if (!after.sent || rc === ERR.ARG) {
      this._ptr = after.ptr;
      try {
        await this.release();
      } catch (e) {
        this.releaseError = e;
      }
      return;
    }
    this._forget(after.ptr);
    if (rc !== 0) {
      this.releaseError = errorFor(rc, `release of the lease on ${this._names()}: ${native.strerror(rc)}`);
      if (this.releaseError instanceof LeaseLostError) this._markLost();
    }
  }
  _cAnnounce(ctx, ptr, pg) {
    return this._client._call('fence_announce', ctx, ptr, pg);
  }
  _cHeartbeatStart(ctx, ptr) {
    return this._client._call('fence_heartbeat_start', ctx, ptr, null, 0);
  }
  _cHeartbeatStop(ptr) {
    return this._client._call('fence_heartbeat_stop', ptr);
  }
  _cExtend(slot, ptr, ms) {
    return this._client._quick(slot, 'fence_extend', isNotOk, slot.ctx, ptr, ms);
  }
  _cRelease(slot, ptr) {
    return this._client._quick(slot, 'fence_release', isNotOk, slot.ctx, ptr);
  }
  _cState(ptr) {
    return native.fence().fn.fence_lease_state(ptr);
  }
  _cFree(ptr) {
    native.fence().fn.fence_lease_free(ptr);
  }

  _record() {
    // kept for after the release (logs, the SQL helpers' errors); the token
    // changes only when announce heals it, which has run by now
    const { fn } = native.fence();
    this.owner = fn.fence_lease_owner(this._ptr);
    this.token = Number(fn.fence_lease_token(this._ptr));
  }

  _names() {
    return `"${this.resource}"`;
  }

  // the TTL of the last acquire or renewal, in milliseconds
  get ttl() {
    if (this._ptr === null) return this._ttlMs;
    return Number(native.fence().fn.fence_lease_ttl(this._ptr));
  }

  get resources() {
    return [this.resource];
  }

  get tokenList() {
    return [this.token];
  }

  // the fence.tokens value for this lease: RESOURCE=TOKEN/OWNER
  get tokens() {
    if (this.token === null) throw new FenceError(`lease on ${this._names()} was never acquired`);
    return native.formatTokens([this.resource], [this.token], [this.owner]);
  }
}

class LeaseSet extends Held {
  constructor(client, resources, options) {
    super(client, options, 'set of leases');
    for (const r of resources) {
      if (typeof r !== 'string') throw new ConfigRefusedError(`resources must be strings, not ${typeof r}`, ERR.ARG);
    }
    this._asked = resources.slice();
    // [{resource, token, owner}] in canonical (bytewise) order, once taken
    this.members = [];
    this._tokens = null;
  }

  _take(slot) {
    return this._client._waitCall('fence_acquire_many_wait', this._waitMs, slot.ctx, this._asked, this._asked.length, this._ttlMs, this._waitMs);
  }
  _cAnnounce(ctx, ptr, pg) {
    return this._client._call('fence_leases_announce', ctx, ptr, pg);
  }
  _cHeartbeatStart(ctx, ptr) {
    return this._client._call('fence_leases_heartbeat_start', ctx, ptr, null, 0);
  }
  _cHeartbeatStop(ptr) {
    return this._client._call('fence_leases_heartbeat_stop', ptr);
  }
  _cExtend(slot, ptr, ms) {
    return this._client._call('fence_leases_extend', slot.ctx, ptr, ms);
  }
  _cRelease(slot, ptr) {
    return this._client._call('fence_leases_release', slot.ctx, ptr);
  }
  _cState(ptr) {
    return native.fence().fn.fence_leases_state(ptr);
  }
  _cFree(ptr) {
    native.fence().fn.fence_leases_free(ptr);
  }

  _record() {
    const { fn } = native.fence();
    const n = Number(fn.fence_leases_count(this._ptr));
    const members = [];
    for (let i = 0; i < n; i++) {
      const m = fn.fence_leases_member(this._ptr, i);
      members.push({
        resource: fn.fence_lease_resource(m),
        token: Number(fn.fence_lease_token(m)),
        owner: fn.fence_lease_owner(m),
      });
    }
    this.members = members;
    const tokens = fn.fence_leases_tokens(this._ptr);
    if (tokens === null) throw new FenceError('fence_leases_tokens: out of memory', ERR.OOM);
    this._tokens = tokens;
  }

  _names() {
    return this._asked.map((r) => `"${r}"`).join(', ');
  }

  // the resources, in canonical order once taken
  get resources() {
    return this.members.length ? this.members.map((m) => m.resource) : this._asked.slice();
  }

  get tokenList() {
    return this.members.map((m) => m.token);
  }

  // the owner id the members share
  get owner() {
    return this.members.length ? this.members[0].owner : null;
  }

  // the fence.tokens value naming every member
  get tokens() {
    if (this._tokens === null) throw new FenceError(`set of leases on ${this._names()} was never acquired`);
    return this._tokens;
  }

  // tokenOf(resource): the token of member "resource"
  tokenOf(resource) {
    const m = this.members.find((x) => x.resource === resource);
    if (!m) throw new RangeError(`no member "${resource}"`);
    return m.token;
  }

  [Symbol.iterator]() {
    return this.members[Symbol.iterator]();
  }
}

module.exports = { Client, Lease, LeaseSet, connect, durationMs, DEFAULT_URL };
