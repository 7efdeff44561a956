// bench/node_cycles.js: scenario 18, acquire + release cycles per second
// from Node.js, on one connection and one resource, for as many seconds as
// asked.
//
//   node node_cycles.js pgfence|pgfence-inline|pgfence-worker|pgfence-heartbeat|redlock SECONDS
//   node node_cycles.js koffi-sync|koffi-async|koffi-worker SECONDS
//
// pgfence: `await client.using(r, { ttl: 10000, heartbeat: false }, ...)`,
// the same two round trips as bench/fence_cycles (one EVALSHA each way),
// with the default client: each call on the main thread, bounded by the
// inline bound (5 ms; past it the call would finish on a worker thread);
// pgfence-inline: the same with the client's inline option (each call on
// the main thread, unbounded, as the C program and Python make them);
// pgfence-worker: with inline: false (each call on one of koffi's worker
// threads, the default client before the bound); pgfence-heartbeat: the
// default,
// which also starts and stops the renewal thread, on a Redis connection of
// its own; redlock: node-redlock's `using` on a single node (ioredis; SET
// NX PX through a Lua script, then a Lua compare-and-DEL; its automatic
// extension arms a timer and clears it).  Prints
// cycles_per_s=N cycles=N cpu_us_per_cycle=N.  Redis: $FENCE_REDIS_URL.
//
// The koffi variants call libfence directly, without the package, to price
// the hand-off to another thread alone: koffi-sync makes fence_acquire_wait
// (no wait), fence_release and fence_lease_free synchronously on the main
// thread; koffi-async each of the first two through koffi's asynchronous
// call (a libuv pool thread and back); koffi-worker through one long-lived
// worker thread (node:worker_threads) that makes them synchronously,
// handed each request through a SharedArrayBuffer with Atomics.notify and
// each answer back with Atomics.waitAsync (the design that might have
// replaced koffi's asynchronous calls: it costs as much; bench/results.md).  pgfence, node-redlock and
// ioredis from node/ of this tree (npm ci there), with PGFENCE_LIBFENCE
// naming the libfence built here.
'use strict';

const path = require('node:path');
const { Worker, isMainThread, workerData } = require('node:worker_threads');

const NODE_DIR = path.join(__dirname, '..', 'node');
const RESOURCE = 'bench:node';

// libfence's functions for the koffi variants, declared as node/lib/native.js does
function libfence() {
  const koffi = require(path.join(NODE_DIR, 'node_modules', 'koffi'));
  const lib = koffi.load(process.env.PGFENCE_LIBFENCE || 'libfence.so.2');
  return {
    connect: lib.func('void *fence_connect_timeout(const char *url, long connect_ms, long command_ms)'),
    acquire: lib.func('void *fence_acquire_wait(void *ctx, const char *resource, int64_t ttl_ms, int64_t wait_ms)'),
    release: lib.func('int fence_release(void *ctx, void *lease)'),
    leaseFree: lib.func('void fence_lease_free(void *lease)'),
  };
}

// koffi-worker's thread: word 0 the request (1 acquire, 2 release, 3 stop),
// word 1 the answer (0 or 1), word 2 set to 1 when it is there
function workerMain() {
  const f = libfence();
  const ctx = f.connect(workerData.url, 5000, 5000);
  const box = new Int32Array(workerData.sab);
  let lease = null;
  for (;;) {
    Atomics.wait(box, 0, 0);
    const op = Atomics.exchange(box, 0, 0);
    if (op === 3) return;
    if (op === 1) {
      lease = f.acquire(ctx, RESOURCE, 10000, 0);
      box[1] = lease ? 1 : 0;
    } else {
      box[1] = f.release(ctx, lease) === 0 ? 1 : 0;
      f.leaseFree(lease);
      lease = null;
    }
    Atomics.store(box, 2, 1);
    Atomics.notify(box, 2);
  }
}

function koffiVariant(variant, url) {
  if (variant === 'koffi-worker') {
    const box = new Int32Array(new SharedArrayBuffer(12));
    const worker = new Worker(__filename, { workerData: { url, sab: box.buffer } });
    const call = async (op) => {
      Atomics.store(box, 2, 0);
      Atomics.store(box, 0, op);
      Atomics.notify(box, 0);
      const w = Atomics.waitAsync(box, 2, 0);
      if (w.async) await w.value;
      if (box[1] !== 1) throw new Error(`koffi-worker: ${op === 1 ? 'acquire' : 'release'} failed`);
    };
    return {
      one: async () => {
        await call(1);
        await call(2);
      },
      done: async () => {
        Atomics.store(box, 0, 3);
        Atomics.notify(box, 0);
        await worker.terminate();
      },
    };
  }
  const f = libfence();
  const ctx = f.connect(url, 5000, 5000);
  const check = (ok, what) => {
    if (!ok) throw new Error(`${variant}: ${what} failed`);
  };
  if (variant === 'koffi-sync') {
    return {
      one: async () => {
        const lease = f.acquire(ctx, RESOURCE, 10000, 0);
        check(lease, 'acquire');
        check(f.release(ctx, lease) === 0, 'release');
        f.leaseFree(lease);
      },
      done: async () => {},
    };
  }
  const later = (fn, ...args) =>
    new Promise((resolve, reject) => fn.async(...args, (err, res) => (err ? reject(err) : resolve(res))));
  return {
    one: async () => {
      const lease = await later(f.acquire, ctx, RESOURCE, 10000, 0);
      check(lease, 'acquire');
      check((await later(f.release, ctx, lease)) === 0, 'release');
      f.leaseFree(lease);
    },
    done: async () => {},
  };
}

// cycles(one, seconds): [cycles per second, cycles, CPU microseconds per
// cycle of the whole process (every thread: koffi's, the worker's, V8's)]
async function cycles(one, seconds) {
  let n = 0;
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const end = t0 + BigInt(Math.round(seconds * 1e9));
  for (;;) {
    for (let i = 0; i < 100; i++) await one();
    n += 100;
    const now = process.hrtime.bigint();
    if (now >= end) {
      const cpu = process.cpuUsage(c0);
      return [n / (Number(now - t0) / 1e9), n, (cpu.user + cpu.system) / n];
    }
  }
}

async function main() {
  const [variant, secs] = process.argv.slice(2);
  const url = process.env.FENCE_REDIS_URL;
  let one;
  let done;
  if (variant.startsWith('pgfence')) {
    const pgfence = require(NODE_DIR);
    const inline = { 'pgfence-inline': true, 'pgfence-worker': false }[variant];
    const client = await pgfence.connect(url, inline === undefined ? {} : { inline });
    const opts = { ttl: 10000, heartbeat: variant === 'pgfence-heartbeat' };
    const nothing = () => {};
    one = () => client.using(RESOURCE, opts, nothing);
    done = () => client.close();
  } else if (variant.startsWith('koffi-')) {
    ({ one, done } = koffiVariant(variant, url));
  } else if (variant === 'redlock') {
    const Redis = require(path.join(NODE_DIR, 'node_modules', 'ioredis'));
    const Redlock = require(path.join(NODE_DIR, 'node_modules', 'redlock')).default;
    const redis = new Redis(url, { enableAutoPipelining: false });
    await redis.ping();
    const redlock = new Redlock([redis], { retryCount: 0 });
    const nothing = async () => {};
    one = () => redlock.using(['bench:redlock1'], 10000, nothing);
    done = () => redis.quit();
  } else {
    throw new Error(`unknown variant ${variant}`);
  }
  await one(); // connect, load the scripts
  const [rate, n, cpu] = await cycles(one, Number(secs));
  console.log(`cycles_per_s=${rate.toFixed(0)} cycles=${n} cpu_us_per_cycle=${cpu.toFixed(1)}`);
  await done();
}

if (isMainThread) {
  main().catch((e) => {
    console.error('node_cycles:', e.message);
    process.exit(1);
  });
} else {
  workerMain();
}
