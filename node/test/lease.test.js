// node/test/lease.test.js: a lease and a set of leases from Node.js against
// the real Redis and PostgreSQL, the event loop while one waits, the
// node-postgres helpers, and each error for its cause.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const pgfence = require('..');
const { resource, pgClient, fenceExtension, servers, sleep, run, NODE_DIR } = require('./helpers');

async function withClient(fn, options = { pg: '' }) {
  await fenceExtension();
  const c = await pgfence.connect(options);
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

async function mark(db, r) {
  const res = await db.query('SELECT token, owner FROM fence.fences WHERE resource = $1', [r]);
  return res.rows.length ? [Number(res.rows[0].token), res.rows[0].owner] : null;
}

test('lease_gives_token_owner_and_announces', () =>
  withClient(async (client) => {
    const r = resource('announce');
    const db = await pgClient();
    let first;
    await client.using(r, { ttl: '5s' }, async (lease, signal) => {
      assert.equal(lease.resource, r);
      assert.ok(lease.token >= 1);
      assert.match(lease.owner, /^[0-9a-f]{32}$/);
      assert.ok(lease.held);
      assert.equal(lease.state, 'held');
      assert.equal(signal.aborted, false);
      assert.equal(lease.tokens, `${r}=${lease.token}/${lease.owner}`);
      // announced before the function ran: PostgreSQL's mark is this token
      assert.deepEqual(await mark(db, r), [lease.token, lease.owner]);
      first = lease.token;
    });
    // released: the next holder gets it at once, with a higher token
    const again = await client.acquire(r, { ttl: '5s' });
    assert.ok(again.token > first);
    await again.release();
    assert.equal(again.held, false);
    await again.release(); // twice: nothing
    await db.end();
  }));

test('worker_under_a_lease_writes', () =>
  withClient(async (client) => {
    const r = resource('inventory');
    const db = await pgClient();
    await db.query('DROP TABLE IF EXISTS node_inventory');
    await db.query('CREATE TABLE node_inventory (sku text PRIMARY KEY, qty int NOT NULL)');
    await db.query("INSERT INTO node_inventory VALUES ('widget', 10)");
    await db.query('SELECT fence.protect($1, $2)', ['node_inventory', r]);
    // without a token the guarded table refuses the write (LF002)
    await assert.rejects(db.query("UPDATE node_inventory SET qty = qty - 1"), (e) => e.code === 'LF002');
    for (let i = 0; i < 3; i++) {
      await client.using(r, { ttl: '10s', wait: '5s' }, (lease) =>
        pgfence.pg.transaction(db, lease, (tx) => tx.query("UPDATE node_inventory SET qty = qty - 1 WHERE sku = 'widget'"))
      );
    }
    // through a pool too, and one statement through fence.fenced_update
    const { Pool } = require('pg');
    const pool = new Pool({ max: 2 });
    await client.using(r, { ttl: '10s' }, async (lease) => {
      await pgfence.pg.transaction(pool, lease, (tx) =>
        tx.query("UPDATE node_inventory SET qty = qty - $1 WHERE sku = 'widget'", [2])
      );
      await db.query('BEGIN');
      const n = await pgfence.pg.fencedUpdate(db, lease, "UPDATE node_inventory SET qty = qty - $1 WHERE sku = $2", [1, 'widget']);
      await db.query('COMMIT');
      assert.equal(n, 1);
    });
    await pool.end();
    const { rows } = await db.query('SELECT qty FROM node_inventory');
    assert.equal(rows[0].qty, 10 - 3 - 2 - 1);
    await db.end();
  }));

test('transfer_under_two_leases', () =>
  withClient(async (client) => {
    const db = await pgClient();
    // a key-mode guard's resource prefix has no ':'
    const p = resource('acct').replace(/:/g, '_');
    await db.query('DROP TABLE IF EXISTS node_accounts');
    await db.query('CREATE TABLE node_accounts (id int PRIMARY KEY, balance numeric NOT NULL)');
    await db.query("SELECT fence.protect('node_accounts', $1, key_column => 'id')", [p]);
    await client.using([`${p}:1`, `${p}:2`], {}, (both) =>
      pgfence.pg.transaction(db, both, (tx) => tx.query('INSERT INTO node_accounts VALUES (1, 100), (2, 100)'))
    );
    const transfer = (src, dst, amount) =>
      client.using([`${p}:${dst}`, `${p}:${src}`], { ttl: '10s', wait: '10s' }, async (both, signal) => {
        // canonical order, one owner, both tokens in fence.tokens
        assert.deepEqual(both.resources, [`${p}:1`, `${p}:2`]);
        assert.equal(new Set(both.members.map((m) => m.owner)).size, 1);
        assert.equal(both.tokens, both.members.map((m) => `${m.resource}=${m.token}/${m.owner}`).join(','));
        assert.equal(both.tokenOf(`${p}:2`), both.members[1].token);
        assert.equal(signal.aborted, false);
        return pgfence.pg.transaction(db, both, async (tx) => {
          await tx.query('UPDATE node_accounts SET balance = balance - $1 WHERE id = $2', [amount, src]);
          await tx.query('UPDATE node_accounts SET balance = balance + $1 WHERE id = $2', [amount, dst]);
        });
      });
    // the two directions at once cannot deadlock
    await Promise.all([transfer(1, 2, 25), transfer(2, 1, 5), transfer(1, 2, 1)]);
    // one statement for both through fence.fenced_update_many
    await client.using([`${p}:1`, `${p}:2`], {}, async (both) => {
      await db.query('BEGIN');
      const n = await pgfence.pg.fencedUpdate(
        db,
        both,
        'UPDATE node_accounts SET balance = balance + CASE id WHEN $1 THEN -$3::numeric ELSE $3::numeric END WHERE id IN ($1, $2)',
        [1, 2, 10]
      );
      await db.query('COMMIT');
      assert.equal(n, 2);
    });
    const { rows } = await db.query('SELECT id, balance FROM node_accounts ORDER BY id');
    assert.deepEqual(rows.map((x) => Number(x.balance)), [100 - 25 + 5 - 1 - 10, 100 + 25 - 5 + 1 + 10]);
    await db.end();
  }));

test('event_loop_keeps_running_while_one_waits', () =>
  withClient(async (client) => {
    const r = resource('loop');
    const ticks = [];
    const ticker = setInterval(() => ticks.push(Date.now()), 10);
    const holder = await client.acquire(r, { ttl: '30s' });
    let got = null;
    const waiter = client.using(r, { ttl: '10s', wait: '30s' }, (lease) => {
      got = { at: Date.now(), token: lease.token };
    });
    const t0 = Date.now();
    // meanwhile other leases come and go on the same client: ten of them
    // and a second at least, however slow a loaded machine makes each
    let others = 0;
    while (others < 10 || Date.now() - t0 < 1000) {
      await client.using(resource('other'), { ttl: '5s' }, () => others++);
      await sleep(20);
    }
    assert.equal(got, null); // queued in Redis all along
    const released = Date.now();
    await holder.release();
    await waiter;
    clearInterval(ticker);
    assert.ok(got.token > holder.token);
    assert.ok(got.at - released < 1000, `handed over ${got.at - released} ms after the release`);
    assert.ok(ticks.length > 50, `${ticks.length} ticks`);
    let gap = 0;
    for (let i = 1; i < ticks.length; i++) gap = Math.max(gap, ticks[i] - ticks[i - 1]);
    assert.ok(gap < 250, `the loop stalled for ${gap} ms`);
  }, {}));

test('abort_signal_cancels_a_wait', () =>
  withClient(async (client) => {
    const r = resource('cancel');
    const holder = await client.acquire(r, { ttl: '10s' });
    const ac = new AbortController();
    const w = client.acquire(r, { ttl: '10s', wait: '30s', signal: ac.signal });
    await sleep(300);
    const t0 = Date.now();
    ac.abort();
    await assert.rejects(w, (e) => e.name === 'AbortError');
    assert.ok(Date.now() - t0 < 2000, `cancelled after ${Date.now() - t0} ms`);
    await holder.release();
    // the lease is free: the cancelled waiter did not take it
    const again = await client.acquire(r);
    await again.release();
  }, {}));

test('heartbeat_renews_past_the_ttl', () =>
  withClient(async (client) => {
    await client.using(resource('renew'), { ttl: 300 }, async (lease, signal) => {
      await sleep(1000);
      lease.check();
      assert.equal(lease.state, 'held');
      assert.equal(signal.aborted, false);
      await lease.extend('2s');
      assert.equal(lease.ttl, 2000);
    });
  }, {}));

test('owner_name_goes_in_front_of_the_owner_id', () =>
  withClient(async (client) => {
    await client.using(resource('owner'), {}, (lease) => assert.match(lease.owner, /^billing-7\/[0-9a-f]{32}$/));
  }, { ownerName: 'billing-7' }));

test('lease_lost_aborts_the_signal_and_using_throws', (t) =>
  withClient(async () => {
    const r = resource('lost');
    const redis = await servers(t)();
    const client = await pgfence.connect(redis.url);
    let reason = null;
    await assert.rejects(
      client.using(r, { ttl: '600ms' }, async (lease, signal) => {
        // another owner's doing, as Redis sees it: the lock is gone
        assert.equal(redis.cli('DEL', `fence:{${r}}:lock`), '1');
        await new Promise((resolve, reject) => {
          signal.addEventListener('abort', resolve);
          setTimeout(() => reject(new Error('the signal did not abort')), 3000);
        });
        reason = signal.reason;
        assert.throws(() => lease.check(), pgfence.LeaseLostError);
        assert.equal(lease.state, 'lost');
        assert.equal(lease.held, false);
      }),
      pgfence.LeaseLostError
    );
    assert.ok(reason instanceof pgfence.LeaseLostError);
    // the function's own error wins over the loss
    await assert.rejects(
      client.using(r, { ttl: '600ms' }, async (lease, signal) => {
        redis.cli('DEL', `fence:{${r}}:lock`);
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        throw new RangeError('mine');
      }),
      RangeError
    );
    // a function that takes no signal is not given one (it is made on
    // demand): loss still shows, and lease.signal, made after it, is aborted
    await assert.rejects(
      client.using(r, { ttl: '600ms' }, async (lease) => {
        redis.cli('DEL', `fence:{${r}}:lock`);
        for (let i = 0; i < 60 && !lease.lost; i++) await sleep(50);
        assert.equal(lease.lost, true);
        assert.equal(lease.signal.aborted, true);
        assert.ok(lease.signal.reason instanceof pgfence.LeaseLostError);
        assert.equal(lease.signal, lease.signal);
      }),
      pgfence.LeaseLostError
    );
    await client.close();
  }));

test('not_acquired_when_busy_or_the_wait_ran_out', () =>
  withClient(async (client) => {
    const r = resource('busy');
    await client.using(r, { ttl: '10s' }, async () => {
      const other = await pgfence.connect();
      const t0 = Date.now();
      await assert.rejects(other.acquire(r, { wait: '400ms' }), (e) => {
        assert.ok(e instanceof pgfence.NotAcquiredError);
        assert.equal(e.code, 'FENCE_ERR_TIMEOUT');
        assert.equal(e.fenceErr, 5);
        return true;
      });
      const took = Date.now() - t0;
      assert.ok(took > 300 && took < 3000, `${took} ms`);
      await assert.rejects(other.acquire(r), (e) => e instanceof pgfence.NotAcquiredError && e.code === 'FENCE_ERR_BUSY');
      // a set gives back what it took
      await assert.rejects(other.acquire([`${r}:a`, r], { wait: '200ms' }), pgfence.NotAcquiredError);
      const a = await other.acquire(`${r}:a`);
      await a.release();
      await other.close();
    });
  }, {}));

test('unreachable_when_redis_is_down', (t) =>
  withClient(async () => {
    const r = resource('down');
    const redis = await servers(t)();
    const c = await pgfence.connect(redis.url, { connectTimeout: 1000, commandTimeout: 1000 });
    await c.using(r, {}, () => {});
    redis.stop();
    await assert.rejects(c.acquire(r), pgfence.UnreachableError);
    await c.close();
    await assert.rejects(pgfence.connect(redis.url, { connectTimeout: 1000 }), (e) => {
      assert.ok(e instanceof pgfence.UnreachableError);
      assert.equal(e.code, 'FENCE_ERR_IO');
      return true;
    });
  }));

test('config_refused_for_an_acl_refusal', (t) =>
  withClient(async () => {
    const redis = await servers(t)();
    // a user that may log in but not run scripts: the lease is refused
    redis.cli('ACL', 'SETUSER', 'noscripts', 'on', '>pw', '~*', '+@all', '-@scripting');
    const c = await pgfence.connect(`redis://noscripts:pw@127.0.0.1:${redis.port}`);
    await assert.rejects(c.acquire(resource('acl')), (e) => e instanceof pgfence.ConfigRefusedError && e.code === 'FENCE_ERR_AUTH');
    await c.close();
    // a wrong password: refused at login
    await assert.rejects(pgfence.connect(`redis://noscripts:wrong@127.0.0.1:${redis.port}`), pgfence.ConfigRefusedError);
  }));

test('config_refused_for_bad_arguments', () =>
  withClient(async (client) => {
    const r = resource('args');
    await assert.rejects(pgfence.connect('http://nope'), (e) => e instanceof pgfence.ConfigRefusedError && e.code === 'FENCE_ERR_ARG');
    await assert.rejects(client.acquire(r, { ttl: '10' }), /needs a unit/); // no unit
    await assert.rejects(client.acquire(r, { ttl: 'ten seconds' }), pgfence.ConfigRefusedError);
    await assert.rejects(client.acquire('', { ttl: '1s' }), pgfence.ConfigRefusedError);
    await assert.rejects(client.acquire([r, r]), pgfence.ConfigRefusedError); // the same name twice
    await assert.rejects(client.acquire(42), pgfence.ConfigRefusedError);
    await assert.rejects(pgfence.connect({ ownerName: 'has/slash' }), pgfence.ConfigRefusedError);
    assert.equal(pgfence.durationMs('250ms', 'ttl'), 250);
    assert.equal(pgfence.durationMs(1500, 'ttl'), 1500);
    assert.equal(pgfence.durationMs('inf', 'wait', true), 100000000000);
  }, {}));

test('config_refused_with_a_hint_for_a_database_without_the_extension', () =>
  withClient(async (client) => {
    const r = resource('noext');
    const admin = await pgClient();
    await admin.query('DROP DATABASE IF EXISTS node_noext');
    await admin.query('CREATE DATABASE node_noext');
    try {
      const c = await pgfence.connect({ pg: 'dbname=node_noext' });
      await assert.rejects(c.acquire(r), (e) => {
        assert.ok(e instanceof pgfence.ConfigRefusedError, e.stack);
        assert.match(e.hint || '', /CREATE EXTENSION/);
        return true;
      });
      await c.close();
      // given back: the lease is free again
      const again = await client.acquire(r, { announce: false });
      await again.release();
    } finally {
      await admin.query('DROP DATABASE node_noext');
      await admin.end();
    }
  }, {}));

test('unreachable_when_postgres_is_down', () =>
  withClient(async (c) => {
    await assert.rejects(c.acquire(resource('pgdown')), (e) => e instanceof pgfence.UnreachableError);
  }, { pg: 'host=127.0.0.1 port=1 connect_timeout=2' }));

test('stale_token_refused_lf001_and_is_stale', () =>
  withClient(async (client) => {
    const r = resource('stale');
    const db = await pgClient();
    await db.query('CREATE TABLE IF NOT EXISTS node_stale (id int PRIMARY KEY, n int)');
    await db.query('INSERT INTO node_stale VALUES (1, 0) ON CONFLICT DO NOTHING');
    const q = 'UPDATE node_stale SET n = n + $1 WHERE id = 1';
    const old = await client.acquire(r, { ttl: '5s' });
    await old.release();
    await client.using(r, { ttl: '5s' }, async (fresh) => {
      assert.ok(fresh.token > old.token);
      await db.query('BEGIN');
      const err = await pgfence.pg.fencedUpdate(db, old, q, [1]).then(() => null, (e) => e);
      await db.query('ROLLBACK');
      assert.ok(err, 'the stale token wrote');
      assert.equal(err.code, 'LF001');
      assert.ok(pgfence.isStale(err));
      assert.ok(pgfence.isStale(new Error('job failed', { cause: err })));
      await db.query('BEGIN');
      assert.equal(await pgfence.pg.fencedUpdate(db, fresh, q, [1]), 1);
      await db.query('COMMIT');
    });
    assert.ok(pgfence.isStale(new pgfence.StaleTokenError('refused', 8)));
    assert.equal(pgfence.isStale(new Error('x')), false);
    assert.equal(pgfence.isStale(null), false);
    await db.end();
  }));

test('missing_library_names_the_package_and_make_install', async () => {
  const code =
    "const p = require('.'); p.connect().catch((e) => { console.log(e.name + ': ' + e.message); });";
  const out = await run(process.execPath, ['-e', code], {
    cwd: NODE_DIR,
    env: { ...process.env, PGFENCE_LIBFENCE: '/nonexistent/libfence.so.2' },
  });
  assert.match(out.out, /^LibraryNotFoundError: /);
  assert.match(out.out, /libfence2/);
  assert.match(out.out, /make install/);
});

test('quorum_of_three_nodes', (t) =>
  withClient(async () => {
    const start = servers(t);
    const nodes = [await start(), await start(), await start()];
    const r = resource('quorum');
    const c = await pgfence.connect(nodes.map((n) => n.url).join(' '));
    let first;
    await c.using(r, { ttl: '5s' }, (lease) => {
      assert.ok(nodes.filter((n) => n.cli('EXISTS', `fence:{${r}}:lock`) === '1').length >= 2);
      first = lease.token;
    });
    nodes[0].stop(); // a majority is enough
    await c.using(r, { ttl: '5s' }, (lease) => assert.ok(lease.token > first));
    await c.close();
  }));

test('concurrent_leases_on_one_client_tokens_unique', () =>
  withClient(async (client) => {
    const r = resource('many');
    const tokens = [];
    const worker = async () => {
      for (let i = 0; i < 15; i++) {
        await client.using(r, { ttl: '5s', wait: '30s' }, (lease) => tokens.push(lease.token));
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    assert.equal(tokens.length, 60);
    assert.equal(new Set(tokens).size, 60);
    // taken one at a time, in the order of their tokens
    assert.deepEqual(tokens, tokens.slice().sort((a, b) => a - b));
  }, {}));

test('inline_client_works_and_still_waits_off_the_event_loop', () =>
  withClient(async (client) => {
    const r = resource('inline');
    const tokens = [];
    for (let i = 0; i < 3; i++) await client.using(r, { ttl: '5s' }, (lease) => tokens.push(lease.token));
    assert.ok(tokens[0] < tokens[1] && tokens[1] < tokens[2]);
    // announced inline too
    const db = await pgClient();
    await client.using(r, { ttl: '5s' }, async (lease) => assert.deepEqual(await mark(db, r), [lease.token, lease.owner]));
    await db.end();
    // a wait still runs on a worker thread: the ticker keeps ticking
    const holder = await client.acquire(r, { ttl: '10s' });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    await assert.rejects(client.acquire(r, { wait: '600ms' }), pgfence.NotAcquiredError);
    clearInterval(ticker);
    assert.ok(ticks > 20, `${ticks} ticks while one waited`);
    await holder.release();
  }, { pg: '', inline: true }));

// A worker loop's step (fence_release_acquire): this lease given back and
// the next taken in one call; the release's outcome told apart from the
// acquire's, on worker threads and inline.
test('release_acquire_is_a_worker_loop_step', (t) =>
  withClient(async () => {
    const redis = await servers(t)();
    const db = await pgClient();
    const lock = (r) => redis.cli('get', `fence:{${r}}:lock`);
    for (const inline of [false, true, undefined]) {
      const c = await pgfence.connect(redis.url, { pg: '', inline });
      const r1 = resource('step1');
      const r2 = resource('step2');
      const first = await c.acquire(r1, { ttl: '5s', heartbeat: false });
      const second = await first.releaseAcquire(r2);
      assert.equal(first.releaseError, null);
      assert.equal(first.held, false);
      assert.equal(first.lost, false);
      assert.equal(lock(r1), '');
      assert.equal(lock(r2), second.owner);
      assert.ok(second.held && second.token >= 1);
      assert.equal(second.ttl, 5000); // the lease's settings, where not given
      // announced, as acquire() announces
      assert.deepEqual(await mark(db, r2), [second.token, second.owner]);

      // lost meanwhile: the release says so and touches nothing of the
      // new owner's; the next lease is taken all the same
      redis.cli('set', `fence:{${r2}}:lock`, 'someone-else', 'px', '5000');
      const third = await second.releaseAcquire(r1, { heartbeat: true });
      assert.ok(second.releaseError instanceof pgfence.LeaseLostError);
      assert.equal(second.releaseError.code, 'FENCE_ERR_LOST');
      assert.ok(second.lost && second.signal.aborted);
      assert.equal(lock(r2), 'someone-else');
      assert.ok(third.held && third.token > first.token);

      // the next one busy: NotAcquiredError, and this one given back anyway
      await assert.rejects(third.releaseAcquire(r2), (e) => e instanceof pgfence.NotAcquiredError && e.code === 'FENCE_ERR_BUSY');
      assert.equal(third.releaseError, null);
      assert.equal(third.held, false);
      assert.equal(lock(r1), '');

      // arguments refused before anything was sent: given back alone
      const fourth = await c.acquire(r1, { ttl: '5s' });
      await assert.rejects(fourth.releaseAcquire(''), pgfence.ConfigRefusedError);
      assert.equal(fourth.releaseError, null);
      assert.equal(fourth.held, false);
      assert.equal(lock(r1), '');

      // on a lease given back already: only the acquire
      const fifth = await fourth.releaseAcquire(r1);
      assert.ok(fifth.held && fifth.token > third.token);
      await fifth.release();
      redis.cli('del', `fence:{${r2}}:lock`);
      await c.close();
    }

    // Redis gone: the release's outcome is unknown, the acquire unreachable
    const c = await pgfence.connect(redis.url, { connectTimeout: 1000, commandTimeout: 1000 });
    const held = await c.acquire(resource('step3'), { ttl: '5s' });
    redis.stop();
    await assert.rejects(held.releaseAcquire(resource('step4')), pgfence.UnreachableError);
    assert.ok(held.releaseError instanceof pgfence.UnreachableError);
    assert.equal(held.held, false);
    await c.close();
    await db.end();
  }));
