\echo Use "CREATE EXTENSION bench_noop_trigger" to load this file. \quit

CREATE FUNCTION bench_noop_trigger() RETURNS trigger
AS 'MODULE_PATHNAME', 'bench_noop_trigger'
LANGUAGE C;
COMMENT ON FUNCTION bench_noop_trigger() IS
    'Returns the new row unchanged: the cost of calling a C row trigger at all';
