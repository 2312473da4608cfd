package benchmarks

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// BenchmarkPermits measures what a fleet gets from one Redis: permits per
// second with 1 and with 64 callers over 1,000 keys, side by side in one
// run, for redis_rate's Allow, polite's redislimiter Reserve, and a request
// through a polite Transport over redislimiter (a base that answers at
// once, a limit that never makes a request wait). The three run by turns,
// the first of a turn rotating, so that all meet the same load on a busy
// machine; each reports the median of its turns' permits/s, and with 1
// caller the median time of one permit (p50). transport/redis_rate is the
// median of the turns' ratios of the Transport's permits/s to
// redis_rate's: at least 1, the Transport over Redis is as fast. Its ns/op
// counts one permit of each. It also reports the CPU time of the whole
// Redis server per permit (INFO cpu), sockets included: where Redis is the
// bottleneck, what bounds a fleet. Bound it with -benchtime, e.g.
//
//	go test -run '^$' -bench Permits -benchtime 30000x ./benchmarks
func BenchmarkPermits(b *testing.B) {
	srv := redistest.Start(b)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	b.Cleanup(func() { client.Close() })
	ctx := context.Background()
	const keys = 1000
	names := make([]string, keys)
	for i := range names {
		names[i] = "site" + strconv.Itoa(i) + ".com"
	}

	gcra := redis_rate.NewLimiter(client)
	limit := redis_rate.Limit{Rate: 1e6, Burst: 1000, Period: time.Second}
	allow := func(i int) error {
		res, err := gcra.Allow(ctx, names[i%keys], limit)
		if err == nil && res.Allowed != 1 {
			err = fmt.Errorf("allow: not allowed: %v", res)
		}
		return err
	}
	l, err := redislimiter.New(client, redislimiter.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	rule := &limiter.Rule{Rate: 1e6, Burst: 1000}
	reserve := func(i int) error {
		res, err := l.Reserve(ctx, limiter.Request{Key: names[i%keys], Rule: rule})
		if err == nil && (res.Degraded() || !res.OK() || res.Wait() > 0) {
			err = fmt.Errorf("reserve: degraded %v, ok %v, wait %v", res.Degraded(), res.OK(), res.Wait())
		}
		return err
	}
	tr, err := polite.NewTransport(nopBase{}, polite.WithLimiter(l), polite.WithDefault(unlimited))
	if err != nil {
		b.Fatal(err)
	}
	reqs := requests(keys)
	roundTrip := func(i int) error {
		resp, err := tr.RoundTrip(reqs[i%keys])
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	cases := []struct {
		name string
		op   func(int) error
	}{{"redis_rate", allow}, {"redislimiter", reserve}, {"transport", roundTrip}}
	for _, c := range cases {
		if _, err := permitTurn(c.op, 2*keys, 64, nil); err != nil { // loads the scripts, makes connections, meets every key
			b.Fatal(err)
		}
	}

	for _, callers := range []int{1, 64} {
		b.Run("callers="+strconv.Itoa(callers), func(b *testing.B) {
			turn := 100 * callers
			rates := make([][]float64, len(cases))
			redisCPU := make([]float64, len(cases)) // seconds
			ops := make([]int, len(cases))
			latencies := make([][]time.Duration, len(cases))
			var ratios []float64
			b.ResetTimer()
			for done, i := 0, 0; done < b.N; done, i = done+turn, i+1 {
				n := min(turn, b.N-done)
				got := make([]float64, len(cases))
				for k := range cases {
					c := (i + k) % len(cases)
					var lat *[]time.Duration
					if callers == 1 {
						lat = &latencies[c]
					}
					cpu0 := redisCPUSeconds(b, client)
					rate, err := permitTurn(cases[c].op, n, callers, lat)
					if err != nil {
						b.Fatal(err)
					}
					redisCPU[c] += redisCPUSeconds(b, client) - cpu0
					ops[c] += n
					got[c] = rate
					rates[c] = append(rates[c], rate)
				}
				ratios = append(ratios, got[2]/got[0])
			}
			for c, tt := range cases {
				b.ReportMetric(median(rates[c]), tt.name+"-permits/s")
				b.ReportMetric(redisCPU[c]*1e6/float64(ops[c]), tt.name+"-redis-cpu-µs/permit")
				if callers == 1 {
					b.ReportMetric(float64(medianDuration(latencies[c]))/1e3, tt.name+"-p50-µs")
				}
			}
			b.ReportMetric(median(ratios), "transport/redis_rate")
		})
	}
}

// permitTurn runs op n times on callers goroutines, each with the next
// number of a shared counter, and returns the permits per second; with
// latencies, it appends each op's time there (for one caller).
func permitTurn(op func(int) error, n, callers int, latencies *[]time.Duration) (float64, error) {
	var next atomic.Int64
	var mu sync.Mutex
	var failed error
	var wg sync.WaitGroup
	start := time.Now()
	for range callers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t := time.Now()
				if err := op(i); err != nil {
					mu.Lock()
					failed = cmp.Or(failed, err)
					mu.Unlock()
					return
				}
				if latencies != nil {
					*latencies = append(*latencies, time.Since(t))
				}
			}
		})
	}
	wg.Wait()
	if failed != nil {
		return 0, failed
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

func medianDuration(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// redisCPUSeconds returns the CPU time the Redis that client reaches has
// used, user and system.
func redisCPUSeconds(b *testing.B, client *redis.Client) float64 {
	info := redisInfo(b, client, "cpu")
	user, _ := strconv.ParseFloat(info["used_cpu_user"], 64)
	sys, _ := strconv.ParseFloat(info["used_cpu_sys"], 64)
	return user + sys
}
