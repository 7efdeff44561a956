-- qlock.lua: a quorum node's lock, and its counter (fence protocol 1;
-- PROTOCOL.md)
-- KEYS: fence:{T}:lock, fence:{T}:token, fence:{T}:queue, fence:{T}:alive
-- ARGV: the attempt's owner id "ID.N" (the queue knows the waiter as ID),
--       TTL in ms, how as in acquire.lua, optionally "/CLAIM" after it
--       ("1/42"): a token to raise the counter to where the lock is taken
-- Reply: {1, counter} lock taken, {1, counter, 1} taken and raised to
--        CLAIM, {0, counter, PTTL} another owner holds it; the counter is a
--        bulk string ("0" when missing) as read before the script wrote.
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
local Q, A = KEYS[3], KEYS[4]
local w = string.match(ARGV[1], '^[^.]*')
local how, t = string.match(ARGV[3], '^([012])/?(%d*)$')
if not how then return redis.error_reply('ERR bad quorum lock mode') end
local held = redis.call('GET', KEYS[1])
local c = cur or '0'
if not held or held == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if how ~= '0' and redis.call('EXISTS', Q) == 1 then
    redis.call('ZREM', Q, w)
    redis.call('ZREM', A, w)
  end
  if string.match(t, '^[1-9]%d*$') and #t <= 19 and
     (not cur or #cur < #t or (#cur == #t and cur < t)) then
    redis.call('SET', KEYS[2], t)
    return {1, c, 1}
  end
  return {1, c}
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl < 0 then return redis.error_reply('FENCESTATE lock has no expiry') end
if how ~= '0' then
-- shared block "queue" begins: these lines are the same bytes in acquire.lua,
-- release.lua and qlock.lua (client/test/lua_shared.sh checks): edit all three
local function now_ms()
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000)
end
local function prune(now)
  local gone = redis.call('ZRANGEBYSCORE', A, '-inf', now)
  for i = 1, #gone do redis.call('ZREM', Q, gone[i]) end
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', A, '-inf', now) end
end
local function first()
  return redis.call('ZRANGE', Q, 0, 0)[1]
end
local function join(o, now)
  if not redis.call('ZSCORE', Q, o) then
    local last = redis.call('ZRANGE', Q, -1, -1, 'WITHSCORES')
    redis.call('ZADD', Q, last[2] and last[2] + 1 or 1, o)
  end
  redis.call('ZADD', A, now + 2000, o)
  redis.call('PEXPIRE', Q, 2000)
  redis.call('PEXPIRE', A, 2000)
end
local function leave(o)
  redis.call('ZREM', Q, o)
  redis.call('ZREM', A, o)
end
local function wake(o)
  local k = string.sub(KEYS[1], 1, -5) .. 'wake:' .. o
  redis.pcall('LPUSH', k, '1')
  redis.pcall('PEXPIRE', k, 200)
end
local function hand(o)
  leave(o)
  redis.call('SET', KEYS[1], o, 'PX', 200)
  wake(o)
end
-- shared block "queue" ends
  if how == '1' then
    join(w, now_ms())
  else
    leave(w)
  end
end
return {0, c, pttl}
