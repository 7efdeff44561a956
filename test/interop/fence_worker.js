// test/interop/fence_worker.js: a Node.js client of fence's protocol.
//
// Runs the shipped scripts (client/lua/*.lua, or FENCE_LUA_DIR) with
// ioredis (pinned in node/package-lock.json, installed with "npm ci") as
// client/lua/PROTOCOL.md says, so that it shares leases, the waiting queue
// and tokens with `fence`.  One master, one redis:// URL.
//
// Commands, one a line on stdin, answers on stdout (times: wall clock, ms),
// as fence_worker.py:
//   acquire R TTL_MS WAIT_MS   ok TOKEN OWNER T_GOT | busy T | timeout T
//   release R                  released RC T_SENT
//   loop R N COUNTER LOG       N rounds of the shared counter, "node TOKEN"
//                              appended to LOG; then "done N"
//   quit
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const Redis = require('ioredis');

const LUA_DIR = process.env.FENCE_LUA_DIR || path.join(__dirname, '..', '..', 'client', 'lua');
const WAIT_BEAT_MS = 500; // ask again at least this often, keeping the place

// wall clock with sub-ms precision: performance.timeOrigin + now()
const { performance } = require('perf_hooks');
const wallMs = () => performance.timeOrigin + performance.now();

// One script file, sent as EVALSHA and, on NOSCRIPT, as EVAL.
class Script {
  constructor(name) {
    this.text = fs.readFileSync(path.join(LUA_DIR, name + '.lua'));
    this.sha = crypto.createHash('sha1').update(this.text).digest('hex');
  }

  async run(r, keys, argv) {
    try {
      return await r.evalsha(this.sha, keys.length, ...keys, ...argv);
    } catch (e) {
      if (!String(e.message).startsWith('NOSCRIPT')) throw e;
      return r.eval(this.text, keys.length, ...keys, ...argv);
    }
  }
}

const ACQUIRE = new Script('acquire');
const RELEASE = new Script('release');

// T of PROTOCOL.md: '%', '{', '}' percent-encoded
function tag(resource) {
  const out = [];
  for (const b of Buffer.from(resource)) {
    if (b === 0x25 || b === 0x7b || b === 0x7d) out.push(...Buffer.from('%' + b.toString(16).toUpperCase()));
    else out.push(b);
  }
  return Buffer.from(out);
}

// fence:{T}:SUFFIX, as a Buffer: a resource is bytes, not text
const keyOf = (resource, suffix) => Buffer.concat([Buffer.from('fence:{'), tag(resource), Buffer.from('}:' + suffix)]);
const keysOf = (resource) => ['lock', 'token', 'queue', 'alive'].map((k) => keyOf(resource, k));
const ownerId = () => `node:${process.pid}/${crypto.randomBytes(16).toString('hex')}`;
// the token (a string of digits), or null for a busy {PTTL}
const tokenOf = (reply) => (Array.isArray(reply) ? null : String(reply));

class Client {
  constructor(url) {
    this.r = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: true });
    this.held = new Map();
  }

  // {token, owner}, or null when the wait ran out
  async acquire(resource, ttlMs, waitMs) {
    const k = keysOf(resource);
    const owner = ownerId();
    const wake = keyOf(resource, `wake:${owner}`);
    const deadline = wallMs() + waitMs;
    let reply = await ACQUIRE.run(this.r, k, [owner, String(ttlMs), waitMs > 0 ? '1' : '0']);
    for (;;) {
      const tok = tokenOf(reply);
      if (tok !== null) {
        this.held.set(resource, owner);
        return { token: tok, owner };
      }
      if (waitMs === 0) return null;
      const left = deadline - wallMs();
      if (left <= 0) {
        // the last attempt: take a lock handed over at the last moment, or
        // give up the place
        reply = await ACQUIRE.run(this.r, k, [owner, String(ttlMs), '2']);
        if (tokenOf(reply) === null) return null;
        continue;
      }
      const block = Math.max(1, Math.min(Number(reply[0]) + 1, WAIT_BEAT_MS, Math.floor(left) + 1));
      // BLPOP and the next attempt in one write: Redis runs the attempt the
      // moment the BLPOP returns (PROTOCOL.md, Waiting)
      const res = await this.r.pipeline()
        .blpop(wake, (block / 1000).toFixed(3))
        .evalsha(ACQUIRE.sha, 4, ...k, owner, String(ttlMs), '1')
        .exec();
      const [err, r1] = res[1];
      if (err && String(err.message).startsWith('NOSCRIPT')) reply = await ACQUIRE.run(this.r, k, [owner, String(ttlMs), '1']);
      else if (err) throw err;
      else reply = r1;
    }
  }

  async release(resource) {
    const owner = this.held.get(resource);
    this.held.delete(resource);
    // "1": hand the lock to the first waiter and wake it
    return Number(await RELEASE.run(this.r, keysOf(resource).slice(0, 1), [owner, '1']));
  }
}

async function loop(c, resource, n, counter, log) {
  for (let i = 0; i < n; i++) {
    const got = await c.acquire(resource, 10000, 60000);
    if (!got) return `timeout ${wallMs().toFixed(3)}`;
    const v = parseInt(fs.readFileSync(counter, 'utf8').trim() || '0', 10);
    fs.writeFileSync(counter, `${v + 1}\n`);
    fs.appendFileSync(log, `node ${got.token}\n`);
    if ((await c.release(resource)) !== 1) return `lost ${got.token}`;
  }
  return `done ${n}`;
}

async function main() {
  const c = new Client(process.env.FENCE_REDIS_URL || 'redis://127.0.0.1:6379');
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const w = line.trim().split(/\s+/);
    if (w[0] === '') continue;
    if (w[0] === 'acquire') {
      const got = await c.acquire(w[1], parseInt(w[2], 10), parseInt(w[3], 10));
      const t = wallMs().toFixed(3);
      console.log(got ? `ok ${got.token} ${got.owner} ${t}` : `${parseInt(w[3], 10) ? 'timeout' : 'busy'} ${t}`);
    } else if (w[0] === 'release') {
      const t = wallMs().toFixed(3);
      const rc = await c.release(w[1]);
      console.log(`released ${rc} ${t}`);
    } else if (w[0] === 'loop') {
      console.log(await loop(c, w[1], parseInt(w[2], 10), w[3], w[4]));
    } else if (w[0] === 'quit') {
      break;
    } else {
      console.log(`error unknown command ${w[0]}`);
    }
  }
  c.r.disconnect();
  process.exit(0);
}

main().catch((e) => {
  console.error(`fence_worker.js: ${e.message}`);
  process.exit(1);
});
