-- Settings are stored as they come, in PGOPTIONS even with bytes that the
-- database encoding does not allow; the SQL edition refuses them with
-- 22021 before anything is written: an owner stored
-- with them in fence.fences would make the restore of a dump fail at
-- COPY fences.  \setenv's '\xff' is the byte 0xff; \c forgets the
-- options of the connection before (-reuse-previous=off) and reads them
-- anew.
CREATE TABLE enc_stock (id int PRIMARY KEY, qty int);
INSERT INTO enc_stock VALUES (1, 10);
SELECT fence.protect('enc_stock', 'enc');
SELECT current_database() AS db \gset

-- fence.owner, with fence.resource and fence.token: a guarded write
\setenv PGOPTIONS '-c fence.resource=enc -c fence.token=3 -c fence.owner=w\xff'
\c -reuse-previous=off :db
UPDATE enc_stock SET qty = qty - 1;
\echo :LAST_ERROR_SQLSTATE
-- and fenced_update, which takes its owner from the same settings
SELECT fence.fenced_update('enc', 3, 'UPDATE enc_stock SET qty = qty - 1');
\echo :LAST_ERROR_SQLSTATE
-- fence.resource
\setenv PGOPTIONS '-c fence.resource=enc\xff -c fence.token=3'
\c -reuse-previous=off :db
UPDATE enc_stock SET qty = qty - 1;
\echo :LAST_ERROR_SQLSTATE
-- fence.tokens
\setenv PGOPTIONS '-c fence.tokens=enc=3/w\xff'
\c -reuse-previous=off :db
UPDATE enc_stock SET qty = qty - 1;
\echo :LAST_ERROR_SQLSTATE
SELECT fence.fenced_update('enc', 3, 'UPDATE enc_stock SET qty = qty - 1');
\echo :LAST_ERROR_SQLSTATE
\setenv PGOPTIONS '-c fence.tokens=enc\xfe=3'
\c -reuse-previous=off :db
UPDATE enc_stock SET qty = qty - 1;
\echo :LAST_ERROR_SQLSTATE
\setenv PGOPTIONS
\c -reuse-previous=off :db
-- nothing was written
SELECT qty FROM enc_stock;
SELECT count(*) FROM fence.fences WHERE resource LIKE 'enc%';

-- valid characters beyond ASCII, and backslashes, are owners like any other
\setenv PGOPTIONS '-c fence.resource=enc -c fence.token=3 -c fence.owner=w\303\251\\\\x'
\c -reuse-previous=off :db
SHOW fence.owner;
UPDATE enc_stock SET qty = qty - 1;
\setenv PGOPTIONS
\c -reuse-previous=off :db
SELECT resource, token, owner FROM fence.fences WHERE resource = 'enc';
SELECT fence.advance('enc', 4, 'caf' || chr(233));
SELECT resource, token, owner FROM fence.fences WHERE resource = 'enc';

SELECT fence.unprotect('enc_stock');
DROP TABLE enc_stock;
SELECT fence.reset('enc');
