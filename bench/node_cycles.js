// bench/node_cycles.js: scenario 18, acquire + release cycles per second
// from Node.js, on one connection and one resource, for as many seconds as
// asked.
//
//   node node_cycles.js pgfence|pgfence-inline|pgfence-heartbeat|redlock SECONDS
//
// pgfence: `await client.using(r, { ttl: 10000, heartbeat: false }, ...)`,
// the same two round trips as bench/fence_cycles (one EVALSHA each way),
// each on one of koffi's worker threads; pgfence-inline: the same with the
// client's inline option (each call on the main thread, as the C program
// and Python make them); pgfence-heartbeat: the default,
// which also starts and stops the renewal thread, on a Redis connection of
// its own; redlock: node-redlock's `using` on a single node (ioredis; SET
// NX PX through a Lua script, then a Lua compare-and-DEL; its automatic
// extension arms a timer and clears it).  Prints
// cycles_per_s=N.  Redis: $FENCE_REDIS_URL.  pgfence, node-redlock and
// ioredis from node/ of this tree (npm ci there), with PGFENCE_LIBFENCE
// naming the libfence built here.
'use strict';

const path = require('node:path');

const NODE_DIR = path.join(__dirname, '..', 'node');

async function cycles(one, seconds) {
  let n = 0;
  const t0 = process.hrtime.bigint();
  const end = t0 + BigInt(Math.round(seconds * 1e9));
  for (;;) {
    for (let i = 0; i < 100; i++) await one();
    n += 100;
    const now = process.hrtime.bigint();
    if (now >= end) return n / (Number(now - t0) / 1e9);
  }
}

async function main() {
  const [variant, secs] = process.argv.slice(2);
  const url = process.env.FENCE_REDIS_URL;
  let one;
  let done;
  if (variant.startsWith('pgfence')) {
    const pgfence = require(NODE_DIR);
    const client = await pgfence.connect(url, { inline: variant === 'pgfence-inline' });
    const opts = { ttl: 10000, heartbeat: variant === 'pgfence-heartbeat' };
    const nothing = () => {};
    one = () => client.using('bench:node', opts, nothing);
    done = () => client.close();
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
  console.log(`cycles_per_s=${(await cycles(one, Number(secs))).toFixed(0)}`);
  await done();
}

main().catch((e) => {
  console.error('node_cycles:', e.message);
  process.exit(1);
});
