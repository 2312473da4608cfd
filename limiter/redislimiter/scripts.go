package redislimiter

import (
	_ "embed"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite/limiter"
)

var (
	//go:embed lua/clock.lua
	redisClock string
	//go:embed lua/reserve.lua
	luaReserve string
	//go:embed lua/cancel.lua
	luaCancel string
	//go:embed lua/pause.lua
	luaPause string
)

// scripts are the Lua scripts of a Limiter, each one atomic on Redis.
// reserve also reports a domain's state, so that the decision every rule
// takes part in is written once.
type scripts struct {
	reserve, cancel, pause *redis.Script
}

// newScripts builds the scripts with clock, Lua that defines clock() to
// return the time in microseconds: Redis's TIME in production.
func newScripts(clock string) scripts {
	build := func(body string) *redis.Script { return redis.NewScript(clock + body) }
	return scripts{reserve: build(luaReserve), cancel: build(luaCancel), pause: build(luaPause)}
}

// keys returns the keys of domain under rule: its state hash, then one
// list per quota. All of them share the hash tag {domain}, so that they
// live in one Redis Cluster slot.
func (l *Limiter) keys(domain string, quotas int) []string {
	keys := make([]string, 1+quotas)
	keys[0] = l.prefix + "{" + hashTag(domain) + "}:state"
	base := strings.TrimSuffix(keys[0], "state")
	for i := range quotas {
		keys[1+i] = base + "q:" + strconv.Itoa(i)
	}
	return keys
}

// hashTag writes domain so that it can sit between braces: "%", "{" and
// "}" are escaped, and the empty domain is "%", which no other domain
// becomes. A key's tag is then always the whole domain.
func hashTag(domain string) string {
	if domain == "" {
		return "%"
	}
	if !strings.ContainsAny(domain, "%{}") {
		return domain
	}
	return strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D").Replace(domain)
}

// ruleArgs returns the rule as the scripts read it from the start of
// ARGV, with room for extra more arguments: rate, burst, min delay,
// jitter, then each quota's requests and window. Durations become
// microseconds, rounded up so that no gap gets shorter.
func ruleArgs(rule limiter.Rule, extra int) []any {
	args := make([]any, 0, 4+2*len(rule.Quotas)+extra)
	args = append(args, rule.Rate, rule.Burst, micros(rule.MinDelay), micros(rule.Jitter))
	for _, q := range rule.Quotas {
		args = append(args, q.Requests, micros(q.Window))
	}
	return args
}

// micros is d in microseconds, rounded up.
func micros(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	us := int64(d / time.Microsecond)
	if d%time.Microsecond != 0 {
		us++
	}
	return us
}
