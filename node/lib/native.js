// pgfence/lib/native.js: libfence.so.2 and libpq.so.5 through koffi.
//
// libfence is the one implementation of the lease protocol; this module
// only finds it, declares the prototypes of the functions fence.h exports
// that the package calls, and reads the two public fields of a context
// that carry its errors ("err" and "errstr", fence.h's hiredis-style error
// model).  Every other libfence type is an opaque pointer (a BigInt in
// koffi 3), so a change of a private layout in C cannot go unnoticed here.
//
// libpq is loaded only when a client announces to PostgreSQL:
// fence_announce takes a PGconn, which PQconnectdb makes.  libfence opens
// libpq by its soname too, and the dynamic linker hands both the same copy.
'use strict';

const path = require('node:path');
const { ConfigRefusedError, LibraryNotFoundError } = require('./errors');

// koffi is this package's one dependency.  npm installs a directory
// outside the project ("npm install /path/to/pgfence/node") as a link to
// it, without its dependencies, which the package's install script then
// installs there (install.js); when that script did not run
// (--ignore-scripts), say how to install koffi rather than "Cannot find
// module".
let koffi;
try {
  koffi = require('koffi');
} catch (e) {
  if (e.code !== 'MODULE_NOT_FOUND') throw e;
  throw new LibraryNotFoundError(
    `koffi not found from ${__dirname}: npm links a directory without installing its ` +
      'dependencies, and pgfence\'s install script, which installs them there, did not run ' +
      '(--ignore-scripts?); run "npm ci --omit=dev" in DIR, or install pgfence with ' +
      '"npm install --install-links DIR" (a copy, with koffi) (DIR: pgfence\'s node directory)'
  );
}

const SONAME = 'libfence.so.2';
const LIBPQ_SONAME = 'libpq.so.5';
// fence.h
const ERRSTR_LEN = 256;
const MAX_TTL_MS = 100000000000;

// the places "make install" (PREFIX=/usr/local) and the Debian package put it
const DIRS = [
  '/usr/local/lib',
  '/usr/local/lib/x86_64-linux-gnu',
  '/usr/lib/x86_64-linux-gnu',
  '/usr/lib/aarch64-linux-gnu',
  '/usr/lib',
];

// The public head of fence_ctx (fence.h): the error model.  The private
// part after it is never read.
const CtxHead = koffi.struct('pgfence_ctx_head', {
  err: 'int',
  errstr: koffi.array('char', ERRSTR_LEN, 'String'),
});

// The lost callbacks (declared for the prototypes; the package passes NULL: lib/client.js says why): "arg" is declared intptr_t (a void * in fence.h, the
// same size and passing on every ABI koffi runs on), so a lease's number
// reaches JS as a number and no JS object's address ever reaches C.
const LostFn = koffi.proto('void pgfence_lost_fn(void *lease, intptr_t arg)');
const LeasesLostFn = koffi.proto('void pgfence_leases_lost_fn(void *set, void *lost, intptr_t arg)');

const PROTOTYPES = [
  'void *fence_connect_timeout(const char *url, long connect_ms, long command_ms)',
  'void fence_free(void *ctx)',
  'const char *fence_strerror(int err)',
  'int fence_set_owner_name(void *ctx, const char *name)',
  'int fence_parse_duration(const char *s, _Out_ int64_t *ms, _Out_ uint8_t *errbuf, size_t errlen)',
  'void *fence_acquire_wait(void *ctx, const char *resource, int64_t ttl_ms, int64_t wait_ms)',
  'void fence_cancel_wait(void *ctx)',
  'int fence_extend(void *ctx, void *lease, int64_t ttl_ms)',
  'int fence_release(void *ctx, void *lease)',
  'void *fence_release_acquire(void *ctx, void *old, const char *resource, int64_t ttl_ms, int64_t wait_ms, _Out_ int *released)',
  'void fence_lease_free(void *lease)',
  'const char *fence_lease_resource(void *lease)',
  'const char *fence_lease_owner(void *lease)',
  'int64_t fence_lease_token(void *lease)',
  'int64_t fence_lease_ttl(void *lease)',
  'int fence_lease_state(void *lease)',
  'int fence_heartbeat_start(void *ctx, void *lease, pgfence_lost_fn *cb, intptr_t arg)',
  'void fence_heartbeat_stop(void *lease)',
  'int fence_announce(void *ctx, void *lease, void *pg)',
  'const char *fence_pg_hint(void *ctx)',
  'void *fence_acquire_many_wait(void *ctx, const char **resources, size_t n, int64_t ttl_ms, int64_t wait_ms)',
  'size_t fence_leases_count(void *set)',
  'void *fence_leases_member(void *set, size_t i)',
  'int fence_leases_state(void *set)',
  'int fence_leases_extend(void *ctx, void *set, int64_t ttl_ms)',
  'int fence_leases_release(void *ctx, void *set)',
  'void fence_leases_free(void *set)',
  'int fence_leases_heartbeat_start(void *ctx, void *set, pgfence_leases_lost_fn *cb, intptr_t arg)',
  'void fence_leases_heartbeat_stop(void *set)',
  'int fence_leases_announce(void *ctx, void *set, void *pg)',
  // malloc'd strings: koffi frees them once read ("!")
  'char *! fence_leases_tokens(void *set)',
  'char *! fence_format_tokens(size_t n, const char **resources, const int64_t *tokens, const char **owners)',
];

const LIBPQ_PROTOTYPES = [
  'void *PQconnectdb(const char *conninfo)',
  'int PQstatus(void *conn)',
  'const char *PQerrorMessage(void *conn)',
  'void PQfinish(void *conn)',
  'void PQreset(void *conn)',
];
const CONNECTION_OK = 0;

// the reply bound (fence_set_reply_bound): libfence from this tree; a
// library without it serves every call from a worker thread
const BOUND_PROTOTYPES = [
  'int fence_set_reply_bound(void *ctx, long bound_ms)',
  'int fence_call_cut(void *ctx)',
];

let fenceLib = null;
let pqLib = null;

function candidates() {
  const env = process.env.PGFENCE_LIBFENCE;
  if (env) return [env]; // an explicit choice: that file, or nothing
  // the dynamic linker's own search first (ld.so.cache, LD_LIBRARY_PATH)
  return [SONAME, ...DIRS.map((d) => path.join(d, SONAME))];
}

// promisified koffi async calls: run on koffi's worker threads, so the
// event loop goes on while libfence waits for Redis or PostgreSQL
function asyncOf(fns) {
  const out = {};
  for (const [name, fn] of Object.entries(fns)) {
    out[name] = (...args) =>
      new Promise((resolve, reject) => {
        fn.async(...args, (err, res) => (err ? reject(err) : resolve(res)));
      });
  }
  return out;
}

// fence(): libfence.so.2, loaded and declared once; LibraryNotFoundError
// naming what to install otherwise.
function fence() {
  if (fenceLib) return fenceLib;
  const tried = [];
  let lib = null;
  let where = null;
  for (const p of candidates()) {
    try {
      lib = koffi.load(p);
      where = p;
      break;
    } catch (e) {
      tried.push(p);
    }
  }
  if (!lib) {
    throw new LibraryNotFoundError(
      `libfence.so.2 not found (${tried.join(', ')}): install the Debian package ` +
        'libfence2 (apt install libfence2), or build pgfence and run "make install" ' +
        '(into /usr/local/lib, then ldconfig); or set PGFENCE_LIBFENCE to the library\'s path'
    );
  }
  let fns;
  try {
    fns = {};
    for (const proto of PROTOTYPES) {
      const name = proto.match(/(\w+)\s*\(/)[1];
      fns[name] = lib.func(proto);
    }
  } catch (e) {
    throw new LibraryNotFoundError(
      `${where} lacks a function this package needs (${e.message}): install libfence 0.3.0 or later`
    );
  }
  let bounds = true;
  for (const proto of BOUND_PROTOTYPES) {
    try {
      fns[proto.match(/(\w+)\s*\(/)[1]] = lib.func(proto);
    } catch (e) {
      bounds = false;
    }
  }
  fenceLib = { lib, fn: fns, async: asyncOf(fns), path: where, bounds };
  return fenceLib;
}

// libpq(): libpq.so.5 (for PQconnectdb), loaded on first use.
function libpq() {
  if (pqLib) return pqLib;
  let lib;
  try {
    lib = koffi.load(LIBPQ_SONAME);
  } catch (e) {
    throw new ConfigRefusedError('libpq.so.5 not found: announcing to PostgreSQL needs libpq (apt install libpq5)');
  }
  const fns = {};
  for (const proto of LIBPQ_PROTOTYPES) {
    fns[proto.match(/(\w+)\s*\(/)[1]] = lib.func(proto);
  }
  pqLib = { fn: fns, async: asyncOf(fns) };
  return pqLib;
}

// ctxError(ctx): [err, errstr] of a context, as its last failing call left them.
function ctxError(ctx) {
  const head = koffi.decode(ctx, CtxHead);
  return [head.err, head.errstr];
}

function strerror(code) {
  return fence().fn.fence_strerror(code);
}

// formatTokens(resources, tokens, owners): fence_format_tokens, the
// fence.tokens value naming each triple.
function formatTokens(resources, tokens, owners) {
  const out = fence().fn.fence_format_tokens(
    resources.length,
    resources,
    tokens.map((t) => BigInt(t)),
    owners.map((o) => o || null)
  );
  if (out === null) throw new Error('fence_format_tokens: out of memory');
  return out;
}

module.exports = {
  koffi,
  fence,
  libpq,
  ctxError,
  strerror,
  formatTokens,
  LostFn,
  LeasesLostFn,
  CONNECTION_OK,
  MAX_TTL_MS,
  ERRSTR_LEN,
};
