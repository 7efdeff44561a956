// node/test/docs.test.js: docs/node.md works as shown.
//
// Every ```js block after a "<!-- node-test -->" line runs, in order, each
// in a process of its own, as a reader would run them one after the other:
// against a fresh database with the fence extension (PGDATABASE) and the
// suite's Redis (the recipes' token counters only grow, which they allow).
// require('pgfence') finds this tree's package (NODE_PATH).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { NODE_DIR, TOP, pgClient, fenceExtension, run } = require('./helpers');

const DOC = path.join(TOP, 'docs', 'node.md');

function blocks() {
  const text = fs.readFileSync(DOC, 'utf8').split('\n');
  const found = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i].trim() === '<!-- node-test -->' && (text[i + 1] || '').startsWith('```js')) {
      let j = i + 2;
      while (!text[j].startsWith('```')) j++;
      found.push([i + 3, text.slice(i + 2, j).join('\n') + '\n']);
      i = j;
    }
  }
  return found;
}

test('docs_node_recipes_run_as_shown', async (t) => {
  await fenceExtension();
  const found = blocks();
  assert.ok(found.length >= 5, `docs/node.md marks ${found.length} blocks`);
  const admin = await pgClient();
  await admin.query('DROP DATABASE IF EXISTS node_docs');
  await admin.query('CREATE DATABASE node_docs');
  const dbc = await pgClient({ database: 'node_docs' });
  await dbc.query('CREATE EXTENSION fence');
  await dbc.end();
  const modules = fs.mkdtempSync(path.join(os.tmpdir(), 'pgfence-node-docs.'));
  fs.symlinkSync(NODE_DIR, path.join(modules, 'pgfence'));
  t.after(async () => {
    fs.rmSync(modules, { recursive: true, force: true });
    await admin.query('DROP DATABASE IF EXISTS node_docs');
    await admin.end();
  });
  const env = { ...process.env, PGDATABASE: 'node_docs', NODE_PATH: modules };
  for (const [line, code] of found) {
    // unhandled rejections end the process with a failure, as they would for a reader
    const res = await run(process.execPath, ['-e', code], { cwd: NODE_DIR, env });
    process.stdout.write(res.out);
    assert.equal(res.code, 0, `docs/node.md line ${line}:\n${res.out}${res.err}`);
  }
});
