// node/test/install.test.js: the package installs from the tree as a user
// would ("npm install ./node" in a project of their own), and its type
// declarations hold against TypeScript code that uses them (tsc).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { NODE_DIR, TOP, resource, run } = require('./helpers');

test('npm_install_from_the_tree_in_a_project_of_its_own', async (t) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pgfence-node-install.'));
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  // the tree as a clone has it: what git tracks in node/, no node_modules
  const files = (await run('git', ['-C', TOP, 'ls-files', '--cached', '--others', '--exclude-standard', 'node'])).out
    .split('\n')
    .filter((f) => f && fs.existsSync(path.join(TOP, f)));
  assert.ok(files.includes('node/package.json') && files.includes('node/package-lock.json'));
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(scratch, 'tree', f)), { recursive: true });
    fs.copyFileSync(path.join(TOP, f), path.join(scratch, 'tree', f));
  }
  const app = path.join(scratch, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  // koffi and its prebuilt binary come from the registry (or npm's cache)
  const npm = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '../tree/node'], { cwd: app });
  assert.equal(npm.code, 0, npm.err);
  const deps = JSON.parse(fs.readFileSync(path.join(app, 'package.json'))).dependencies;
  assert.equal(deps.pgfence, 'file:../tree/node');
  // a lease from the installed package, from the app's own directory
  const r = resource('installed');
  const code =
    "const pgfence = require('pgfence');" +
    '(async () => { const c = await pgfence.connect();' +
    ` const t = await c.using(${JSON.stringify(r)}, { ttl: '5s' }, (l) => l.token);` +
    " await c.close(); console.log('token ' + t); })().catch((e) => { console.error(e); process.exit(1); });";
  const use = await run(process.execPath, ['-e', code], { cwd: app });
  assert.equal(use.code, 0, use.err);
  assert.match(use.out, /^token [1-9][0-9]*$/m);
  // its koffi is the app's, not the tree's
  const where = await run(process.execPath, ['-e', "console.log(require.resolve('koffi', { paths: [require.resolve('pgfence')] }))"], { cwd: app });
  assert.ok(!where.out.startsWith(NODE_DIR), where.out);
});

test('typescript_declarations_check_with_tsc', async () => {
  const tsc = path.join(NODE_DIR, 'node_modules', 'typescript', 'bin', 'tsc');
  const res = await run(process.execPath, [tsc, '-p', path.join(NODE_DIR, 'tsconfig.json')], { cwd: NODE_DIR });
  assert.equal(res.code, 0, res.out + res.err);
});
