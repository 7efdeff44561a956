// pgfence/install.js: the package's install script.  It installs the
// package's own dependency (koffi, as package-lock.json pins it) into this
// directory when npm installed the directory as a link, and does nothing
// otherwise.
//
// "npm install /path/to/pgfence/node" from a project of one's own makes
// node_modules/pgfence a symbolic link to the directory, by design without
// installing the directory's dependencies (npm's documentation of "npm
// install <folder>": a folder outside the project's root is linked, not
// installed); "install-links", which would make it a copy, is read only
// from the command line, the environment and the npmrc files of the user
// and the project, not from the package being installed (docs/node.md,
// "Install").  Node.js resolves a linked package's require() from the
// link's target, so koffi must then be in the target's own node_modules:
// this script puts it there with "npm ci --omit=dev", as a user would have
// to by hand.  When npm installed a copy (from a tarball, the registry or
// "--install-links") or the dependencies are already there (npm ci in this
// tree), koffi resolves from here and nothing is done.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const here = __dirname;

function resolvable() {
  try {
    require.resolve('koffi', { paths: [here] });
    return true;
  } catch (e) {
    if (e.code === 'MODULE_NOT_FOUND') return false;
    throw e;
  }
}

if (resolvable()) process.exit(0);

// The outer npm's settings reach a script as npm_config_* variables; the
// ones that say where and what to install (local_prefix is the project
// that installs pgfence, omit and include its choices) must not steer the
// inner npm, which installs into this directory.  Keep those that say how
// to reach the registry.
const KEEP = /^npm_config_(cache|registry|userconfig|globalconfig|prefer_offline|prefer_online|offline|proxy|https_proxy|http_proxy|noproxy|no_proxy|ca|cafile|cert|key|strict_ssl|fetch_[a-z_]+|maxsockets|loglevel|@.*|\/\/.*)$/i;
const env = {};
for (const [k, v] of Object.entries(process.env)) {
  if (/^npm_/i.test(k) && !KEEP.test(k)) continue;
  if (k === 'INIT_CWD') continue;
  env[k] = v;
}

const npmCli = process.env.npm_execpath;
const [cmd, pre] = npmCli && /\.[cm]?js$/.test(npmCli) ? [process.execPath, [npmCli]] : ['npm', []];
const locked = fs.existsSync(path.join(here, 'package-lock.json'));
const args = [
  ...pre,
  ...(locked ? ['ci'] : ['install', '--no-save']),
  '--omit=dev',
  '--ignore-scripts', // koffi's binary comes in a package of its own; and not this script again
  '--no-audit',
  '--no-fund',
];
process.stderr.write(`pgfence: installed as a link to ${here}: installing its dependency (koffi) there (npm ${args.slice(pre.length).join(' ')})\n`);
const r = spawnSync(cmd, args, { cwd: here, env, stdio: 'inherit' });
if (r.status !== 0 || !resolvable()) {
  process.stderr.write(
    `pgfence: could not install koffi into ${here} (${r.error ? r.error.message : `npm exited with ${r.status}`}): ` +
      'run "npm ci --omit=dev" there, or install pgfence with "npm install --install-links DIR" (a copy)\n'
  );
  process.exit(1);
}
