// Type declarations of pgfence for Node.js (docs/node.md).

/// <reference types="node" />

/** A duration: a string with a unit ("250ms", "10s", "2m", "1h"; "inf" for
 * a wait) or a number of milliseconds. */
export type Duration = string | number;

export interface ConnectOptions {
  /** Redis URL(s) as libfence takes them: redis://, rediss://, unix://,
   * redis[s]-sentinel://, redis[s]-cluster://, or several URLs separated
   * by whitespace for a quorum.  Default: $FENCE_REDIS_URL, else
   * redis://127.0.0.1:6379. */
  redisUrl?: string;
  /** A libpq conninfo ("dbname=app", "" for the PG* variables, or a
   * postgresql:// URI) to announce every token to.  Without it tokens are
   * not announced, and the first fenced write announces them instead. */
  pg?: string | null;
  /** Goes in front of the owner ids ("NAME/HEX"). */
  ownerName?: string | null;
  /** Default 5000 ms. */
  connectTimeout?: Duration;
  /** Default 5000 ms. */
  commandTimeout?: Duration;
  /** Where the calls that do not wait run.  Absent (the default): an
   * acquire without "wait", extend, release and releaseAcquire without
   * "wait" of one lease run on the main thread for at most inlineBound,
   * then finish on a worker thread on the request already sent.  true:
   * those calls and the announce on the main thread, however long Redis
   * takes (up to commandTimeout when it stalls).  false: every call on a
   * worker thread.  Waits always run off the event loop. */
  inline?: boolean;
  /** The longest the default client holds the event loop waiting for
   * Redis's answer to one call.  Default "5ms"; 0: as inline: false. */
  inlineBound?: Duration;
}

export interface LeaseOptions {
  /** How long Redis keeps the lease without renewal (the heartbeat renews
   * it every ttl/3).  Default "10s". */
  ttl?: Duration;
  /** How long to queue for a busy lease (0 or absent: not at all; "inf"
   * or Infinity: without limit); NotAcquiredError when it runs out. */
  wait?: Duration | null;
  /** Announce the tokens to the client's PostgreSQL (when it has one)
   * before the lease is handed over.  Default true. */
  announce?: boolean;
  /** Renew in the background and abort the lease's signal when it is
   * lost.  Default true. */
  heartbeat?: boolean;
  /** Cancels the wait (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
}

export type LeaseState = 'held' | 'suspect' | 'lost';

declare abstract class Held {
  /** Aborted, with a LeaseLostError as its reason, when the lease is lost. */
  readonly signal: AbortSignal;
  /** True once the lease was found lost. */
  readonly lost: boolean;
  /** True from acquire to release, while the lease is not lost. */
  readonly held: boolean;
  readonly state: LeaseState;
  /** The shared owner id ("NAME/HEX" with an owner name). */
  readonly owner: string | null;
  readonly resources: string[];
  readonly tokenList: number[];
  /** The fence.tokens value: RESOURCE=TOKEN/OWNER, comma separated. */
  readonly tokens: string;
  /** Throws LeaseLostError when the lease is lost (or released). */
  check(): void;
  /** Renew now (the heartbeat does this by itself). */
  extend(ttl?: Duration): Promise<void>;
  /** Give the lease back: LeaseLostError when it was no longer ours,
   * UnreachableError when Redis did not answer.  Twice does nothing. */
  release(): Promise<void>;
}

/** A lease on one resource. */
export class Lease extends Held {
  private constructor();
  readonly resource: string;
  /** The fencing token: carry it into every write. */
  readonly token: number;
  readonly owner: string;
  /** The TTL of the last acquire or renewal, in milliseconds. */
  readonly ttl: number;
  /** How the release of releaseAcquire() came out: null (given back), a
   * LeaseLostError (it had expired or passed to another owner) or an
   * UnreachableError (the outcome is unknown). */
  readonly releaseError: FenceError | null;
  /** A worker loop's step: give this lease back and take one on
   * "resource" (this lease's ttl, announce and heartbeat where not
   * given), in one round trip where one Redis master holds both.
   * Rejects as acquire() does; the release's outcome is in releaseError. */
  releaseAcquire(resource: string, options?: LeaseOptions): Promise<Lease>;
}

export interface Member {
  resource: string;
  token: number;
  owner: string;
}

/** Several leases held together: all or none, one owner id. */
export class LeaseSet extends Held implements Iterable<Member> {
  private constructor();
  /** In canonical (bytewise) order. */
  readonly members: Member[];
  tokenOf(resource: string): number;
  [Symbol.iterator](): Iterator<Member>;
}

export class Client {
  private constructor();
  readonly redisUrl: string;
  readonly pg: string | null;
  readonly ownerName: string | null;
  /** One resource (a string, or an array of one): a Lease. */
  acquire(resource: string | [string], options?: LeaseOptions): Promise<Lease>;
  /** Several: a LeaseSet. */
  acquire(resources: string[], options?: LeaseOptions): Promise<Lease | LeaseSet>;
  /** Acquire, run fn, release; resolves to what fn returned.  "signal"
   * aborts when the lease is lost: stop writing then. */
  using<T>(
    resource: string | [string],
    options: LeaseOptions,
    fn: (lease: Lease, signal: AbortSignal) => T | Promise<T>
  ): Promise<T>;
  using<T>(
    resources: string[],
    options: LeaseOptions,
    fn: (lease: Lease | LeaseSet, signal: AbortSignal) => T | Promise<T>
  ): Promise<T>;
  using<T>(resource: string, fn: (lease: Lease, signal: AbortSignal) => T | Promise<T>): Promise<T>;
  /** Free the client's connections (leases still held keep theirs). */
  close(): Promise<void>;
}

/** A client, connected once to Redis (a wrong URL or a server that is
 * down shows at once). */
export function connect(redisUrl?: string, options?: ConnectOptions): Promise<Client>;
export function connect(options: ConnectOptions): Promise<Client>;

export function durationMs(value: Duration | null | undefined, what: string, allowInf?: boolean): number;

/** Recognises PostgreSQL's stale-token refusal (SQLSTATE LF001) from
 * node-postgres, StaleTokenError, or an error caused by either. */
export function isStale(err: unknown): boolean;

export const STALE_SQLSTATE: 'LF001';

export class FenceError extends Error {
  /** fence.h's FENCE_ERR_* number (0: found in JS). */
  readonly fenceErr: number;
  /** Its name, e.g. "FENCE_ERR_TIMEOUT". */
  readonly code: string;
  /** What to run when PostgreSQL is not set up for fence. */
  readonly hint: string | null;
  constructor(message: string, fenceErr?: number, hint?: string | null);
}
export class NotAcquiredError extends FenceError {}
export class LeaseLostError extends FenceError {}
export class UnreachableError extends FenceError {}
export class ConfigRefusedError extends FenceError {}
export class LibraryNotFoundError extends ConfigRefusedError {}
export class StaleTokenError extends FenceError {
  readonly sqlstate: 'LF001';
}

/** What the node-postgres helpers need: pg's Client or PoolClient. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}
/** A pg.Pool. */
export interface PoolLike extends Queryable {
  connect(): Promise<Queryable & { release(err?: Error | boolean): void }>;
  readonly totalCount: number;
}

export namespace pg {
  /** fence.tokens for the current transaction (SET LOCAL). */
  function setTokens(conn: Queryable, lease: Lease | LeaseSet): Promise<void>;
  /** BEGIN, fence.tokens, fn, COMMIT (ROLLBACK when it throws). */
  function transaction<T, C extends Queryable = Queryable>(
    connOrPool: C | PoolLike,
    lease: Lease | LeaseSet,
    fn: (conn: C) => T | Promise<T>
  ): Promise<T>;
  /** One statement through fence.fenced_update(_many); rows changed. */
  function fencedUpdate(conn: Queryable, lease: Lease | LeaseSet, sql: string, params?: unknown[]): Promise<number>;
}
