package benchmarks

import (
	"context"
	"net/http"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// The crowd of BenchmarkDeparture: crowdDomains domains, crowdPerDomain
// requests each, all waiting at once, at 2/s burst 1.
const (
	crowdDomains   = 10_000
	crowdPerDomain = 6
	crowdInterval  = 500 * time.Millisecond
)

// BenchmarkDeparture measures what the server sees when 60,000 requests
// wait at once (10,000 domains × 6 at 2/s burst 1), through polite and
// through the naive map of rate.Limiters doing Wait, side by side in each
// iteration, with the machine quiet and with six CPU-bound processes
// beside it (a noisy neighbour; each ends with the run, and within a
// minute in any case). The base records each request's arrival per
// domain. For each design it reports: the smallest gap between two
// arrivals of one domain (min-gap-ms), the share of gaps at least 90% of
// the interval (share90), how many gaps are shorter than 20% of it
// (gaps<20%), the 99th percentile and the largest lateness,
// a gap less the interval (p99-late-ms, max-late-ms), and the process's
// CPU time per request (cpu-us/req, from getrusage). It is CPU heavy and
// takes about 10 s an iteration:
//
//	go test -run '^$' -bench Departure -benchtime 1x ./benchmarks
func BenchmarkDeparture(b *testing.B) {
	for _, loops := range []int{0, 6} {
		b.Run("loops="+strconv.Itoa(loops), func(b *testing.B) {
			for range b.N {
				stop := startSpinners(b, loops)
				for _, design := range []string{"map", "polite"} {
					r := runCrowd(b, design)
					b.ReportMetric(r.minGap, design+"-min-gap-ms")
					b.ReportMetric(r.share90, design+"-share90")
					b.ReportMetric(float64(r.below20), design+"-gaps<20%")
					b.ReportMetric(r.p99Late, design+"-p99-late-ms")
					b.ReportMetric(r.maxLate, design+"-max-late-ms")
					b.ReportMetric(r.cpuPerRequest, design+"-cpu-us/req")
				}
				stop()
			}
		})
	}
}

// crowdResult is what one design's run of the crowd measured.
type crowdResult struct {
	minGap, share90, p99Late, maxLate float64 // gaps and lateness in ms
	below20                           int     // gaps shorter than 20% of the interval
	cpuPerRequest                     float64 // µs
}

// runCrowd sends the crowd through design ("polite" or "map") and
// measures it.
func runCrowd(b *testing.B, design string) crowdResult {
	b.Helper()
	rec := newArrivals(crowdDomains, crowdPerDomain)
	limit := config.Limit{RequestsPerSecond: 2, Burst: 1}
	var rt http.RoundTripper
	if design == "polite" {
		tr, err := polite.NewTransport(rec, polite.WithDefault(limit), polite.WithMaxDomains(2*crowdDomains))
		if err != nil {
			b.Fatal(err)
		}
		rt = tr
	} else {
		rt = newNaiveTransport(rec, limit.RequestsPerSecond, limit.Burst)
	}
	names := hosts(crowdDomains)
	runtime.GC() // each design starts from a clean heap
	cpuBefore := processCPU()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for d := range crowdDomains {
		for range crowdPerDomain {
			wg.Go(func() {
				req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+names[d]+"/", nil)
				if err != nil {
					failed.Add(1)
					return
				}
				resp, err := rt.RoundTrip(req)
				if err != nil {
					failed.Add(1)
					return
				}
				resp.Body.Close()
			})
		}
	}
	wg.Wait()
	cpu := processCPU() - cpuBefore
	if n := failed.Load(); n > 0 {
		b.Fatalf("%s: %d requests failed", design, n)
	}
	r := rec.measure(b, crowdInterval)
	r.cpuPerRequest = float64(cpu.Microseconds()) / float64(crowdDomains*crowdPerDomain)
	return r
}

// arrivals is a base that answers at once and records when each request
// arrived, per domain (hosts' www.siteN.com); it never blocks.
type arrivals struct {
	at    [][]int64 // per domain, Unix nanoseconds
	count []atomic.Int32
}

func newArrivals(domains, per int) *arrivals {
	a := &arrivals{at: make([][]int64, domains), count: make([]atomic.Int32, domains)}
	for i := range a.at {
		a.at[i] = make([]int64, per)
	}
	return a
}

func (a *arrivals) RoundTrip(req *http.Request) (*http.Response, error) {
	now := time.Now().UnixNano()
	host := strings.TrimSuffix(strings.TrimPrefix(req.URL.Hostname(), "www.site"), ".com")
	if d, err := strconv.Atoi(host); err == nil && d < len(a.at) {
		if i := int(a.count[d].Add(1)) - 1; i < len(a.at[d]) {
			a.at[d][i] = now
		}
	}
	return nopBase{}.RoundTrip(req)
}

// measure reads the gaps between consecutive arrivals of each domain
// against interval.
func (a *arrivals) measure(b *testing.B, interval time.Duration) crowdResult {
	var late []float64
	r := crowdResult{minGap: -1}
	atLeast90 := 0
	for d := range a.at {
		if n := int(a.count[d].Load()); n != len(a.at[d]) {
			b.Fatalf("domain %d: %d arrivals, want %d", d, n, len(a.at[d]))
		}
		times := a.at[d]
		slices.Sort(times)
		for i := 1; i < len(times); i++ {
			gap := time.Duration(times[i] - times[i-1])
			ms := float64(gap) / float64(time.Millisecond)
			if r.minGap < 0 || ms < r.minGap {
				r.minGap = ms
			}
			if gap >= interval*9/10 {
				atLeast90++
			}
			if gap < interval/5 {
				r.below20++
			}
			late = append(late, float64(gap-interval)/float64(time.Millisecond))
		}
	}
	slices.Sort(late)
	r.share90 = float64(atLeast90) / float64(len(late))
	r.p99Late = late[len(late)*99/100]
	r.maxLate = late[len(late)-1]
	return r
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startSpinners starts n CPU-bound processes, a noisy neighbour, and
// returns what stops them; each stops after a minute in any case.
func startSpinners(b *testing.B, n int) (stop func()) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	var cmds []*exec.Cmd
	for range n {
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			cancel()
			b.Fatalf("starting a CPU-bound process: %v", err)
		}
		cmds = append(cmds, cmd)
	}
	return func() {
		cancel()
		for _, cmd := range cmds {
			_ = cmd.Wait()
		}
	}
}
