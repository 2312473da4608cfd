-- reserve holds the earliest start every rule of a domain allows, as
-- keyState.reserve does; told to report, it holds nothing and reports
-- the domain, as keyState.state does.
--
-- KEYS[1] is the domain's state hash, KEYS[2] the history of its starts,
-- KEYS[3] the record of its latest start (state.lua).
--
-- ARGV is the rule (read_rule). To reserve, the jitter sample, the
-- longest acceptable wait in nanoseconds (0: any), the not-before and the
-- last start follow, each left out when it is 0 and nothing follows it,
-- but the last start, left out when unknown; to report, 'report' follows,
-- then the last start when known. The not-before is how long from now the
-- caller's own earlier starts, which Redis did not grant (its fallback
-- did, while Redis was away), keep this start back. The last start is how
-- long before now the caller's latest start was (limiter.Request's
-- LastStart): a domain whose state holds no start (none, or one a pause
-- made) counts it as a start, or the start its record holds, if later. A
-- reservation returns {1, wait, reason, serial, start, epoch}, or
-- {0, wait, reason} when the wait is too long, in which case it holds
-- nothing. A report returns {wait, reason, paused, then each quota's
-- remaining and next_free}.
--
-- The commonest call, a start at once, takes reserve_at_once's shorter
-- path (at_once.lua), which leaves the same state.
--
-- A start the plan allows at once waits for the starts made when they ask
-- for more than slip (defined before this script, as confirm.lua's).
-- horizon, defined before this script, is the longest wait: a reservation
-- that would wait longer is refused whatever the longest acceptable wait,
-- and a report says horizon.
local rule, extra = read_rule(ARGV)
local report = ARGV[extra] == 'report'
local sample, max_wait, not_before, last_start = 0, 0, 0, nil
if report then
  last_start = ARGV[extra + 1]
elseif ARGV[extra] then
  sample, max_wait = math.min(tonumber(ARGV[extra]), 2 * horizon), tonumber(ARGV[extra + 1] or 0)
  not_before, last_start = math.min(tonumber(ARGV[extra + 2] or 0), 2 * horizon), ARGV[extra + 3]
end

local now = clock()
local s = load_state(KEYS)
if not report then
  local serial = reserve_at_once(s, rule, now, sample, not_before)
  if serial then
    return {1, 0, '', serial, now, s.epoch}
  end
end
trim(s, rule, now)
-- The start counted for a domain whose state holds none (lost, or made
-- by a pause since): the later of its record's and the caller's.
local counted
if not s.latest then
  counted = recorded_start(s)
  if last_start then
    counted = math.max(counted or 0, now - math.min(tonumber(last_start), 2 * horizon))
  end
  if counted then
    count_start(s, rule, counted)
  end
end

local start, reason = earliest(s, rule, now, sample, now + not_before)
if report or start == now then
  local made_allows = allowed(s, rule, now)
  if made_allows > start and made_allows - now > slip then
    start, reason = made_allows, 'queue'
  end
end

if report then
  local out = {math.min(start - now, horizon), reason, math.max(0, s.paused_until - now)}
  for _, q in ipairs(rule.quotas) do
    local remaining, next_free = q.requests, 0
    for _, v in ipairs(redis.call('LRANGE', s.history, -q.requests, -1)) do
      local ends = tonumber(v) + q.window
      if ends > now then
        if remaining == q.requests then
          next_free = ends - now
        end
        remaining = remaining - 1
      end
    end
    out[#out + 1], out[#out + 2] = remaining, next_free
  end
  if s.list_made then
    redis.call('DEL', s.history) -- made for the last start, which a report does not keep
  end
  return out
end
local wait = start - now
if wait > horizon or max_wait > 0 and wait * 1000 > max_wait then
  -- A refusal holds nothing, but keeps the last start it counted, as
  -- limiter.Memory does.
  if counted then
    save(s, rule, now)
  end
  if wait > horizon then
    wait = horizon
  end
  return {0, wait, reason}
end

if not s.epoch then
  s.epoch, s.serial = now % 4294967295 + 1, 0
end
local turn = hold(s, rule, start)
if start == now then
  begin_turn(s, rule, turn, now)
end
keep(s, turn, now)
save(s, rule, now)
return {1, turn[AT] - now, reason, turn[SERIAL], turn[AT], s.epoch}
