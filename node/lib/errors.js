// pgfence/lib/errors.js: libfence's outcomes as JS errors.
//
// Every error is a FenceError carrying libfence's kind of error (fenceErr,
// one of fence.h's FENCE_ERR_* numbers, 0 for errors found in JS; code,
// its name as a string, as Node's own errors have) and its message.  The
// classes sort the kinds by what a caller does next:
//
//   NotAcquiredError   BUSY, TIMEOUT, REPLICAS        try later, or wait longer
//   LeaseLostError     LOST                           stop writing; take a new lease
//   UnreachableError   IO, PROTOCOL, SUSPECT; PG down retry once the server is back
//   ConfigRefusedError ARG, AUTH, TLS, STATE;         fix the URL, ACL or grants
//                      database not set up (hint)
//   StaleTokenError    STALE (LF001)                  never retry with that token
//   FenceError         OVERFLOW, OOM, PG              see the message
//
// isStale(err) recognises PostgreSQL's stale-token refusal (SQLSTATE
// LF001) as node-postgres raises it (err.code), and StaleTokenError.
'use strict';

const STALE_SQLSTATE = 'LF001';

// fence.h's FENCE_ERR_* kinds, by number
const KINDS = {
  1: 'FENCE_ERR_IO',
  2: 'FENCE_ERR_PROTOCOL',
  3: 'FENCE_ERR_REPLY',
  4: 'FENCE_ERR_BUSY',
  5: 'FENCE_ERR_TIMEOUT',
  6: 'FENCE_ERR_LOST',
  7: 'FENCE_ERR_SUSPECT',
  8: 'FENCE_ERR_STALE',
  9: 'FENCE_ERR_PG',
  10: 'FENCE_ERR_ARG',
  11: 'FENCE_ERR_OVERFLOW',
  12: 'FENCE_ERR_OOM',
  13: 'FENCE_ERR_AUTH',
  14: 'FENCE_ERR_STATE',
  15: 'FENCE_ERR_REPLICAS',
  16: 'FENCE_ERR_TLS',
};
const ERR = {};
for (const [n, name] of Object.entries(KINDS)) ERR[name.slice('FENCE_ERR_'.length)] = Number(n);

class FenceError extends Error {
  // message: libfence's text; fenceErr: the FENCE_ERR_* number (0: found in
  // JS); hint: what to run when PostgreSQL is not set up for fence.
  constructor(message, fenceErr = 0, hint = null, options = undefined) {
    super(hint ? `${message}\n${hint}` : message, options);
    this.name = new.target.name;
    this.fenceErr = fenceErr;
    this.code = KINDS[fenceErr] || 'FENCE_ERR';
    this.hint = hint;
  }
}

// The lease was not acquired: another owner holds it (no wait, or the
// wait ran out), or too few replicas acknowledged it.
class NotAcquiredError extends FenceError {}

// The lease is not (or no longer) ours: stop writing under it.
class LeaseLostError extends FenceError {}

// Redis or PostgreSQL could not be reached, or stopped answering.
class UnreachableError extends FenceError {}

// Refused by configuration: a bad URL, duration or resource name, a login
// or ACL refusal, TLS refused, or a database without the fence extension
// or the grant ("hint" then says what to run).
class ConfigRefusedError extends FenceError {}

// libfence.so.2 (or libpq.so.5) could not be loaded.
class LibraryNotFoundError extends ConfigRefusedError {}

// PostgreSQL refused the token (SQLSTATE LF001): a newer holder has
// announced.  Never retry with the same token.
class StaleTokenError extends FenceError {
  get sqlstate() {
    return STALE_SQLSTATE;
  }
}

const CLASSES = {
  [ERR.BUSY]: NotAcquiredError,
  [ERR.TIMEOUT]: NotAcquiredError,
  [ERR.REPLICAS]: NotAcquiredError,
  [ERR.LOST]: LeaseLostError,
  [ERR.IO]: UnreachableError,
  [ERR.PROTOCOL]: UnreachableError,
  [ERR.SUSPECT]: UnreachableError,
  [ERR.ARG]: ConfigRefusedError,
  [ERR.AUTH]: ConfigRefusedError,
  [ERR.TLS]: ConfigRefusedError,
  [ERR.STATE]: ConfigRefusedError,
  [ERR.STALE]: StaleTokenError,
};

// errorFor(code, message, hint): the error for libfence's kind "code".
function errorFor(code, message, hint = null) {
  // PostgreSQL refused fence's own SQL: not set up (fence_pg_hint)
  if (hint) return new ConfigRefusedError(message, code, hint);
  const Class = CLASSES[code] || FenceError;
  return new Class(message, code);
}

// isStale(err): true when "err" is PostgreSQL refusing a stale fencing
// token (SQLSTATE LF001: node-postgres's err.code), or StaleTokenError;
// also when such a refusal is its cause.  Never retry that write with the
// same token.
function isStale(err) {
  for (let i = 0; err != null && i < 10; i++) {
    if (err instanceof StaleTokenError) return true;
    if (typeof err === 'object' && (err.code === STALE_SQLSTATE || err.sqlstate === STALE_SQLSTATE)) return true;
    err = err.cause;
  }
  return false;
}

module.exports = {
  FenceError,
  NotAcquiredError,
  LeaseLostError,
  UnreachableError,
  ConfigRefusedError,
  LibraryNotFoundError,
  StaleTokenError,
  errorFor,
  isStale,
  ERR,
  STALE_SQLSTATE,
};
