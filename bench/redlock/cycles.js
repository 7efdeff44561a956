// bench/redlock/cycles.js: node-redlock's acquire + release cycles per
// second on a quorum, the peer of bench/fence_cycles on the same servers.
//
//   node cycles.js SECONDS URL...   (redis://host:port, one per node)
//
// Prints one line as fence_cycles does: cycles_per_s=N acquire_p50_us=N
// acquire_p99_us=N.  One lock at a time on one key, no retries: the same
// work as a fence acquire + release, without a fencing token.
'use strict';
const Redis = require('ioredis');
const Redlock = require('redlock').default;

async function main() {
  const [secs, ...urls] = process.argv.slice(2);
  const clients = urls.map((u) => new Redis(u, { enableAutoPipelining: false }));
  await Promise.all(clients.map((c) => c.ping()));
  const redlock = new Redlock(clients, { retryCount: 0, driftFactor: 0.01 });
  const lat = [];
  const end = process.hrtime.bigint() + BigInt(Math.round(secs * 1e9));
  let cycles = 0;
  const t0 = process.hrtime.bigint();
  while (process.hrtime.bigint() < end) {
    const a = process.hrtime.bigint();
    const lock = await redlock.acquire(['bench:redlock'], 10000);
    lat.push(Number(process.hrtime.bigint() - a) / 1000);
    await lock.release();
    cycles++;
  }
  const took = Number(process.hrtime.bigint() - t0) / 1e9;
  lat.sort((x, y) => x - y);
  const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))].toFixed(1);
  console.log(`cycles_per_s=${(cycles / took).toFixed(1)} acquire_p50_us=${q(0.5)} acquire_p99_us=${q(0.99)}`);
  await Promise.all(clients.map((c) => c.quit()));
}
main().catch((e) => { console.error('redlock bench:', e.message); process.exit(1); });
