// node/test/install.test.js: the package installs from the tree as a user
// would ("npm install ./node" in a project of their own: a link, whose
// dependency the package's install script installs; or a copy with
// --install-links), and its type declarations hold against TypeScript code
// that uses them (tsc).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { NODE_DIR, TOP, resource, run } = require('./helpers');

test('npm_install_from_the_tree_as_a_copy_or_a_link', async (t) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pgfence-node-install.'));
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  // the tree as a clone has it: node/ without what its .gitignore keeps
  // out of git (node_modules/, packed *.tgz).  Walked, not asked of git:
  // the platform matrix tests a copy of the tree that is not a repository.
  const ignored = (name, dir) => name === 'node_modules' || (!dir && name.endsWith('.tgz'));
  const files = [];
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(TOP, rel), { withFileTypes: true })) {
      if (ignored(e.name, e.isDirectory())) continue;
      const f = path.join(rel, e.name);
      if (e.isDirectory()) walk(f);
      else if (e.isFile()) files.push(f);
    }
  };
  walk('node');
  assert.deepEqual(fs.readFileSync(path.join(NODE_DIR, '.gitignore'), 'utf8').trim().split('\n'), ['node_modules/', '*.tgz'],
    'node/.gitignore changed: teach this walk what it now keeps out');
  assert.ok(files.includes('node/package.json') && files.includes('node/package-lock.json'));
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(scratch, 'tree', f)), { recursive: true });
    fs.copyFileSync(path.join(TOP, f), path.join(scratch, 'tree', f));
  }
  const r = resource('installed');
  const code =
    "const pgfence = require('pgfence');" +
    '(async () => { const c = await pgfence.connect();' +
    ` const t = await c.using(${JSON.stringify(r)}, { ttl: '5s' }, (l) => l.token);` +
    " await c.close(); console.log('token ' + t); })().catch((e) => { console.error(e.message); process.exit(1); });";
  const project = (name) => {
    const app = path.join(scratch, name);
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }));
    return app;
  };
  const npm = (args, cwd) => run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], { cwd });
  const tree = path.join(scratch, 'tree', 'node');

  // 1. a copy (--install-links): koffi and its prebuilt binary come from
  // the registry (or npm's cache) into the project
  const app = project('app');
  let res = await npm(['install', '--install-links', '../tree/node'], app);
  assert.equal(res.code, 0, res.err);
  assert.equal(JSON.parse(fs.readFileSync(path.join(app, 'package.json'))).dependencies.pgfence, 'file:../tree/node');
  assert.ok(fs.existsSync(path.join(app, 'node_modules', 'koffi', 'package.json')));
  res = await run(process.execPath, ['-e', code], { cwd: app });
  assert.equal(res.code, 0, res.err);
  assert.match(res.out, /^token [1-9][0-9]*$/m);

  // 2. plain "npm install DIR": a link, whose dependencies npm leaves to
  // the directory (npm 7 and 8, and the later 9s on); or a copy with its
  // dependencies beside it, as --install-links makes, where npm's
  // install-links defaults to true (the first npm 9s: Debian 12's and 13's
  // 9.2).  Either way the installed package must load and work.
  const linked = project('linked');
  res = await npm(['install', '--ignore-scripts', '../tree/node'], linked);
  assert.equal(res.code, 0, res.err);
  const asLink = fs.lstatSync(path.join(linked, 'node_modules', 'pgfence')).isSymbolicLink();
  t.diagnostic(`npm ${(await run('npm', ['--version'])).out.trim()} installs a directory as a ${asLink ? 'link' : 'copy'}`);
  res = await run(process.execPath, ['-e', code], { cwd: linked });
  if (asLink) {
    // with scripts off, pgfence says what to do ...
    assert.notEqual(res.code, 0);
    assert.match(res.err, /koffi not found.*--ignore-scripts.*npm ci --omit=dev.*--install-links/s);
  } else {
    // a copy needs no script: koffi came with it
    assert.ok(fs.existsSync(path.join(linked, 'node_modules', 'koffi', 'package.json')));
    assert.equal(res.code, 0, res.err);
  }
  // ... and as npm runs it, its install script (install.js) installs koffi
  // into the linked directory, as its lock file pins it, without the
  // tests' modules (a copy: koffi beside it, without them)
  const plain = project('plain');
  res = await npm(['install', '../tree/node'], plain);
  assert.equal(res.code, 0, res.err);
  assert.equal(fs.lstatSync(path.join(plain, 'node_modules', 'pgfence')).isSymbolicLink(), asLink,
    'one npm linked one install and copied the other');
  if (asLink) {
    assert.ok(fs.existsSync(path.join(tree, 'node_modules', 'koffi', 'package.json')));
    assert.ok(!fs.existsSync(path.join(tree, 'node_modules', 'typescript')));
  } else {
    assert.ok(fs.existsSync(path.join(plain, 'node_modules', 'koffi', 'package.json')));
    assert.ok(!fs.existsSync(path.join(plain, 'node_modules', 'typescript')));
  }
  for (const dir of [plain, linked]) {
    res = await run(process.execPath, ['-e', code], { cwd: dir });
    assert.equal(res.code, 0, res.err);
    assert.match(res.out, /^token [1-9][0-9]*$/m);
  }
});

test('typescript_declarations_check_with_tsc', async () => {
  const tsc = path.join(NODE_DIR, 'node_modules', 'typescript', 'bin', 'tsc');
  const res = await run(process.execPath, [tsc, '-p', path.join(NODE_DIR, 'tsconfig.json')], { cwd: NODE_DIR });
  assert.equal(res.code, 0, res.out + res.err);
});
