package redislimiter

import (
	"context"
	_ "embed"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite/limiter"
)

var (
	//go:embed lua/clock.lua
	redisClock string
	//go:embed lua/state.lua
	luaState string
	//go:embed lua/reserve.lua
	luaReserve string
	//go:embed lua/cancel.lua
	luaCancel string
	//go:embed lua/pause.lua
	luaPause string
	//go:embed lua/confirm.lua
	luaConfirm string
	//go:embed lua/schedule.lua
	luaSchedule string
	//go:embed lua/expiry.lua
	luaExpiry string
)

// scripts are the Lua scripts of a Limiter, each one atomic on Redis.
// reserve also reports a domain's state, so that the decision every rule
// takes part in is written once.
type scripts struct {
	reserve, cancel, pause, confirm *redis.Script
}

// loadTimeout bounds the loading of the scripts into Redis, which each
// node needs once (and again after SCRIPT FLUSH, or a replica promoted):
// ten times the Limiter's timeout, so that a loaded Redis does not turn a
// cold start into an outage.
func (l *Limiter) loadTimeout() time.Duration { return 10 * l.timeout }

// loadScripts loads every script into Redis, into every node of a Cluster,
// so that requests need not. Where it fails, the request that finds the
// script missing loads it (run).
func (l *Limiter) loadScripts() {
	ctx, cancel := context.WithTimeout(context.Background(), l.loadTimeout())
	defer cancel()
	for _, s := range []*redis.Script{l.scripts.reserve, l.scripts.cancel, l.scripts.pause, l.scripts.confirm} {
		if s.Load(ctx, l.client).Err() != nil {
			return
		}
	}
}

// load loads script s into the node that serves key, bounded by
// loadTimeout.
func (l *Limiter) load(ctx context.Context, s *redis.Script, key string) error {
	ctx, cancel := context.WithTimeout(ctx, l.loadTimeout())
	defer cancel()
	var node redis.Scripter = l.client
	if cluster, ok := l.client.(*redis.ClusterClient); ok {
		primary, err := cluster.MasterForKey(ctx, key)
		if err != nil {
			return err
		}
		node = primary
	}
	return s.Load(ctx, node).Err()
}

// horizon is the longest wait a Limiter hands out: a reservation that
// would wait longer is refused, whatever the request's MaxWait, and every
// duration the scripts read is cut to it. config.Limit.Validate keeps
// every rule of a valid limit within a year, well inside it.
const horizon = 400 * 24 * time.Hour

// slip is how much later than planned, on Redis's clock, a start may be
// confirmed and still count as on time: the plan does not move for it, and
// the record of the latest start holds a turn back only when it asks for
// more. A start confirmed late by the usual round trip then costs no
// second one.
const slip = time.Millisecond

// newScripts builds the scripts with clock, Lua that defines clock() to
// return the time in microseconds: Redis's TIME in production. Each script
// also sees horizon and slip, in microseconds (defined before clock); the
// state's codec, the rule's reader and the bucket's arithmetic
// (state.lua); the keys' expiry (expiry.lua); and the schedule's steps,
// as schedule.go takes them (schedule.lua).
func newScripts(clock string) scripts {
	prelude := "local horizon = " + strconv.FormatInt(int64(horizon/time.Microsecond), 10) + "\n" +
		"local slip = " + strconv.FormatInt(int64(slip/time.Microsecond), 10) + "\n" + clock + luaState + luaExpiry + luaSchedule
	build := func(body string) *redis.Script { return redis.NewScript(prelude + body) }
	return scripts{reserve: build(luaReserve), cancel: build(luaCancel), pause: build(luaPause), confirm: build(luaConfirm)}
}

// keys returns the keys of domain: its state hash and the history of
// its starts that quotas count (schedule.lua), both with the hash tag
// {domain}, so that they live in one Redis Cluster slot. One history
// serves every quota, so that a changed quota list keeps it, and workers
// whose quota lists differ, during a rolling deploy, each count every
// start in every window they know.
func (l *Limiter) keys(domain string) []string {
	base := l.prefix + "{" + hashTag(domain) + "}:"
	return []string{base + "state", base + "starts"}
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
// jitter, the number of quotas, then each quota's requests and window. Durations become
// microseconds, rounded up so that no gap gets shorter. A rate that is
// not a positive finite number means no bucket, as 0 does.
func ruleArgs(rule limiter.Rule, extra int) []any {
	rate := rule.Rate
	if !(rate > 0) || math.IsInf(rate, 1) {
		rate = 0
	}
	args := make([]any, 0, 5+2*len(rule.Quotas)+extra)
	args = append(args, rate, rule.Burst, micros(rule.MinDelay), micros(rule.Jitter), len(rule.Quotas))
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
