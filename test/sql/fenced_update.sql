-- fence.fenced_update: check-and-advance, then one statement with its
-- parameters bound by type, all in the caller's transaction.

CREATE TABLE stock (id int PRIMARY KEY, sku text, qty int NOT NULL,
                    price numeric, seen timestamptz, tags text[], doc jsonb);
INSERT INTO stock VALUES (1, 'widget', 10, 2.50, NULL, NULL, NULL),
                         (2, 'gadget', 20, 9.99, NULL, NULL, NULL);

-- no parameters: the three-argument form
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = qty - 1');
-- one to many parameters of several types
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = $1 WHERE id = 1', 5);
SELECT fence.fenced_update('stock', 1,
    'UPDATE stock SET qty = $1, price = $2, seen = $3, tags = $4, doc = $5 WHERE sku = $6',
    7, 3.25::numeric, '2026-01-02 03:04:05+00'::timestamptz, ARRAY['a', 'b'],
    '{"k": [1, 2]}'::jsonb, 'gadget'::text);
SELECT id, sku, qty, price, seen, tags, doc FROM stock ORDER BY id;
-- a bigint and a smallint bind as themselves
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = $1 + $2 WHERE id = 1',
    3::bigint, 2::smallint);
-- an untyped literal, text or varchar takes the type the statement gives it
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET sku = $1 WHERE id = 1', 'sprocket');
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = $1 WHERE id = 1', '4');
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = $1::int WHERE id = 1', '4');
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = qty - 1 WHERE id = $1', '1');
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = $1 + 1 WHERE id = $2', '2'::text, '1'::varchar);
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET price = $1, seen = $2 WHERE id = $3',
    '1.5', '2026-05-06 07:08:09+00', 1);
SELECT id, sku, qty, price, seen FROM stock WHERE id = 1;
-- typed arguments keep their types next to inferred ones
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = $1 WHERE sku = $2', 6, 'sprocket');
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = $1 WHERE id = 1', 2.7::numeric);
SELECT qty FROM stock WHERE id = 1;
-- a parameter the statement leaves untyped stays text
SELECT fence.fenced_update('stock', 1, 'SELECT $1 || $2', 'a', 'b');
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = $1 WHERE id = 1', '6', 'unused');
-- text that does not fit the inferred type is refused, naming the parameter
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = $2 WHERE id = $1', '1', 'many');
-- parameters of the outer call without types, as node-postgres and pgbench
-- -M prepared send them (they resolve to the VARIADIC text[] overload)
PREPARE untyped AS SELECT fence.fenced_update($1, $2, $3, $4, $5);
EXECUTE untyped('stock', '1', 'UPDATE stock SET qty = qty + $1 WHERE id = $2', '10', '1');
EXECUTE untyped('stock', 1, 'UPDATE stock SET qty = qty + $1 WHERE sku = $2', 1, 'sprocket');
SELECT qty FROM stock WHERE id = 1;
SELECT parameter_types FROM pg_prepared_statements WHERE name = 'untyped';
DEALLOCATE untyped;
-- a typed outer parameter keeps the "any" overload
PREPARE typed(text, bigint, text, int, int) AS SELECT fence.fenced_update($1, $2, $3, $4, $5);
EXECUTE typed('stock', 1, 'UPDATE stock SET qty = $1 WHERE id = $2', 8, 1);
DEALLOCATE typed;
SELECT qty FROM stock WHERE id = 1;
-- NULL parameters, typed and untyped
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET price = $1 WHERE id = 2', NULL::numeric);
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET sku = $1 WHERE id = 2', NULL);
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = $1 WHERE id = 2', NULL::int);
-- VARIADIC with an explicit array
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = $1 WHERE id = $2',
    VARIADIC ARRAY[9, 2]);
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = 1', VARIADIC NULL::int[]);
SELECT id, sku, qty, price FROM stock ORDER BY id;

-- rows processed: zero, several, RETURNING, INSERT, DELETE, SELECT
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = qty WHERE id = 99');
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = qty + 1 RETURNING id');
SELECT fence.fenced_update('stock', 1, 'INSERT INTO stock (id, qty) VALUES ($1, 0), ($2, 0)', 3, 4);
SELECT fence.fenced_update('stock', 1, 'DELETE FROM stock WHERE id > $1', 2);
SELECT fence.fenced_update('stock', 1, 'SELECT * FROM stock');
SELECT fence.fenced_update('stock', 1,
    'WITH d AS (UPDATE stock SET qty = qty + 1 RETURNING id) SELECT count(*) FROM d');
SELECT fence.fenced_update('stock', 1,
    'MERGE INTO stock s USING (VALUES (1)) v(id) ON s.id = v.id WHEN MATCHED THEN UPDATE SET qty = 0');

-- a stale token writes nothing
SELECT fence.advance('stock', 2);
SELECT fence.fenced_update('stock', 1, 'UPDATE stock SET qty = 1000');
\echo :LAST_ERROR_SQLSTATE
SELECT max(qty) FROM stock;

-- a query that is not one DML statement is refused before the mark moves
SELECT fence.fenced_update('stock', 3, 'UPDATE stock SET qty = 1; UPDATE stock SET qty = 2');
SELECT fence.fenced_update('stock', 3, '');
SELECT fence.fenced_update('stock', 3, 'DROP TABLE stock');
SELECT fence.fenced_update('stock', 3, 'COMMIT');
SELECT fence.fenced_update('stock', 3, 'UPDATE stock SET');
SELECT fence.fenced_update('stock', 3, 'UPDATE stock SET qty = $2', 1);
-- ... also one that creates a table: CREATE TABLE AS, and SELECT ... INTO,
-- whose tag is SELECT (0.2.0 ran SELECT ... INTO)
SELECT fence.fenced_update('stock', 3, 'CREATE TABLE stock_copy AS SELECT * FROM stock');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update('stock', 3, 'SELECT * INTO stock_copy FROM stock');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update('stock', 3, 'SELECT qty INTO TEMP stock_copy FROM stock WHERE id = $1', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT to_regclass('stock_copy') AS copy;
SELECT token FROM fence.fences WHERE resource = 'stock';

-- a query that fails rolls back the advance with it
SELECT fence.fenced_update('stock', 3, 'UPDATE stock SET qty = NULL');
SELECT fence.fenced_update('stock', 3, 'UPDATE stock SET qty = $1', 'many');
SELECT fence.fenced_update('stock', 3, 'UPDATE stock SET qty = 1 / 0');
SELECT token FROM fence.fences WHERE resource = 'stock';
SELECT max(qty) FROM stock;

-- NULL arguments
SELECT fence.fenced_update('stock', NULL, 'UPDATE stock SET qty = 1');
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update(NULL, 3, 'UPDATE stock SET qty = 1');
SELECT fence.fenced_update('stock', 3, NULL);
SELECT fence.fenced_update('stock', 3, NULL, 1);

-- the statement runs with the caller's privileges, not the extension's
CREATE ROLE regress_fence_writer;
GRANT EXECUTE ON FUNCTION fence.fenced_update(text, bigint, text, "any") TO regress_fence_writer;
GRANT SELECT ON stock TO regress_fence_writer;
SET ROLE regress_fence_writer;
SELECT fence.fenced_update('stock', 4, 'UPDATE stock SET qty = $1', 1);
SELECT fence.fenced_update('stock', 4, 'SELECT count(*) FROM fence.fences WHERE token > $1', 0);
SELECT fence.fenced_update('stock', 4, 'SELECT count(*) FROM stock WHERE id = $1', 1);
RESET ROLE;
SELECT token FROM fence.fences WHERE resource = 'stock';
REVOKE ALL ON stock FROM regress_fence_writer;
REVOKE ALL ON FUNCTION fence.fenced_update(text, bigint, text, "any") FROM regress_fence_writer;
DROP ROLE regress_fence_writer;

-- plans are kept per backend: DDL in between is picked up, and the same
-- text with other parameter types is planned separately
SELECT fence.fenced_update('stock', 5, 'UPDATE stock SET qty = $1 WHERE id = 1', 11);
ALTER TABLE stock ADD COLUMN note text;
SELECT fence.fenced_update('stock', 5, 'UPDATE stock SET qty = $1 WHERE id = 1', 12);
SELECT fence.fenced_update('stock', 5, 'UPDATE stock SET qty = $1 WHERE id = 1', 13::bigint);
SELECT fence.fenced_update('stock', 5, 'UPDATE stock SET note = $1 WHERE id = 1', 14);
-- an inferred type follows a column whose type changed
SELECT fence.fenced_update('stock', 5, 'UPDATE stock SET note = $1 WHERE id = 1', '15');
ALTER TABLE stock ALTER COLUMN note TYPE int USING note::int;
SELECT fence.fenced_update('stock', 5, 'UPDATE stock SET note = $1 + 1 WHERE id = 1', '15');
SELECT fence.fenced_update('stock', 5, 'UPDATE stock SET note = $1 WHERE id = 1', '16');
SELECT note, pg_typeof(note) FROM stock WHERE id = 1;
ALTER TABLE stock ALTER COLUMN note TYPE numeric;
SELECT fence.fenced_update('stock', 5, 'UPDATE stock SET note = $1 WHERE id = 1', '16.5');
SELECT note FROM stock WHERE id = 1;
-- more distinct statements than the cache holds
SELECT sum(fence.fenced_update('stock', 5, format('UPDATE stock SET qty = %s WHERE id = 1', i)))
  FROM generate_series(1, 40) AS i;
SELECT id, qty FROM stock WHERE id = 1;

-- search_path is resolved at each call, like a plain statement
CREATE SCHEMA other;
CREATE TABLE other.stock (id int, qty int);
INSERT INTO other.stock VALUES (1, 0);
SET search_path = other, public;
SELECT fence.fenced_update('stock', 5, 'UPDATE stock SET qty = $1 WHERE id = 1', 77);
RESET search_path;
SELECT 'other' AS schema, qty FROM other.stock UNION ALL SELECT 'public', qty FROM stock WHERE id = 1;
DROP SCHEMA other CASCADE;
-- ... and so are the types it gives untyped parameters: the same text
-- under another search_path names another table, whose column has another
-- type, and each path keeps its own plan
CREATE SCHEMA sp_int;
CREATE SCHEMA sp_text;
CREATE TABLE sp_int.box (id int, v int);
CREATE TABLE sp_text.box (id int, v text);
INSERT INTO sp_int.box VALUES (1, 0);
INSERT INTO sp_text.box VALUES (1, '');
SET search_path = sp_int;
SELECT fence.fenced_update('stock', 5, 'UPDATE box SET v = $1 WHERE id = 1', '42');
SET search_path = sp_text;
SELECT fence.fenced_update('stock', 5, 'UPDATE box SET v = $1 WHERE id = 1', 'forty-two');
SET search_path = sp_int;
SELECT fence.fenced_update('stock', 5, 'UPDATE box SET v = $1 WHERE id = 1', '43');
-- the same setting resolves to other schemas once a schema in it exists
SET search_path = sp_late, sp_int;
SELECT fence.fenced_update('stock', 5, 'UPDATE box SET v = $1 WHERE id = 1', '44');
CREATE SCHEMA sp_late;
CREATE TABLE sp_late.box (id int, v numeric);
INSERT INTO sp_late.box VALUES (1, 0);
SELECT fence.fenced_update('stock', 5, 'UPDATE box SET v = $1 WHERE id = 1', '4.5');
RESET search_path;
SELECT 'int' AS schema, v::text, pg_typeof(v) FROM sp_int.box
UNION ALL SELECT 'text', v::text, pg_typeof(v) FROM sp_text.box
UNION ALL SELECT 'late', v::text, pg_typeof(v) FROM sp_late.box;
DROP SCHEMA sp_int, sp_text, sp_late CASCADE;

DROP TABLE stock;
DELETE FROM fence.fences;
