-- acquire.lua: take the lock, then a token (fence protocol 1; PROTOCOL.md)
-- KEYS: fence:{T}:lock, fence:{T}:token, fence:{T}:queue, fence:{T}:alive
-- ARGV: owner id, TTL in ms, how: "0" try once (no place in the queue),
--       "1" wait (take or keep a place), "2" last attempt of a wait (give
--       the place up unless the lock is had)
-- Reply: the token, an integer below 2^53, else a bulk string of digits;
--        {PTTL} (an array of one integer) when the lock is not the
--        caller's now: the ms the holder (or a waiter it was handed to)
--        still has; an error "FENCESTATE ..." when the keys hold what fence
--        never writes.
-- A free lock goes to the first waiter (handed: SET for 200 ms, wake list
-- pushed); the queue's functions below are written into acquire.lua,
-- release.lua and qlock.lua alike.
-- The counter is checked only where INCR cannot vouch for it: INCR refuses
-- a key of another type, a value that is not a canonical 64-bit integer and
-- an overflow, but takes a value <= 0 (a result <= 1: see below).  The
-- fast path (no queue, lock free) therefore reads nothing before INCR; a
-- path that may write to the queue checks first, so that a refusal leaves
-- every key as it was.  EXISTS counts the counter twice: one call tells
-- whether the queue exists (odd) and whether the counter does (>= 2).
local function bad_counter()
  local cur = redis.pcall('GET', KEYS[2])
  if type(cur) == 'table' then
    return redis.error_reply('FENCESTATE token counter is a ' ..
      redis.call('TYPE', KEYS[2])['ok'] .. ', not a string')
  end
  if not cur then return nil end
  if not string.match(cur, '^[1-9]%d*$') or #cur > 19 or
     (#cur == 19 and cur > '9223372036854775807') then
    return redis.error_reply('FENCESTATE token counter is not a positive integer')
  end
  return nil
end
local Q, A = KEYS[3], KEYS[4]
local n = redis.call('EXISTS', Q, KEYS[2], KEYS[2])
local waiting, counted = n % 2 == 1, n >= 2
if waiting or not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local bad = bad_counter()
  if bad then return bad end
  local held = redis.pcall('GET', KEYS[1])
  if type(held) == 'table' then
    return redis.error_reply('FENCESTATE lock is a ' ..
      redis.call('TYPE', KEYS[1])['ok'] .. ', not a string')
  end
  local pttl = 0
  if held and held ~= ARGV[1] then
    pttl = redis.call('PTTL', KEYS[1])
    if pttl < 0 then return redis.error_reply('FENCESTATE lock has no expiry') end
  end
  if held == ARGV[1] then
    -- ours already (handed to this waiter by a release, or taken before):
    -- only out of the queue, should it still be there
    if waiting then redis.call('ZREM', Q, ARGV[1]); redis.call('ZREM', A, ARGV[1]) end
  elseif not waiting and ARGV[3] ~= '1' then
    return {pttl}
  else
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
    local now, head = now_ms(), nil
    if waiting then
      prune(now)
      head = first()
    end
    if held ~= ARGV[1] and (held or (head and head ~= ARGV[1])) then
      if not held then
        hand(head)
        pttl = 200
      end
      if ARGV[3] == '1' then
        join(ARGV[1], now)
      elseif ARGV[3] == '2' and waiting then
        leave(ARGV[1])
      end
      return {pttl}
    end
    if head then leave(ARGV[1]) end
  end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
local r = redis.pcall('INCR', KEYS[2])
if type(r) == 'table' and r.err then
  -- the counter is unchanged; say why as the check above would, else it
  -- is the overflow of a counter at 2^63-1
  redis.call('DEL', KEYS[1])
  return bad_counter() or r
end
-- A result <= 0 came from a negative counter, 1 from a missing one or
-- from "0": undo the step (DECR restores the value and keeps its TTL)
-- and the lock, which was free (only the fast path can get here).
if r < 1 or (r == 1 and counted) then
  redis.call('DECR', KEYS[2])
  redis.call('DEL', KEYS[1])
  return redis.error_reply('FENCESTATE token counter is not a positive integer')
end
if r < 9007199254740992 then return r end
return redis.call('GET', KEYS[2])
