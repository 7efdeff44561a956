-- A malformed fence.tokens is refused with 22023 and a detail that says
-- where, before any write under it lands.  The C extension refuses it when
-- it is set; the SQL edition, whose fence.tokens is a placeholder setting
-- that takes any value, when a guard or fenced_update reads it.  Each case
-- sets the value and writes in one block, so both editions print the same;
-- a write that lands is rolled back with its block, so that each case
-- starts from the same state.
CREATE TABLE tr_t (id int PRIMARY KEY, v int);
INSERT INTO tr_t VALUES (1, 0);
SELECT fence.protect('tr_t', 'tr');
SELECT fence.advance('tr', 5);
CREATE FUNCTION tr_try(value text, how text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    state text;
    msg text;
    detail text;
BEGIN
    PERFORM set_config('fence.tokens', value, true);
    IF how = 'guard' THEN
        UPDATE tr_t SET v = v + 1;
    ELSE
        PERFORM fence.fenced_update('tr', 5, 'UPDATE tr_t SET v = v + 1');
    END IF;
    RAISE EXCEPTION 'written' USING ERRCODE = 'TR000';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
    IF state = 'TR000' THEN
        RETURN 'written';
    END IF;
    RETURN state || ': ' || msg || COALESCE(E'\n' || NULLIF(detail, ''), '');
END
$$;

-- The values, and what the server must make of them, are in
-- test/tokens_vectors.txt, which the client's C tests read too: the
-- refused ones (22023 and the file's detail), then the well-formed ones.
\set vectors `cat "${FENCE_TOKENS_VECTORS:-../test/tokens_vectors.txt}"`
CREATE TEMP TABLE tr_vectors AS
SELECT n, split_part(line, E'\t', 1) AS value, split_part(line, E'\t', 2) AS expected
  FROM regexp_split_to_table(:'vectors', E'\n') WITH ORDINALITY AS l(line, n)
 WHERE line <> '' AND line NOT LIKE '#%';
SELECT value, outcome,
       outcome LIKE '22023: %' AND split_part(outcome, E'\n', 2) = substr(expected, 2) AS as_filed
  FROM (SELECT n, value, expected, tr_try(value, 'guard') AS outcome
          FROM tr_vectors WHERE expected LIKE '!%') AS t
 ORDER BY n;
-- a name over 1024 bytes
SELECT replace(tr_try('x=1,' || repeat('r', 1025) || '=1', 'guard'), repeat('r', 1025), 'r...r') AS outcome;
-- fenced_update reads it for the owner of its resource
SELECT tr_try('a=1,b', 'fenced_update') AS outcome;
-- well-formed values: a write under them is fenced by their entry
SELECT value, outcome, outcome NOT LIKE '22023: %' AS as_filed
  FROM (SELECT n, value, tr_try(value, 'guard') AS outcome
          FROM tr_vectors WHERE expected LIKE '=%') AS t
 ORDER BY n;
SELECT v AS value, tr_try(v, 'fenced_update') AS outcome
  FROM unnest(ARRAY['', 'tr=5/w', 'tr=9/w']) AS v;
SELECT v FROM tr_t;
DROP TABLE tr_vectors;
DROP FUNCTION tr_try(text, text);
DROP TABLE tr_t;
SELECT fence.reset('tr');
