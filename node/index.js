// pgfence: fenced Redis leases for Node.js, a thin binding over libfence
// (the C library is the one implementation of the protocol), with tokens
// that PostgreSQL's fence extension checks.  docs/node.md.
'use strict';

const { Client, Lease, LeaseSet, connect, durationMs } = require('./lib/client');
const errors = require('./lib/errors');
const pg = require('./lib/pg');

module.exports = {
  connect,
  Client,
  Lease,
  LeaseSet,
  durationMs,
  pg,
  isStale: errors.isStale,
  FenceError: errors.FenceError,
  NotAcquiredError: errors.NotAcquiredError,
  LeaseLostError: errors.LeaseLostError,
  UnreachableError: errors.UnreachableError,
  ConfigRefusedError: errors.ConfigRefusedError,
  LibraryNotFoundError: errors.LibraryNotFoundError,
  StaleTokenError: errors.StaleTokenError,
  STALE_SQLSTATE: errors.STALE_SQLSTATE,
};
