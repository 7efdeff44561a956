-- release.lua: compare-and-delete, and hand over (fence protocol 1; PROTOCOL.md)
-- KEYS: fence:{T}:lock (the queue's keys are built from it: same tag)
-- ARGV: owner id, hand: "1" give the lock to the first waiter for 200 ms
--       and wake it (one master), "0" only wake it (a quorum's node)
-- Reply: 1 released, 0 the lock is not the caller's (nothing touched).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local pre = string.sub(KEYS[1], 1, -5)
local Q, A = pre .. 'queue', pre .. 'alive'
local ok, waiting = pcall(redis.call, 'EXISTS', Q)
if not ok or waiting == 0 then
  redis.call('DEL', KEYS[1])
  return 1
end
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
-- the lock is deleted unless it is handed over (SET overwrites it): a
-- queue in a state fence never writes only loses the handover
local handed = false
pcall(function()
  prune(now_ms())
  local head = first()
  if head and ARGV[2] == '1' then
    hand(head)
    handed = true
  elseif head then
    wake(head)
  end
end)
if not handed then redis.call('DEL', KEYS[1]) end
return 1
