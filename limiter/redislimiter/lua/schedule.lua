-- The schedule of a domain, as limiter's schedule.go keeps it: s is the
-- state (state.lua), rule the rule (read_rule).

-- list_time writes a time as a quota list holds it: exactly, never in
-- exponent form, so that LREM and LINSERT find it.
local function list_time(t)
  return string.format('%.0f', t)
end

-- history_window returns the longest window the history keeps at now:
-- the rule's, or a longer one that a worker whose rule has it used within
-- that window, so that during a rolling deploy of a quota change every
-- worker counts every start in every window it knows.
local function history_window(s, rule, now)
  if rule.longest >= s.window or now >= s.window_until then
    s.window, s.window_until = rule.longest, now + rule.longest
  end
  return s.window
end

-- trim forgets the starts that the history's window no longer holds at
-- now.
local function trim(s, rule, now)
  local window = history_window(s, rule, now)
  local history = s.history
  if not history or window == 0 then
    return
  end
  local first = redis.call('LINDEX', history, 0)
  while first and tonumber(first) + window <= now do
    redis.call('LPOP', history)
    first = redis.call('LINDEX', history, 0)
  end
end

-- add_start adds start t to the history, keeping it in order, when some
-- quota counts it. A history it makes has no expiry yet: it sets
-- s.list_made.
local function add_start(s, t)
  local history = s.history
  if not history or s.window == 0 then
    return
  end
  local last = redis.call('LINDEX', history, -1)
  if not last or tonumber(last) <= t then
    if redis.call('RPUSH', history, list_time(t)) == 1 then
      s.list_made = true
    end
    return
  end
  for _, v in ipairs(redis.call('LRANGE', history, 0, -1)) do
    if tonumber(v) > t then
      redis.call('LINSERT', history, 'BEFORE', v, list_time(t))
      return
    end
  end
end

-- remove_start deletes one start t from the history.
local function remove_start(s, t)
  if s.history then
    redis.call('LREM', s.history, -1, list_time(t))
  end
end

-- fits_quotas reports whether the starts, with the one planned at at
-- moved to now, fit every quota: no window holds more starts than its
-- quota allows.
local function fits_quotas(s, rule, at, now)
  if #rule.quotas == 0 then
    return true
  end
  local moved, found = {}, false
  for _, v in ipairs(redis.call('LRANGE', s.history, 0, -1)) do
    local t = tonumber(v)
    if t == at and not found then
      found = true
    else
      moved[#moved + 1] = t
    end
  end
  moved[#moved + 1] = now
  table.sort(moved)
  for _, q in ipairs(rule.quotas) do
    for j = 1, #moved - q.requests do
      if moved[j] + q.window > moved[j + q.requests] then
        return false
      end
    end
  end
  return true
end

-- earliest returns the earliest start at or after now that every rule of
-- the plan allows, with the jitter sample added to the gap since the
-- latest start, and the rule that set it. Nothing starts before
-- not_before.
local function earliest(s, rule, now, sample, not_before)
  local t, reason = now, ''
  local latest = s.latest
  if latest then
    if latest > t then
      t, reason = latest, 'queue'
    end
    if rule.min_delay > 0 and latest + rule.min_delay > t then
      t, reason = latest + rule.min_delay, 'min_delay'
    end
  end
  if not_before > t then
    t, reason = not_before, 'queue'
  end
  if s.paused_until > t then
    t, reason = s.paused_until, 'pause'
  end
  if #rule.quotas > 0 then
    local n = redis.call('LLEN', s.history)
    for _, q in ipairs(rule.quotas) do
      local free = n >= q.requests and tonumber(redis.call('LINDEX', s.history, n - q.requests)) + q.window
      if free and free > t then
        t, reason = free, 'quota'
      end
    end
  end
  if rule.rate > 0 then
    local token = ready(s.tokens, s.tokens_at, t, rule)
    if token > t then
      t, reason = token, 'rate'
    end
  end
  if latest and sample > 0 then
    if t > now then
      t = t + sample
    elseif latest + sample > t then
      t, reason = latest + sample, 'jitter'
    end
  end
  return t, reason
end

-- allowed returns the earliest start at or after now that the starts
-- made allow: what the server has seen must fit the rules too.
local function allowed(s, rule, now)
  local t = now
  if s.sent and rule.min_delay > 0 and s.sent + rule.min_delay > t then
    t = s.sent + rule.min_delay
  end
  if rule.rate > 0 and s.sent_tokens then
    t = ready(s.sent_tokens, s.sent, t, rule)
  end
  if s.paused_until > t then
    return s.paused_until
  end
  return t
end

-- plan_start takes start t into the plan: the bucket, the latest start
-- and the history.
local function plan_start(s, rule, t)
  if rule.rate > 0 then
    s.tokens, s.tokens_at = level(s.tokens, s.tokens_at, t, rule) - 1, t
  end
  s.latest = t
  if s.window > 0 then
    add_start(s, t)
  end
end

-- hold takes start t into the plan and returns its turn, now held,
-- with the plan before it.
local function hold(s, rule, t)
  s.serial = (s.serial + 1) % 4294967296
  -- its fields in order (SERIAL to LATEST), with room for the others, so
  -- that the table is made once at its size
  local turn = {s.serial, t, s.tokens, s.tokens_at, s.latest, nil, nil, nil, nil, nil}
  plan_start(s, rule, t)
  return turn
end

-- note_start notes that a request starts at now, for save to record too.
local function note_start(s, rule, now)
  if rule.rate > 0 then
    s.sent_tokens = level(s.sent_tokens, s.sent_tokens and s.sent, now, rule) - 1
  else
    s.sent_tokens = nil
  end
  s.sent, s.made, s.noted = now, s.made + 1, true
end

-- count_start counts a start at t that the caller made before the
-- domain had a state (limiter.Request's LastStart) in the plan, the
-- history and the starts made.
local function count_start(s, rule, t)
  plan_start(s, rule, t)
  note_start(s, rule, t)
end

-- begin_turn notes that turn's request starts at now.
local function begin_turn(s, rule, turn, now)
  turn[STARTED], turn[SENT], turn[SENT_TOKENS], turn[AT] = true, s.sent, s.sent_tokens, now
  note_start(s, rule, now)
  turn[MADE] = s.made
end

-- keep adds turn, the latest, held at now, to the turns a cancel may
-- give back. It forgets the turns that no cancel can give back any more:
-- those a started turn follows, and those whose time has come; but the
-- started turn whose departure is the latest noted stays, so that confirm
-- can take that departure back when its request leaves late.
local function keep(s, turn, now)
  local turns = s.turns
  local first, latest = 1, nil
  for j = #turns, 1, -1 do
    if turns[j][STARTED] then
      first = j + 1
      if turns[j][MADE] == s.made then
        latest = turns[j]
      end
      break
    end
  end
  while first <= #turns and turns[first][AT] <= now do
    first = first + 1
  end
  local kept = 0
  if latest then
    kept = 1
    turns[1] = latest -- it stood before first, so nothing still to copy is lost
  end
  for j = first, #turns do
    kept = kept + 1
    turns[kept] = turns[j]
  end
  for j = #turns, kept + 1, -1 do
    turns[j] = nil
  end
  turns[kept + 1] = turn
end

-- find returns the index in s.turns of the turn numbered serial, or nil.
local function find(s, serial)
  for j = #s.turns, 1, -1 do
    if s.turns[j][SERIAL] == serial then
      return j
    end
  end
end

-- follow makes the plan's next turns follow a start at t.
local function follow(s, rule, t)
  if s.latest and s.latest >= t then
    return
  end
  s.latest = t
  if rule.rate > 0 and s.tokens_at and s.tokens_at < t then
    s.tokens_at = t -- the token was taken at t, not before
  end
end

-- cancel gives back the turn numbered serial, planned to start at at.
-- Every cancelled turn that no later live turn follows is given back: the
-- plan goes back to what it was before the oldest of the cancelled turns
-- at the tail. A cancelled turn with a live turn after it frees its quota
-- slots only: the turns after it were planned around it.
local function cancel(s, rule, serial, at)
  local i = find(s, serial)
  if not i then
    remove_start(s, at)
    return
  end
  local turn = s.turns[i]
  if turn[CANCELLED] then
    return
  end
  turn[CANCELLED] = true
  remove_start(s, turn[AT])
  local j = #s.turns
  while j > 0 and s.turns[j][CANCELLED] do
    j = j - 1
  end
  if j == #s.turns then
    return
  end
  local oldest = s.turns[j + 1]
  s.tokens, s.tokens_at, s.latest = oldest[TOKENS], oldest[TOKENS_AT], oldest[LATEST]
  if oldest[STARTED] and oldest[MADE] == s.made then
    s.sent, s.sent_tokens = oldest[SENT], oldest[SENT_TOKENS] -- its start is the latest made
  end
  for k = #s.turns, j + 1, -1 do
    s.turns[k] = nil
  end
  if s.sent then
    follow(s, rule, s.sent)
  end
end

-- quiet returns when the state becomes as good as a fresh one under
-- rule: its buckets full, its gaps, pause and quota windows over.
local function quiet(s, rule)
  local q = s.paused_until
  if s.latest and s.latest + rule.min_delay + rule.jitter > q then
    q = s.latest + rule.min_delay + rule.jitter
  end
  if s.sent and s.sent + rule.min_delay > q then
    q = s.sent + rule.min_delay
  end
  if rule.rate > 0 then
    -- when each bucket is full again (full, written out)
    local rate, burst = rule.rate, rule.burst
    if s.tokens_at then
      local planned = s.tokens_at + token_time(burst - s.tokens, rate)
      if planned > q then
        q = planned
      end
    end
    if s.sent_tokens and s.sent then
      local made = s.sent + token_time(burst - s.sent_tokens, rate)
      if made > q then
        q = made
      end
    end
  end
  if s.window > 0 then
    local last = redis.call('LINDEX', s.history, -1)
    if last and tonumber(last) + s.window > q then
      q = tonumber(last) + s.window
    end
  end
  return q
end

-- record_and_expire writes the start noted in s at now, if any, to the
-- record (state.lua), which expires with the keys: a record just made gets
-- their expiry. Under a rule where the start, were the state lost, would
-- hold no later start back (rule.recorded), the record is neither written
-- nor kept alive. With ttl, the keys' expiry set anew (expiry.lua), it
-- sets their time to live, but that of a history that no quota keeps.
local function record_and_expire(s, rule, now, ttl)
  local record = rule.recorded and s.record
  if s.noted and record and record_start(s) and not ttl then
    redis.call('PEXPIRE', record, math.max(math.ceil((s.expires_at - now) / 1000), 1))
  end
  if ttl then
    redis.call('PEXPIRE', s.key, ttl)
    if s.history and s.window > 0 then
      redis.call('PEXPIRE', s.history, ttl)
    end
    if record then
      redis.call('PEXPIRE', record, ttl)
    end
  end
end

-- save saves s at now and sets the keys' expiry (expiry.lua) when a list
-- was just made or the state's quiet time passed it; and writes the
-- record (record_and_expire).
local function save(s, rule, now)
  s.quiet_at = quiet(s, rule)
  local ttl
  s.expires_at, ttl = expiry(now, s.quiet_at, s.expires_at, s.list_made)
  save_state(s)
  record_and_expire(s, rule, now, ttl)
end
