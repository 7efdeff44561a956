-- Resource names: any non-empty text up to 1024 bytes, compared exactly.

SELECT fence.advance('', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance(' ', 1);
SELECT fence.advance('with ''quotes'' and "double" and \backslash', 1);
SELECT fence.advance('ünïcødé ✓ 鎖', 1);
SELECT fence.advance('ÜNÏCØDÉ ✓ 鎖', 2);
SELECT fence.advance('ünïcødé ✓ 鎖', 1);
SELECT fence.advance('{braces}:and:colons', 1);
SELECT fence.advance(E'tab\there', 1);
-- no Unicode normalization: precomposed and combining forms are two names
SELECT fence.advance(U&'caf\00E9', 1);
SELECT fence.advance(U&'cafe\0301', 1);

-- 1024 bytes work, 1025 and 10 kB are refused with a clear error
SELECT fence.advance(repeat('r', 1024), 1);
SELECT fence.advance(repeat('r', 1025), 1);
\echo :LAST_ERROR_SQLSTATE
SELECT fence.advance(repeat('é', 5000), 1);
SELECT fence.fenced_update(repeat('r', 10240), 1, 'SELECT 1');
-- multibyte characters count by bytes
SELECT fence.advance(repeat('é', 512), 1);

-- names differ by case, whitespace and normalization
SELECT left(resource, 24) AS resource, octet_length(resource) AS bytes, token
  FROM fence.fences ORDER BY resource COLLATE "C";
DELETE FROM fence.fences;
