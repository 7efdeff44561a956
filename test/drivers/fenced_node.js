// test/drivers/fenced_node.js: fence.fenced_update from node-postgres, which
// sends every parameter untyped (as text); no casts in the SQL.
//
//     node fenced_node.js
//     node fenced_node.js probe plain
//
// Connects with the PG* environment variables.  DRV_RESOURCE, DRV_TOKEN and
// DRV_STALE as in fenced_python.py.  Exit 0 when the first write updated one
// row and the second was refused with LF001.  "probe", under "fence run":
// one guarded write as in fenced_python.py, printing "write=ok" or
// "write=SQLSTATE" (node-postgres reads PGOPTIONS, so "plain" is all it
// needs).
'use strict';
const { Client } = require('pg');

const SQL = 'SELECT fence.fenced_update($1, $2, $3, $4, $5, $6) AS rows';
const QUERY = 'UPDATE drv_stock SET qty = qty - $1 WHERE sku = $2 AND id = $3';
const resource = process.env.DRV_RESOURCE;
const token = Number(process.env.DRV_TOKEN);
const stale = Number(process.env.DRV_STALE);

async function main() {
	const client = new Client();
	await client.connect();
	try {
		const res = await client.query(SQL, [resource, token, QUERY, 1, 'widget', 7]);
		const rows = Number(res.rows[0].rows);
		if (rows !== 1)
			throw new Error(`accepted write updated ${rows} rows, expected 1`);
		let sqlstate = null;
		try {
			await client.query(SQL, [resource, stale, QUERY, 1, 'widget', 7]);
		} catch (e) {
			sqlstate = e.code;
		}
		if (sqlstate !== 'LF001')
			throw new Error(`stale write: SQLSTATE ${sqlstate}, expected LF001`);
		console.log(`ok: 1 row with token ${token}, LF001 with token ${stale}`);
	} finally {
		await client.end();
	}
}

async function probe() {
	const client = new Client();
	await client.connect();
	try {
		await client.query('BEGIN');
		await client.query("UPDATE drv_guard SET n = n + 1, " +
			"token_seen = current_setting('fence.token', true) WHERE driver = $1",
			[process.env.PROBE_DRIVER]);
		await client.query('COMMIT');
		console.log('write=ok');
	} catch (e) {
		if (!e.code)
			throw e;
		console.log(`write=${e.code}`);
	} finally {
		await client.end();
	}
}

(process.argv[2] === 'probe' ? probe() : main()).catch((e) => {
	console.error(e.message);
	process.exit(1);
});
