// node/test/helpers.js: what the pgfence tests share.
//
// The tests run against the servers test/run.sh starts ("suite_node"): the
// Redis in FENCE_REDIS_URL and the PostgreSQL in the PG* variables, with
// the fence extension installed.  PGFENCE_LIBFENCE names the libfence.so.2
// of the tree under test.  Servers of their own (a Redis to stop, one with
// an ACL) are started here, on spare ports, and stopped by their pid.
'use strict';

const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn, execFileSync } = require('node:child_process');
const pg = require('pg');

const NODE_DIR = path.resolve(__dirname, '..');
const TOP = path.resolve(NODE_DIR, '..');

for (const name of ['FENCE_REDIS_URL', 'PGHOST', 'PGPORT']) {
  if (!process.env[name]) {
    throw new Error(`${name} is not set: run these tests through test/run.sh (FENCE_SUITES=node)`);
  }
}

// resource(name): a resource name no other test (or run) uses
function resource(name) {
  return `node:${name}:${crypto.randomBytes(4).toString('hex')}`;
}

// pgClient(): a node-postgres client on the suite's PostgreSQL (PG* variables)
async function pgClient(options = {}) {
  const c = new pg.Client(options);
  await c.connect();
  return c;
}

let extensionMade = null;
function fenceExtension() {
  if (!extensionMade) {
    extensionMade = (async () => {
      const c = await pgClient();
      try {
        await c.query('SET client_min_messages = warning');
        await c.query('CREATE EXTENSION IF NOT EXISTS fence');
      } finally {
        await c.end();
      }
    })();
  }
  return extensionMade;
}

function sparePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

// A redis-server of a test's own.
class RedisServer {
  static async start(...args) {
    const r = new RedisServer();
    r.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgfence-node-redis.'));
    r.port = await sparePort();
    r.proc = spawn(
      'redis-server',
      ['--port', String(r.port), '--bind', '127.0.0.1', '--dir', r.dir, '--save', '', '--appendonly', 'no',
        '--logfile', path.join(r.dir, 'redis.log'), ...args],
      { stdio: 'ignore' }
    );
    for (let i = 0; i < 100; i++) {
      if (r.cli('ping') === 'PONG') return r;
      await sleep(100);
    }
    r.stop();
    throw new Error(`redis-server on port ${r.port} did not start`);
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  cli(...args) {
    try {
      return execFileSync('redis-cli', ['-p', String(this.port), ...args], { stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim();
    } catch (e) {
      return '';
    }
  }

  stop() {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) {
      try {
        process.kill(this.proc.pid, 'SIGCONT');
        process.kill(this.proc.pid, 'SIGKILL');
      } catch (e) {
        // gone already
      }
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// servers(t): start Redis servers for test "t", stopped when it ends
function servers(t) {
  const started = [];
  t.after(() => started.forEach((s) => s.stop()));
  return async (...args) => {
    const s = await RedisServer.start(...args);
    started.push(s);
    return s;
  };
}

// run(cmd, args, options): a child process's exit code and output
function run(cmd, args, options = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

module.exports = { NODE_DIR, TOP, resource, pgClient, fenceExtension, RedisServer, servers, sleep, run };
