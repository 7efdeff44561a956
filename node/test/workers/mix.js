// node/test/workers/mix.js RESOURCE N: Node's turn in the mixed test, N
// times: take the lease, read the counter, write it back one higher, log
// the token (the tables of python/tests/c_worker.c).
'use strict';

const pg = require('pg');
const pgfence = require('../..');

async function main() {
  const [r, n] = process.argv.slice(2);
  const client = await pgfence.connect({ pg: '' });
  const db = new pg.Client();
  await db.connect();
  for (let i = 0; i < Number(n); i++) {
    await client.using(r, { ttl: '5s', wait: '60s' }, (lease) =>
      pgfence.pg.transaction(db, lease, async (tx) => {
        const v = (await tx.query('SELECT n FROM mix_counter')).rows[0].n;
        await tx.query('UPDATE mix_counter SET n = $1', [v + 1]);
        await tx.query("INSERT INTO mix_log (who, token) VALUES ('node', $1)", [lease.token]);
      })
    );
  }
  await db.end();
  await client.close();
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
