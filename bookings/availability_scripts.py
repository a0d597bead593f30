"""The Lua scripts of the hold filters (bookings.availability), each one atomic in Redis."""

import functools
import hashlib

# A counter is a hash: n = units left that nobody has taken, pending = units taken by holds
# still running in PostgreSQL, at = when it was last rebuilt (ms).  It refuses only when n is
# short *and* nothing is pending: a pending hold may yet fail and give its units back, so
# while one runs a short counter lets the request through to PostgreSQL instead.
#
# KEYS[1] counter; ARGV[1] units -> {1, at} taken | {0, at, pending} short | {-1} missing
TAKE = """
local n = redis.call('HGET', KEYS[1], 'n')
if not n then return {-1} end
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or '0')
local units = tonumber(ARGV[1])
if tonumber(n) < units then
  return {0, at, tonumber(redis.call('HGET', KEYS[1], 'pending') or '0')}
end
redis.call('HINCRBY', KEYS[1], 'n', -units)
redis.call('HINCRBY', KEYS[1], 'pending', units)
return {1, at}
"""
# KEYS[1] counter; ARGV units, dn (0/1: give n back), dpending (0/1: no longer pending), take
# (0/1: a hold let through untracked has won: n goes down, floored at 0).  Never creates the
# counter: HINCRBY on a missing key would start it at the returned units, far below the truth.
SETTLE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local units = tonumber(ARGV[1])
if ARGV[2] == '1' then redis.call('HINCRBY', KEYS[1], 'n', units) end
if ARGV[3] == '1' then
  local pending = tonumber(redis.call('HGET', KEYS[1], 'pending') or '0')
  redis.call('HSET', KEYS[1], 'pending', math.max(pending - units, 0))
end
if ARGV[4] == '1' then
  local n = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
  redis.call('HSET', KEYS[1], 'n', math.max(n - units, 0))
end
return 1
"""
# ARGV: n, at, ttl seconds, overwrite (1/0).  A rebuild after a miss does not overwrite: of
# several processes rebuilding at once, the first wins and later takes are kept.
SEED = """
if ARGV[4] == '0' and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'n', ARGV[1], 'at', ARGV[2], 'pending', 0)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
"""
# KEYS seat gates; ARGV token, ttl ms.  All or none; returns the 1-based indexes already taken.
GATE = """
local taken = {}
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then table.insert(taken, i) end
end
if #taken > 0 then return taken end
for _, key in ipairs(KEYS) do redis.call('SET', key, ARGV[1], 'PX', tonumber(ARGV[2])) end
return taken
"""
UNGATE = """
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) end
end
return 1
"""


@functools.cache
def sha(script: str) -> str:
    """The script's SHA1, as Redis names it for EVALSHA."""
    return hashlib.sha1(script.encode()).hexdigest()


@functools.cache
def riding(script: str) -> tuple[str, str]:
    """`script` with a rider's reads in front (bookings.admission_reads), and its SHA1: on one
    Redis the rider's GETs and the script are one EVALSHA, not a pipeline of 1 + k commands
    (issue 26).  KEYS: the rider's k keys, then the script's; ARGV[1] = k, then the script's.
    Returns the k values read (nil when missing), then the script's answer.  Not for a
    cluster: the rider's keys are on other slots (there the pipeline stays)."""
    text = (
        "local k = tonumber(ARGV[1])\n"
        "local out = {}\n"
        "for i = 1, k do out[i] = redis.call('GET', KEYS[i]) or false end\n"
        "local KEYS = {unpack(KEYS, k + 1)}\n"
        "local ARGV = {unpack(ARGV, 2)}\n"
        f"out[k + 1] = (function()\n{script}\nend)()\n"
        "return out\n"
    )
    return text, sha(text)
