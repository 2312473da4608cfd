package benchmarks

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// BenchmarkReserve measures limiter operations against one Redis, side by
// side with redis_rate (GCRA in Lua), each one round trip per operation,
// through the same client, on one key each. Every case is warmed up first
// (scripts loaded, connections made), and the cases run in a random order,
// so that none gains by its place. As -count repeats each case in place,
// compare them over several runs of the test binary instead, so that a
// machine's changing load falls on all alike, or with
// BenchmarkReserveAlternating:
//
//	go test -c -o /tmp/redislimiter.test ./benchmarks
//	for i in $(seq 10); do /tmp/redislimiter.test -test.run '^$' -test.bench 'BenchmarkReserve$' -test.benchtime=4000x; done
//
// Besides the time per operation it reports what it cost Redis: redis-µs/op
// is the time Redis spent in the script (INFO commandstats: the time per
// call of EVALSHA and FCALL, the way polite's scripts run where Redis has
// functions), redis-cpu-µs/op the CPU time of the whole server per
// operation (INFO cpu), reading and writing the sockets included. Both are
// steadier than the time per operation on a loaded machine.
//
// The client has ContextTimeoutEnabled, as the Limiter's doc advises;
// polite-deadline-ignoring-client measures the Limiter with a client
// without it, where each call runs on a goroutine of its own.
func BenchmarkReserve(b *testing.B) {
	srv, cases := benchCases(b)
	admin := newClient(b, srv)
	rand.Shuffle(len(cases), func(i, j int) { cases[i], cases[j] = cases[j], cases[i] })
	for _, tt := range cases {
		b.Run(tt.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			defer reportRedisCost(b, admin)()
			for b.Loop() {
				tt.op(b)
			}
		})
		b.Run(tt.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			defer reportRedisCost(b, admin)()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					tt.op(b)
				}
			})
		})
	}
}

// BenchmarkReserveAlternating runs polite and redis_rate by turns of a
// hundred operations each, the first of a turn alternating, so that both
// meet the same load on a busy machine. It reports each one's time per
// operation and polite/redis_rate, the median of the turns' ratios:
// below 1, polite is the faster. Its ns/op counts an operation of each.
func BenchmarkReserveAlternating(b *testing.B) {
	const turn = 100
	_, cases := benchCases(b)
	polite, rate := cases[0], cases[1]
	for _, parallel := range []bool{false, true} {
		b.Run(map[bool]string{false: "serial", true: "parallel"}[parallel], func(b *testing.B) {
			var politeNs, rateNs, ratios []float64
			b.ResetTimer()
			for done, i := 0, 0; done < b.N; done, i = done+turn, i+1 {
				n := min(turn, b.N-done)
				var p, r float64
				if i%2 == 0 {
					p, r = timeOps(b, polite.op, n, parallel), timeOps(b, rate.op, n, parallel)
				} else {
					r, p = timeOps(b, rate.op, n, parallel), timeOps(b, polite.op, n, parallel)
				}
				politeNs, rateNs, ratios = append(politeNs, p), append(rateNs, r), append(ratios, p/r)
			}
			b.ReportMetric(median(politeNs), "polite-ns/op")
			b.ReportMetric(median(rateNs), "redis_rate-ns/op")
			b.ReportMetric(median(ratios), "polite/redis_rate")
		})
	}
}

// benchCase is an operation of a benchmark, which reports failures with
// b.Errorf, so that any goroutine may run it.
type benchCase struct {
	name string
	op   func(b *testing.B)
}

// benchCases starts a Redis and returns the operations the benchmarks
// compare, warmed up: polite's Reserve, redis_rate's Allow, and polite's
// Reserve through a client without ContextTimeoutEnabled.
func benchCases(b *testing.B) (*redistest.Server, []benchCase) {
	srv := redistest.Start(b)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	b.Cleanup(func() { client.Close() })
	ctx := context.Background()
	req := limiter.Request{Key: "bench.example", Rule: &limiter.Rule{Rate: 1e6, Burst: 1000}}
	reserveWith := func(client redis.UniversalClient) func(*testing.B) {
		l, err := redislimiter.New(client, redislimiter.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.Close() })
		return func(b *testing.B) {
			res, err := l.Reserve(ctx, req)
			if err != nil || res.Degraded() || !res.OK() {
				b.Errorf("reserve: %v (degraded %v, ok %v)", err, res.Degraded(), res.OK())
			}
		}
	}
	gcra := redis_rate.NewLimiter(client)
	limit := redis_rate.Limit{Rate: 1e6, Burst: 1000, Period: 1e9}
	allow := func(b *testing.B) {
		res, err := gcra.Allow(ctx, "bench.example", limit)
		if err != nil || res.Allowed != 1 {
			b.Errorf("allow: %v (allowed %v)", err, res)
		}
	}
	cases := []benchCase{{"polite", reserveWith(client)}, {"redis_rate", allow}, {"polite-deadline-ignoring-client", reserveWith(newClient(b, srv))}}
	for _, tt := range cases {
		timeOps(b, tt.op, 1000, true) // loads the script, makes the connections
	}
	if b.Failed() {
		b.FailNow()
	}
	return srv, cases
}

// newClient returns a client of srv, closed when the benchmark ends.
func newClient(b *testing.B, srv *redistest.Server) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	b.Cleanup(func() { c.Close() })
	return c
}

// timeOps runs op n times, serially or on GOMAXPROCS goroutines as
// b.RunParallel does, and returns the time per operation in nanoseconds.
func timeOps(b *testing.B, op func(*testing.B), n int, parallel bool) float64 {
	start := time.Now()
	if !parallel {
		for range n {
			op(b)
		}
		return float64(time.Since(start).Nanoseconds()) / float64(n)
	}
	var wg sync.WaitGroup
	procs := runtime.GOMAXPROCS(0)
	for g := range procs {
		wg.Go(func() {
			for range n/procs + min(1, max(0, n%procs-g)) {
				op(b)
			}
		})
	}
	wg.Wait()
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// reportRedisCost resets Redis's statistics; the function it returns
// reports what the b.N operations since then cost Redis.
func reportRedisCost(b *testing.B, admin *redis.Client) func() {
	ctx := context.Background()
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	cpu0 := redisInfo(b, admin, "cpu")
	return func() {
		b.StopTimer()
		commands := redisInfo(b, admin, "commandstats")
		cpu1 := redisInfo(b, admin, "cpu")
		var calls, usec float64
		for _, name := range []string{"cmdstat_evalsha", "cmdstat_fcall"} {
			for field := range strings.SplitSeq(commands[name], ",") {
				if v, ok := strings.CutPrefix(field, "calls="); ok {
					n, _ := strconv.ParseFloat(v, 64)
					calls += n
				}
				if v, ok := strings.CutPrefix(field, "usec="); ok {
					n, _ := strconv.ParseFloat(v, 64)
					usec += n
				}
			}
		}
		seconds := func(info map[string]string) float64 {
			user, _ := strconv.ParseFloat(info["used_cpu_user"], 64)
			sys, _ := strconv.ParseFloat(info["used_cpu_sys"], 64)
			return user + sys
		}
		b.ReportMetric(usec/max(calls, 1), "redis-µs/op")
		b.ReportMetric((seconds(cpu1)-seconds(cpu0))*1e6/float64(b.N), "redis-cpu-µs/op")
	}
}

// redisInfo returns a section of Redis's INFO as fields and values.
func redisInfo(b *testing.B, admin *redis.Client, section string) map[string]string {
	text, err := admin.Info(context.Background(), section).Result()
	if err != nil {
		b.Fatal(err)
	}
	info := map[string]string{}
	for line := range strings.Lines(text) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			info[k] = v
		}
	}
	return info
}

// BenchmarkHandoff measures what the outage handoff adds to a reservation
// through Redis while Redis answers: the default Limiter, which looks up
// whether its fallback paced the domain and counts each start it is
// granted, against one WithFailOpen, which keeps no handoff, on the same
// Redis, over one domain and over 10,000. They run by turns of a hundred
// parallel operations each, as in BenchmarkReserveAlternating, and it
// reports each one's time per operation and handoff/none, the median of
// the turns' ratios: the handoff's cost is how far that is above 1. Its
// ns/op counts an operation of each. The handoff's own bookkeeping, without
// Redis, is BenchmarkHandoff in package redislimiter.
func BenchmarkHandoff(b *testing.B) {
	const turn = 100
	srv := redistest.Start(b)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	b.Cleanup(func() { client.Close() })
	ctx := context.Background()
	rule := &limiter.Rule{Rate: 1e6, Burst: 1000}
	for _, keys := range []int{1, 10_000} {
		names := make([]string, keys)
		for i := range names {
			names[i] = "d" + strconv.Itoa(i) + ".example"
		}
		reserveWith := func(opts ...redislimiter.Option) func(*testing.B) {
			opts = append(opts, redislimiter.WithLogger(slog.New(slog.DiscardHandler)))
			l, err := redislimiter.New(client, opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { l.Close() })
			var next atomic.Uint64
			return func(b *testing.B) {
				req := limiter.Request{Key: names[next.Add(1)%uint64(keys)], Rule: rule}
				if res, err := l.Reserve(ctx, req); err != nil || res.Degraded() || !res.OK() {
					b.Errorf("reserve: %v (degraded %v, ok %v)", err, res.Degraded(), res.OK())
				}
			}
		}
		handoff, none := reserveWith(), reserveWith(redislimiter.WithFailOpen())
		timeOps(b, handoff, 2*keys, true) // loads the script, makes the connections, meets every domain
		timeOps(b, none, 2*keys, true)
		b.Run("keys="+strconv.Itoa(keys), func(b *testing.B) {
			var handoffNs, noneNs, ratios []float64
			b.ReportAllocs()
			b.ResetTimer()
			for done, i := 0, 0; done < b.N; done, i = done+turn, i+1 {
				n := min(turn, b.N-done)
				var h, o float64
				if i%2 == 0 {
					h, o = timeOps(b, handoff, n, true), timeOps(b, none, n, true)
				} else {
					o, h = timeOps(b, none, n, true), timeOps(b, handoff, n, true)
				}
				handoffNs, noneNs, ratios = append(handoffNs, h), append(noneNs, o), append(ratios, h/o)
			}
			b.ReportMetric(median(handoffNs), "handoff-ns/op")
			b.ReportMetric(median(noneNs), "none-ns/op")
			b.ReportMetric(median(ratios), "handoff/none")
		})
	}
}
