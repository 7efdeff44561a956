-- extend.lua: compare-and-PEXPIRE (fence protocol 1; PROTOCOL.md)
-- KEYS: fence:{T}:lock
-- ARGV: owner id, TTL in ms
-- Reply: 1 extended to the TTL from now, 0 the lock is not the caller's.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
