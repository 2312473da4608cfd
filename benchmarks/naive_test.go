package benchmarks

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/publicsuffix"
	"golang.org/x/time/rate"
)

// naiveTransport is the design of seed notes 000 and 001 taken literally:
// an RWMutex-guarded map of rate.Limiters, the eTLD+1 computed on every
// request, and stats behind a mutex. The benchmarks measure polite against it.
type naiveTransport struct {
	base     http.RoundTripper
	mu       sync.RWMutex
	limiters map[string]*naiveDomain
	rps      float64
	burst    int
}

type naiveDomain struct {
	limiter         *rate.Limiter
	totalRequests   atomic.Int64
	delayedRequests atomic.Int64
	mu              sync.Mutex
	totalWaitTime   time.Duration
	lastRequestTime time.Time
}

func newNaiveTransport(base http.RoundTripper, rps float64, burst int) *naiveTransport {
	return &naiveTransport{base: base, limiters: map[string]*naiveDomain{}, rps: rps, burst: burst}
}

func (t *naiveTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	domain, err := publicsuffix.EffectiveTLDPlusOne(req.URL.Hostname())
	if err != nil {
		domain = req.URL.Hostname()
	}
	t.mu.RLock()
	dl, ok := t.limiters[domain]
	t.mu.RUnlock()
	if !ok {
		t.mu.Lock()
		if dl, ok = t.limiters[domain]; !ok {
			dl = &naiveDomain{limiter: rate.NewLimiter(rate.Limit(t.rps), t.burst)}
			t.limiters[domain] = dl
		}
		t.mu.Unlock()
	}
	start := time.Now()
	if err := dl.limiter.Wait(req.Context()); err != nil {
		return nil, err
	}
	wait := time.Since(start)
	dl.totalRequests.Add(1)
	if wait > 10*time.Millisecond {
		dl.delayedRequests.Add(1)
	}
	dl.mu.Lock()
	dl.totalWaitTime += wait
	dl.lastRequestTime = time.Now()
	dl.mu.Unlock()
	return t.base.RoundTrip(req)
}
