// The cost of a request and of a tracked domain at 1 to 1,000,000 domains,
// round robin, for polite, the naive map and the naive map bounded by an
// LRU, in one run:
//
//	go test -run '^$' -bench Domains -benchtime 1000000x ./benchmarks
//
// or each in a process of its own, over rounds, with the ratios:
//
//	benchmarks/ratios

package benchmarks

import (
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/polite-go/polite"
)

// lruSize is the bound of the LRU-bounded naive map.
const lruSize = 10_000

// tracker is a transport that says how many domains it tracks.
type tracker interface {
	http.RoundTripper
	tracked() int
}

type politeTracker struct{ *polite.Transport }

func (p politeTracker) tracked() int { return len(p.AllStats()) }

func (t *naiveTransport) tracked() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.limiters)
}

func (t *lruNaiveTransport) tracked() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lru.Len()
}

func newTracker(b *testing.B, name string) tracker {
	switch name {
	case "polite":
		tr, err := polite.NewTransport(nopBase{}, polite.WithDefault(unlimited))
		if err != nil {
			b.Fatal(err)
		}
		return politeTracker{tr}
	case "naive":
		return newNaiveTransport(nopBase{}, unlimited.RequestsPerSecond, unlimited.Burst)
	default:
		return newLRUNaiveTransport(nopBase{}, unlimited.RequestsPerSecond, unlimited.Burst, lruSize)
	}
}

// hosts returns n hosts, each its own registrable domain.
func hosts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("www.site%d.com", i)
	}
	return out
}

// BenchmarkDomains sends requests round robin over 1 to 1,000,000 domains
// through each transport, serially and in parallel, with a no-op base and
// a limit that never makes a request wait, and reports the CPU time per
// request and the heap per tracked domain.
func BenchmarkDomains(b *testing.B) {
	for _, n := range []int{1, 1_000, 100_000, 1_000_000} {
		names := hosts(n)
		for _, mode := range []string{"serial", "parallel"} {
			for _, name := range []string{"polite", "naive", "lru-naive"} {
				b.Run(fmt.Sprintf("%d/%s/%s", n, mode, name), func(b *testing.B) {
					runtime.GC()
					var before runtime.MemStats
					runtime.ReadMemStats(&before)
					rt := newTracker(b, name)
					b.ReportAllocs()
					b.ResetTimer()
					stop := reportCPU(b)
					if mode == "serial" {
						roundRobin(b, rt, names, new(atomic.Int64), b.N)
					} else {
						var next atomic.Int64
						b.RunParallel(func(pb *testing.PB) {
							for pb.Next() {
								roundRobin(b, rt, names, &next, 1)
							}
						})
					}
					stop()
					b.StopTimer()
					runtime.GC()
					var after runtime.MemStats
					runtime.ReadMemStats(&after)
					if n := rt.tracked(); n > 0 {
						b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "B/domain")
						b.ReportMetric(float64(n), "domains")
					}
					runtime.KeepAlive(rt)
				})
			}
		}
	}
}

// roundRobin sends count requests through rt, each to the next host of
// names after the one next counts.
func roundRobin(b *testing.B, rt http.RoundTripper, names []string, next *atomic.Int64, count int) {
	req := &http.Request{Method: http.MethodGet, URL: &url.URL{Scheme: "https", Path: "/page"}, Header: http.Header{}}
	for range count {
		req.URL.Host = names[int(next.Add(1)-1)%len(names)]
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}
