-- clock returns Redis's own time in microseconds, so that every worker
-- shares one clock whatever their own clocks say.
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
