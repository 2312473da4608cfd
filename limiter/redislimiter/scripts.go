package redislimiter

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"fmt"
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
	//go:embed lua/at_once.lua
	luaAtOnce string
)

// script is one of the Lua scripts of a Limiter, atomic on Redis. Where
// Redis has functions (7.0 and later) it runs as a function of the
// Limiter's library, loaded once (FCALL), so that the code every script
// shares is not built again on every call; elsewhere, by its hash
// (EVALSHA), whole.
type script struct {
	eval     *redis.Script
	function string // its name in the library
}

// scripts are the scripts of a Limiter. reserve also reports a domain's
// state, so that the decision every rule takes part in is written once.
type scripts struct {
	reserve, cancel, pause, confirm script
	library                         string // the source of the library that holds them all as functions
}

func (s *scripts) all() []*script { return []*script{&s.reserve, &s.cancel, &s.pause, &s.confirm} }

// loadTimeout bounds the loading of the scripts into Redis, which each
// node needs once (and again after SCRIPT FLUSH, or a replica promoted):
// ten times the Limiter's timeout, so that a loaded Redis does not turn a
// cold start into an outage.
func (l *Limiter) loadTimeout() time.Duration { return 10 * l.timeout }

// loadScripts loads the library into Redis, into every primary of a
// Cluster (replicas copy it), and where that works has the scripts run as
// its functions; and every script, into every node, for when a node lacks
// the library and cannot take it. Requests need load neither: where it
// fails, the request that finds a script missing loads it (run).
func (l *Limiter) loadScripts() {
	ctx, cancel := context.WithTimeout(context.Background(), l.loadTimeout())
	defer cancel()
	l.functions.Store(l.loadLibrary(ctx, "") == nil)
	for _, s := range l.scripts.all() {
		if s.eval.Load(ctx, l.client).Err() != nil {
			return
		}
	}
}

// loadLibrary loads the library into the primary that serves key, or, for
// key "", into every primary, bounded by loadTimeout.
func (l *Limiter) loadLibrary(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, l.loadTimeout())
	defer cancel()
	load := func(ctx context.Context, node *redis.Client) error {
		return node.FunctionLoadReplace(ctx, l.scripts.library).Err()
	}
	switch c := l.client.(type) {
	case *redis.ClusterClient:
		if key == "" {
			return c.ForEachMaster(ctx, load)
		}
		primary, err := c.MasterForKey(ctx, key)
		if err != nil {
			return err
		}
		return load(ctx, primary)
	case *redis.Ring:
		return c.ForEachShard(ctx, load)
	}
	return l.client.FunctionLoadReplace(ctx, l.scripts.library).Err()
}

// load loads script s into the node that serves key, bounded by
// loadTimeout.
func (l *Limiter) load(ctx context.Context, s *script, key string) error {
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
	return s.eval.Load(ctx, node).Err()
}

// command returns the command that runs s on keys with args: as a
// function of the library, or by the script's hash.
func command(ctx context.Context, s *script, function bool, keys []string, args []any) *redis.Cmd {
	a := make([]any, 0, 3+len(keys)+len(args))
	if function {
		a = append(a, "fcall", s.function, len(keys))
	} else {
		a = append(a, "evalsha", s.eval.Hash(), len(keys))
	}
	for _, k := range keys {
		a = append(a, k)
	}
	cmd := redis.NewCmd(ctx, append(a, args...)...)
	cmd.SetFirstKeyPos(3)
	return cmd
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
// (state.lua); the keys' expiry (expiry.lua); the schedule's steps, as
// schedule.go takes them (schedule.lua); and those steps taken at once
// for reserve's commonest call (at_once.lua). Each script's body is a
// function of the keys and arguments, as Redis calls a library's
// functions; the library's name, and so its functions', holds a hash of
// its source, so that Limiters of different versions sharing a Redis each
// call their own.
func newScripts(clock string) scripts {
	prelude := "local horizon = " + strconv.FormatInt(int64(horizon/time.Microsecond), 10) + "\n" +
		"local slip = " + strconv.FormatInt(int64(slip/time.Microsecond), 10) + "\n" + clock + luaState + luaExpiry + luaSchedule + luaAtOnce
	var s scripts
	bodies := []struct {
		name, body string
		script     *script
	}{{"reserve", luaReserve, &s.reserve}, {"cancel", luaCancel, &s.cancel}, {"pause", luaPause, &s.pause}, {"confirm", luaConfirm, &s.confirm}}
	var functions strings.Builder
	for _, b := range bodies {
		function := "local function script_" + b.name + "(KEYS, ARGV)\n" + b.body + "end\n"
		b.script.eval = redis.NewScript(prelude + function + "return script_" + b.name + "(KEYS, ARGV)\n")
		functions.WriteString(function)
	}
	sum := sha1.Sum([]byte(prelude + functions.String()))
	name := "polite_" + hex.EncodeToString(sum[:8])
	for _, b := range bodies {
		b.script.function = name + "_" + b.name
		fmt.Fprintf(&functions, "redis.register_function('%s', script_%s)\n", b.script.function, b.name)
	}
	s.library = "#!lua name=" + name + "\n" + prelude + functions.String()
	return s
}

// keys returns the keys of domain: its state hash, the history of its
// starts that quotas count (schedule.lua) and the record of its latest
// start (state.lua), all with the hash tag {domain}, so that they live in
// one Redis Cluster slot. One history
// serves every quota, so that a changed quota list keeps it, and workers
// whose quota lists differ, during a rolling deploy, each count every
// start in every window they know.
func (l *Limiter) keys(domain string) []string {
	base := l.prefix + "{" + hashTag(domain) + "}:"
	return []string{base + "state", base + "starts", base + "last"}
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
// ARGV, with room for extra more arguments: one argument, numbers apart by
// spaces (rate, burst, min delay, jitter, then each quota's requests and
// window), so that a script reads an unchanged rule by one lookup.
// Durations become microseconds, rounded up so that no gap gets shorter. A
// rate that is not a positive finite number means no bucket, as 0 does.
func ruleArgs(rule limiter.Rule, extra int) []any {
	rate := rule.Rate
	if !(rate > 0) || math.IsInf(rate, 1) {
		rate = 0
	}
	var buf [64]byte // room for a rule without quotas, so that only the string is made
	b := strconv.AppendFloat(buf[:0], rate, 'g', -1, 64)
	b = strconv.AppendInt(append(b, ' '), int64(rule.Burst), 10)
	b = strconv.AppendInt(append(b, ' '), micros(rule.MinDelay), 10)
	b = strconv.AppendInt(append(b, ' '), micros(rule.Jitter), 10)
	for _, q := range rule.Quotas {
		b = strconv.AppendInt(append(b, ' '), int64(q.Requests), 10)
		b = strconv.AppendInt(append(b, ' '), micros(q.Window), 10)
	}
	args := make([]any, 1, 1+extra)
	args[0] = string(b)
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
