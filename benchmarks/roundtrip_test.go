// The side-by-side comparison of a bare transport, the seed's naive design
// (naive_test.go) and polite, run from the repository's root:
//
//	go test -run '^$' -bench RoundTrip -benchmem -count 8 ./benchmarks

package benchmarks

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// nopBody is an empty response body that costs no allocation.
type nopBody struct{}

func (nopBody) Read([]byte) (int, error) { return 0, io.EOF }
func (nopBody) Close() error             { return nil }

// nopBase answers every request at once, as cheaply as a base can.
type nopBase struct{}

func (nopBase) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: nopBody{}, Request: req}, nil
}

// unlimited never makes a request wait, so the benchmarks measure the
// cost of the bookkeeping alone.
var unlimited = config.Limit{RequestsPerSecond: 1e12, Burst: 1 << 30}

func benchTransports(b *testing.B) map[string]http.RoundTripper {
	tr, err := polite.NewTransport(nopBase{}, polite.WithDefault(unlimited))
	if err != nil {
		b.Fatal(err)
	}
	return map[string]http.RoundTripper{
		"bare":   nopBase{},
		"naive":  newNaiveTransport(nopBase{}, unlimited.RequestsPerSecond, unlimited.Burst),
		"polite": tr,
	}
}

func requests(n int) []*http.Request {
	reqs := make([]*http.Request, n)
	for i := range reqs {
		u, _ := url.Parse(fmt.Sprintf("https://www.site%d.com/page", i))
		reqs[i] = &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}}
	}
	return reqs
}

// BenchmarkRoundTrip compares, in one run, the bare base transport, the
// seed notes' naive design and polite, on one domain serially and over
// 1000 domains in parallel, when tokens are always available.
func BenchmarkRoundTrip(b *testing.B) {
	for _, name := range []string{"bare", "naive", "polite"} {
		b.Run("serial/"+name, func(b *testing.B) {
			rt := benchTransports(b)[name]
			req := requests(1)[0]
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
	for _, name := range []string{"bare", "naive", "polite"} {
		b.Run("parallel1000/"+name, func(b *testing.B) {
			rt := benchTransports(b)[name]
			reqs := requests(1000)
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b)()
			b.RunParallel(func(pb *testing.PB) {
				i := rand.IntN(len(reqs))
				for pb.Next() {
					resp, err := rt.RoundTrip(reqs[i%len(reqs)])
					if err != nil {
						b.Error(err)
						return
					}
					resp.Body.Close()
					i += 7
				}
			})
		})
	}
}

// reportCPU reports the CPU time the process spent per operation, user and
// system, GC included. Unlike ns/op it barely moves when other processes
// load the machine, so it is the figure to compare. Call its result when
// the measured loop is over.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
