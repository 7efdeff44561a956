// node/test/bound.test.js: the default client's inline bound.  A call that
// does not wait for a busy lease runs on the main thread while Redis
// answers within the bound, and holds the event loop no longer than about
// the bound when Redis stalls (a redis-server frozen by SIGSTOP): the call
// then completes off the loop, on the request already sent, once Redis
// answers again, and what it took is a real lease.
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const pgfence = require('..');
const { resource, servers, sleep } = require('./helpers');

// the longest the event loop went without running a timer while "fn" ran
async function longestStall(fn) {
  let last = process.hrtime.bigint();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = process.hrtime.bigint();
    longest = Math.max(longest, Number(now - last) / 1e6);
    last = now;
  }, 2);
  try {
    const value = await fn();
    // (a call that never let the ticker run stalled it until now)
    longest = Math.max(longest, Number(process.hrtime.bigint() - last) / 1e6);
    return [value, longest];
  } finally {
    clearInterval(ticker);
  }
}

// whether "fn" settled before a macrotask queued just before it could run:
// a call made on the main thread settles in microtasks; one that went to a
// worker thread settles from a libuv callback, after the setImmediate
async function settledInline(fn) {
  let immediate = false;
  setImmediate(() => (immediate = true));
  const value = await fn();
  return [value, !immediate];
}

test('default_client_makes_the_calls_that_do_not_wait_on_the_main_thread', async (t) => {
  const redis = await servers(t)();
  // a generous bound: a loaded machine must not send a call off the loop
  const c = await pgfence.connect(redis.url, { inlineBound: '2s' });
  const r = resource('quick');
  const [lease, acquiredInline] = await settledInline(() => c.acquire(r, { ttl: '5s', heartbeat: false }));
  assert.ok(acquiredInline, 'acquire went off the event loop');
  const [, extendedInline] = await settledInline(() => lease.extend('6s'));
  assert.ok(extendedInline, 'extend went off the event loop');
  const [next, steppedInline] = await settledInline(() => lease.releaseAcquire(resource('quick2')));
  assert.ok(steppedInline, 'releaseAcquire went off the event loop');
  const [, releasedInline] = await settledInline(() => next.release());
  assert.ok(releasedInline, 'release went off the event loop');
  assert.equal(lease.releaseError, null);
  // a wait still runs on a worker thread
  const [waited, waitedInline] = await settledInline(() => c.acquire(r, { ttl: '5s', wait: '1s', heartbeat: false }));
  assert.equal(waitedInline, false);
  await waited.release();
  await c.close();

  // the worker-thread client, for contrast: every call leaves the loop
  const w = await pgfence.connect(redis.url, { inline: false });
  const [held, workerInline] = await settledInline(() => w.acquire(r, { ttl: '5s', heartbeat: false }));
  assert.equal(workerInline, false);
  await held.release();
  await w.close();
});

test('frozen_redis_holds_the_loop_no_longer_than_the_bound_and_the_calls_complete', async (t) => {
  const redis = await servers(t)();
  const pid = redis.proc.pid;
  // thawed by a process of its own: an inline client holds the loop, and
  // a timer of this one would not run until Redis answered
  const freezeFor = (ms) => {
    process.kill(pid, 'SIGSTOP');
    spawn('sh', ['-c', `sleep ${ms / 1000}; kill -CONT ${pid}`], { stdio: 'ignore' });
  };
  const c = await pgfence.connect(redis.url, { inlineBound: '20ms', commandTimeout: '10s' });
  const r = resource('frozen');
  const lock = `fence:{${r}}:lock`;

  // an acquire: the loop goes on; once Redis runs again the lease is taken
  // by the one request sent (a second one, same owner or not, would have
  // counted the token up again)
  freezeFor(600);
  const [lease, acquireStall] = await longestStall(() => c.acquire(r, { ttl: '3s' }));
  assert.ok(acquireStall < 300, `the loop stalled ${acquireStall.toFixed(1)} ms during an acquire`);
  assert.equal(lease.token, 1);
  assert.equal(redis.cli('get', `fence:{${r}}:token`), '1');
  assert.equal(redis.cli('get', lock), lease.owner);
  assert.equal(lease.state, 'held');

  // an extend, the same
  freezeFor(600);
  const [, extendStall] = await longestStall(() => lease.extend('8s'));
  assert.ok(extendStall < 300, `the loop stalled ${extendStall.toFixed(1)} ms during an extend`);
  assert.ok(Number(redis.cli('pttl', lock)) > 6000);
  assert.equal(lease.ttl, 8000);

  // a real lease: its heartbeat renews it, and its signal fires when it is
  // taken away
  assert.equal(lease.signal.aborted, false);
  redis.cli('set', lock, 'someone-else', 'px', '20000');
  for (let i = 0; i < 100 && !lease.signal.aborted; i++) await sleep(50);
  assert.ok(lease.signal.aborted, 'the lost signal did not fire');
  assert.ok(lease.signal.reason instanceof pgfence.LeaseLostError);
  await assert.rejects(lease.release(), pgfence.LeaseLostError);
  redis.cli('del', lock);

  // a release: given back once Redis runs again, and said so (not "lost")
  const again = await c.acquire(r, { ttl: '5s', heartbeat: false });
  freezeFor(600);
  const [, releaseStall] = await longestStall(() => again.release());
  assert.ok(releaseStall < 300, `the loop stalled ${releaseStall.toFixed(1)} ms during a release`);
  assert.equal(redis.cli('get', lock), '');
  assert.equal(again.lost, false);

  // a worker loop's step, the same
  const step = await c.acquire(r, { ttl: '5s', heartbeat: false });
  const r2 = resource('frozen2');
  freezeFor(600);
  const [following, stepStall] = await longestStall(() => step.releaseAcquire(r2));
  assert.ok(stepStall < 300, `the loop stalled ${stepStall.toFixed(1)} ms during releaseAcquire`);
  assert.equal(step.releaseError, null);
  assert.equal(redis.cli('get', lock), '');
  assert.equal(redis.cli('get', `fence:{${r2}}:lock`), following.owner);
  assert.equal(following.token, 1);
  await following.release();

  // the calls after a cut one run inline again
  const [quick, inline] = await settledInline(() => c.acquire(r, { ttl: '5s', heartbeat: false }));
  assert.ok(inline);
  await quick.release();
  await c.close();

  // an inline client (inline: true) holds the loop for the whole stall
  const blocking = await pgfence.connect(redis.url, { inline: true, commandTimeout: '10s' });
  freezeFor(600);
  const [held, inlineStall] = await longestStall(() => blocking.acquire(r, { ttl: '5s', heartbeat: false }));
  assert.ok(inlineStall >= 400, `the inline client stalled the loop only ${inlineStall.toFixed(1)} ms`);
  await held.release();
  await blocking.close();
});

test('redis_that_stays_frozen_fails_the_call_as_unreachable_after_the_command_timeout', async (t) => {
  const redis = await servers(t)();
  const c = await pgfence.connect(redis.url, { inlineBound: '10ms', commandTimeout: '700ms' });
  const r = resource('stuck');
  process.kill(redis.proc.pid, 'SIGSTOP');
  t.after(() => process.kill(redis.proc.pid, 'SIGCONT'));
  const started = Date.now();
  const [outcome, stall] = await longestStall(() => c.acquire(r, { ttl: '5s' }).then(() => null, (e) => e));
  assert.ok(outcome instanceof pgfence.UnreachableError, `${outcome}`);
  assert.ok(Date.now() - started >= 600, 'failed before the command timeout');
  assert.ok(stall < 300, `the loop stalled ${stall.toFixed(1)} ms`);
  await c.close();
});

test('inline_bound_and_inline_options_are_checked', async () => {
  await assert.rejects(pgfence.connect({ inlineBound: '5' }), (e) => e instanceof pgfence.ConfigRefusedError && /inline bound/.test(e.message));
  await assert.rejects(pgfence.connect({ inlineBound: -1 }), pgfence.ConfigRefusedError);
  await assert.rejects(pgfence.connect({ inline: 'yes' }), (e) => e instanceof pgfence.ConfigRefusedError && /inline/.test(e.message));
});
