-- qclaim.lua: a quorum node's claim of a token (fence protocol 1;
-- PROTOCOL.md)
-- KEYS: fence:{T}:lock, fence:{T}:token
-- ARGV: the attempt's owner id, token (canonical decimal)
-- Reply: {1} raised, {0} the lock is not the caller's, {2, counter} the
--        counter is at or above the token already.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end
-- shared block "counter" begins: these lines are the same bytes in heal.lua,
-- qclaim.lua and qlock.lua (client/test/lua_shared.sh checks): edit all three
-- GET refuses every type but a string; only then is TYPE asked which
-- (one call, not two, on every run: the counter is sound almost always)
local cur = redis.pcall('GET', KEYS[2])
if type(cur) == 'table' then
  return redis.error_reply('FENCESTATE token counter is a ' ..
    redis.call('TYPE', KEYS[2])['ok'] .. ', not a string')
end
if cur and (not string.match(cur, '^[1-9]%d*$') or #cur > 19 or
   (#cur == 19 and cur > '9223372036854775807')) then
  return redis.error_reply('FENCESTATE token counter is not a positive integer')
end
-- shared block "counter" ends
local t = ARGV[2]
if not cur or #cur < #t or (#cur == #t and cur < t) then
  redis.call('SET', KEYS[2], t)
  return {1}
end
return {2, cur}
