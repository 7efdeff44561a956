-- heal.lua: raise the counter to PostgreSQL's mark, take the next token
-- (fence protocol 1; PROTOCOL.md)
-- KEYS: fence:{T}:lock, fence:{T}:token
-- ARGV: owner id, mark (a canonical positive decimal: fence.mark(R))
-- Reply: the new token as a bulk string of digits (never lowered: above
--        the mark and the counter); 0 (integer) when the lock is not the
--        caller's; an error "FENCESTATE ..." for a counter fence never
--        wrote, or INCR's overflow error at 2^63-1.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
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
local mark = ARGV[2]
if not cur or #cur < #mark or (#cur == #mark and cur < mark) then
  redis.call('SET', KEYS[2], mark)
end
local r = redis.pcall('INCR', KEYS[2])
if type(r) == 'table' and r.err then return r end
return redis.call('GET', KEYS[2])
