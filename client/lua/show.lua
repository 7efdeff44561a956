-- show.lua: what "fence show" reads (fence protocol 1; PROTOCOL.md)
-- KEYS: fence:{T}:lock, fence:{T}:token
-- ARGV: none
-- Reply: {owner id or nil, PTTL of the lock (-2 none), counter or nil}
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]),
        redis.call('GET', KEYS[2])}
