// node/test/types/use.ts: the declarations (index.d.ts) as a TypeScript
// user meets them, checked by tsc in test/install.test.js; never run.
import * as pgfence from '../..';
import { Client as PgClient, Pool } from 'pg';

async function worker(db: PgClient, pool: Pool): Promise<number> {
  const client: pgfence.Client = await pgfence.connect({ pg: 'dbname=app', ownerName: 'billing-7' });
  const token: number = await client.using('inventory', { ttl: '10s', wait: 5000 }, async (lease, signal) => {
    signal.throwIfAborted();
    await pgfence.pg.transaction(db, lease, (tx) => tx.query('UPDATE inventory SET qty = qty - 1'));
    await pgfence.pg.transaction(pool, lease, async (tx) => tx.query('SELECT 1'));
    return lease.token;
  });
  await client.using(['acct:1', 'acct:2'], { ttl: '10s', wait: '5s' }, async (both, signal) => {
    const tokens: string = both.tokens;
    if (both instanceof pgfence.LeaseSet) for (const m of both) m.token.toFixed();
    await pgfence.pg.setTokens(db, both);
    const n: number = await pgfence.pg.fencedUpdate(db, both, 'UPDATE accounts SET b = b + $1', [1]);
    return signal.aborted ? n : tokens.length;
  });
  // where the calls that do not wait run (docs/node.md, "Where calls run")
  await (await pgfence.connect('redis://127.0.0.1:6379', { inlineBound: '10ms' })).close();
  await (await pgfence.connect({ inline: false, inlineBound: 0 })).close();
  const lease: pgfence.Lease = await client.acquire('x', { signal: AbortSignal.timeout(1000) });
  lease.check();
  const s: pgfence.LeaseState = lease.state;
  await lease.extend('20s');
  const next: pgfence.Lease = await lease.releaseAcquire('y', { wait: '1s' });
  if (lease.releaseError instanceof pgfence.LeaseLostError) lease.check();
  await next.release();
  await lease.release();
  // @ts-expect-error a lease has no renew(): extend() it is
  await lease.renew();
  // @ts-expect-error a TTL is a string with a unit or milliseconds
  await client.acquire('x', { ttl: true });
  try {
    await client.acquire('x');
  } catch (e) {
    if (e instanceof pgfence.NotAcquiredError) return e.fenceErr + s.length;
    if (pgfence.isStale(e)) return 0;
  }
  await client.close();
  return token;
}
export { worker };
