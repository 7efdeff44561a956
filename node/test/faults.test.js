// node/test/faults.test.js: a Node.js worker paused past its TTL (F1), and
// Node.js, "fence run" and a C worker taking turns on one resource.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const readline = require('node:readline');
const pgfence = require('..');
const { TOP, resource, pgClient, fenceExtension, sleep, run } = require('./helpers');

const WORKERS = path.join(__dirname, 'workers');

test('sigstopped_worker_is_refused_lf001_and_its_signal_fires', async (t) => {
  await fenceExtension();
  const r = resource('paused');
  const table = 'node_paused';
  const db = await pgClient();
  t.after(() => db.end());
  await db.query(`DROP TABLE IF EXISTS ${table}`);
  await db.query(`CREATE TABLE ${table} (n int, who text)`);
  await db.query(`INSERT INTO ${table} VALUES (0, NULL)`);
  await db.query('SELECT fence.protect($1, $2)', [table, r]);
  const w = spawn(process.execPath, [path.join(WORKERS, 'paused.js'), r, table], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => {
    if (w.exitCode === null && w.signalCode === null) {
      process.kill(w.pid, 'SIGCONT');
      w.kill('SIGKILL');
    }
  });
  const lines = readline.createInterface({ input: w.stdout });
  const next = () => new Promise((resolve) => lines.once('line', resolve));
  const exited = new Promise((resolve) => w.on('close', resolve));
  const first = (await next()).split(' ');
  assert.equal(first[0], 'token');
  const old = Number(first[1]);
  process.kill(w.pid, 'SIGSTOP');
  await sleep(1500); // past the TTL: the lease expires in Redis
  const client = await pgfence.connect({ pg: '' });
  await client.using(r, { ttl: '10s', wait: '5s' }, async (lease) => {
    assert.ok(lease.token > old);
    await pgfence.pg.transaction(db, lease, (tx) => tx.query(`UPDATE ${table} SET n = n + 1, who = 'new'`));
    process.kill(w.pid, 'SIGCONT');
    const result = next();
    w.stdin.write('go\n');
    const out = await result;
    assert.equal(out, 'refused LF001 stale lost LeaseLostError not-ours');
    // the new holder's lease is untouched by the old one's release
    assert.equal(lease.state, 'held');
  });
  assert.equal(await exited, 0);
  await client.close();
  const { rows } = await db.query(`SELECT n, who FROM ${table}`);
  assert.deepEqual(rows[0], { n: 1, who: 'new' });
});

// fence run's turn: psql under the lease, fenced through PGOPTIONS.
const RUN_SQL =
  'UPDATE mix_counter SET n = (SELECT n FROM mix_counter) + 1; ' +
  "INSERT INTO mix_log (who, token) VALUES ('fence-run', current_setting('fence.token')::bigint)";

test('node_fence_run_and_c_worker_take_turns_tokens_increase_no_lost_update', async (t) => {
  await fenceExtension();
  const r = resource('mix');
  const db = await pgClient();
  t.after(() => db.end());
  await db.query('DROP TABLE IF EXISTS mix_counter, mix_log');
  await db.query('CREATE TABLE mix_counter (n int NOT NULL)');
  await db.query('INSERT INTO mix_counter VALUES (0)');
  await db.query('CREATE TABLE mix_log (seq bigserial PRIMARY KEY, who text, token bigint)');
  await db.query("SELECT fence.protect('mix_counter', $1)", [r]);
  // the C worker: libfence from C, the one the Python tests build too
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgfence-node-cw.'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const clientDir = path.join(TOP, 'client');
  const pgInc = (await run('pg_config', ['--includedir'])).out.trim();
  const worker = path.join(dir, 'c_worker');
  const cc = await run(process.env.CC || 'cc', [
    '-O2', '-Wall', '-Werror', '-I', clientDir, '-I', pgInc, '-o', worker,
    path.join(TOP, 'python', 'tests', 'c_worker.c'), path.join(clientDir, 'libfence.so.2'), '-lpq',
    `-Wl,-rpath,${clientDir}`,
  ]);
  assert.equal(cc.code, 0, cc.err);
  const fence = process.env.FENCE_BIN || path.join(clientDir, 'fence');
  const n = 12;
  const fenceRun = async () => {
    for (let i = 0; i < n; i++) {
      const res = await run(fence, ['run', r, '--ttl', '5s', '--wait', '60s', '--pg', '', '--',
        'psql', '-X', '-q', '-1', '-v', 'ON_ERROR_STOP=1', '-c', RUN_SQL]);
      assert.equal(res.code, 0, res.err);
    }
  };
  const [nodeRes, cRes] = await Promise.all([
    run(process.execPath, [path.join(WORKERS, 'mix.js'), r, String(n)]),
    run(worker, [r, String(n)]),
    fenceRun(),
  ]);
  assert.equal(nodeRes.code, 0, nodeRes.err);
  assert.equal(cRes.code, 0, cRes.err);
  const rows = (await db.query('SELECT who, token FROM mix_log ORDER BY seq')).rows;
  const final = (await db.query('SELECT n FROM mix_counter')).rows[0].n;
  assert.deepEqual(new Set(rows.map((x) => x.who)), new Set(['node', 'fence-run', 'c']));
  assert.equal(rows.length, 3 * n);
  const tokens = rows.map((x) => Number(x.token));
  for (let i = 1; i < tokens.length; i++) assert.ok(tokens[i - 1] < tokens[i], `tokens ${tokens.join(' ')}`);
  assert.equal(final, rows.length); // no lost update
});
