// node/test/workers/paused.js RESOURCE TABLE: takes the lease (1 s TTL),
// says its token, waits for a line on stdin, then writes under its token
// and reports what PostgreSQL said, whether its lease's signal was aborted
// (within 3 s of the write) and what its release said.
'use strict';

const readline = require('node:readline');
const pg = require('pg');
const pgfence = require('../..');

async function main() {
  const [r, table] = process.argv.slice(2);
  const client = await pgfence.connect({ pg: '' });
  const lease = await client.acquire(r, { ttl: '1s' });
  const db = new pg.Client();
  await db.connect();
  console.log(`token ${lease.token}`);
  const rl = readline.createInterface({ input: process.stdin });
  await new Promise((resolve) => rl.once('line', resolve));
  rl.close();
  let outcome;
  try {
    await pgfence.pg.transaction(db, lease, (tx) => tx.query(`UPDATE ${table} SET n = n + 1, who = 'paused'`));
    outcome = 'written';
  } catch (e) {
    outcome = `refused ${e.code}${pgfence.isStale(e) ? ' stale' : ''}`;
  }
  const lost = await new Promise((resolve) => {
    if (lease.signal.aborted) return resolve(true);
    lease.signal.addEventListener('abort', () => resolve(true));
    setTimeout(() => resolve(false), 3000);
  });
  let released = 'released';
  try {
    await lease.release();
  } catch (e) {
    released = e instanceof pgfence.LeaseLostError ? 'not-ours' : e.name;
  }
  console.log(`${outcome} ${lost ? 'lost' : 'not-lost'} ${lease.signal.reason ? lease.signal.reason.name : '-'} ${released}`);
  await db.end();
  await client.close();
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
