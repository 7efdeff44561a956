// pgfence/lib/pg.js: a lease's tokens into SQL with node-postgres (pg).
//
// Two ways, as the README's "From a driver" shows them for any language:
//
// - setTokens() puts the lease's tokens into fence.tokens for the current
//   transaction (set_config(..., true), which is SET LOCAL with a
//   parameter), so that plain SQL on guarded tables is fenced unchanged;
//   transaction() opens the transaction, sets them, runs a function and
//   commits (or rolls back);
// - fencedUpdate() runs one statement through fence.fenced_update (or
//   fence.fenced_update_many for a set), which checks and advances the
//   token and runs the statement in the caller's transaction, in one round
//   trip, with the statement's values sent as parameters.
//
// pg is not a dependency: these take any object with pg's query(text,
// values) (a pg.Client, a PoolClient; a pg.Pool for transaction()).
'use strict';

const { LeaseSet } = require('./client');
const { ConfigRefusedError, ERR } = require('./errors');

const SET = "SELECT pg_catalog.set_config('fence.tokens', $1, true)";

function needQuery(conn) {
  if (!conn || typeof conn.query !== 'function') {
    throw new ConfigRefusedError('expected a node-postgres client (an object with query())', ERR.ARG);
  }
}

// setTokens(conn, lease): set fence.tokens to the lease's tokens for the
// current transaction of "conn" (outside a transaction it would end with
// its own statement: use transaction(), or BEGIN first).
async function setTokens(conn, lease) {
  needQuery(conn);
  await conn.query(SET, [lease.tokens]);
}

// transaction(connOrPool, lease, fn): BEGIN, set fence.tokens, "await
// fn(conn)", COMMIT, and resolve to what fn returned; ROLLBACK when fn or
// the COMMIT throws.  Given a pg.Pool, a client is checked out for it.
async function transaction(connOrPool, lease, fn) {
  needQuery(connOrPool);
  const pooled = typeof connOrPool.connect === 'function' && typeof connOrPool.totalCount === 'number';
  const conn = pooled ? await connOrPool.connect() : connOrPool;
  let broken = null;
  try {
    await conn.query('BEGIN');
    try {
      await conn.query(SET, [lease.tokens]);
      const result = await fn(conn);
      await conn.query('COMMIT');
      return result;
    } catch (e) {
      try {
        await conn.query('ROLLBACK');
      } catch (r) {
        broken = r;
      }
      throw e;
    }
  } finally {
    if (pooled) conn.release(broken || undefined);
  }
}

// fencedUpdate(conn, lease, sql, params): run "sql" (with $1, $2... for
// "params") under "lease" through fence.fenced_update (a LeaseSet:
// fence.fenced_update_many), in the current transaction; resolves to the
// number of rows it changed.  fence.tokens is set first in the same
// statement, so that the owners are checked too.
async function fencedUpdate(conn, lease, sql, params = []) {
  needQuery(conn);
  const many = lease instanceof LeaseSet;
  const fn = many ? 'fence.fenced_update_many' : 'fence.fenced_update';
  const n = 3 + params.length;
  const marks = Array.from({ length: n }, (_, i) => `$${i + 1}`);
  // set_config runs first: a subquery with a volatile target list is not
  // pulled up, and the outer call runs for its one row
  const text = `SELECT ${fn}(${marks.join(', ')}) AS n FROM (SELECT pg_catalog.set_config('fence.tokens', $${n + 1}, true)) AS fence_tokens`;
  const head = many ? [lease.resources, lease.tokenList.map(String)] : [lease.resource, String(lease.token)];
  const res = await conn.query(text, [...head, sql, ...params, lease.tokens]);
  return Number(res.rows[0].n);
}

module.exports = { setTokens, transaction, fencedUpdate };
