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

SELECT v AS value, tr_try(v, 'guard') AS outcome
  FROM unnest(ARRAY['a', 'a=', 'a=12abc', 'a=1.5', 'a=9223372036854775808',
                    'a=-99999999999999999999', '=5', '""=5', 'a=1,,b=2', 'a=1,',
                    ',a=1', 'a=1/', 'a=1/""', 'a"b=1', 'a\b=1', '"ab=1', '"ab"x=1',
                    'a =1', 'a=1/ o', 'a=1 2', 'a=1 /o', 'a=1/"o"x', 'a=1/o"',
                    'a=1/o\', 'a=1,a=2', 'a=1/o1,a=1/o2', 'a=1/o1,a=1',
                    'tr=5,"a""=1', 'tr=5, x=1,y', 'tr=-',
                    -- every entry is read before a resource named twice is refused
                    'a=1,a=2,,', 'a=1,a=2,b', 'a=1/o,b=2,a=1']) AS v;
-- a name over 1024 bytes
SELECT replace(tr_try('x=1,' || repeat('r', 1025) || '=1', 'guard'), repeat('r', 1025), 'r...r') AS outcome;
-- fenced_update reads it for the owner of its resource
SELECT tr_try('a=1,b', 'fenced_update') AS outcome;
-- well-formed values: a write under them is fenced by their entry
SELECT v AS value, tr_try(v, 'guard') AS outcome
  FROM unnest(ARRAY['', '  ', 'tr=5', ' tr=5 ', 'a=1/o,a=1/o,tr=5', '"tr"=5/"w/x:y=z"',
                    'tr=5/w/x:y=z', 'a=-1, tr=5', 'tr=4', 'tr=0', 'b=7']) AS v;
SELECT v AS value, tr_try(v, 'fenced_update') AS outcome
  FROM unnest(ARRAY['', 'tr=5/w', 'tr=9/w']) AS v;
SELECT v FROM tr_t;
DROP FUNCTION tr_try(text, text);
DROP TABLE tr_t;
SELECT fence.reset('tr');
