package benchmarks

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
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
	domain := naiveKey(req)
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
	return dl.roundTrip(t.base, req)
}

// naiveKey is the eTLD+1 of req's host, or the host.
func naiveKey(req *http.Request) string {
	domain, err := publicsuffix.EffectiveTLDPlusOne(req.URL.Hostname())
	if err != nil {
		domain = req.URL.Hostname()
	}
	return domain
}

// roundTrip waits for dl's limiter, counts the request and sends it.
func (dl *naiveDomain) roundTrip(base http.RoundTripper, req *http.Request) (*http.Response, error) {
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
	return base.RoundTrip(req)
}

// lruNaiveTransport is naiveTransport with its map bounded by an LRU of
// size domains (golang-lru's simplelru) under a mutex: what a careful
// user of x/time/rate would write for an unbounded number of domains.
type lruNaiveTransport struct {
	base  http.RoundTripper
	mu    sync.Mutex
	lru   *simplelru.LRU[string, *naiveDomain]
	rps   float64
	burst int
}

func newLRUNaiveTransport(base http.RoundTripper, rps float64, burst, size int) *lruNaiveTransport {
	l, err := simplelru.NewLRU[string, *naiveDomain](size, nil)
	if err != nil {
		panic(err)
	}
	return &lruNaiveTransport{base: base, lru: l, rps: rps, burst: burst}
}

func (t *lruNaiveTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	domain := naiveKey(req)
	t.mu.Lock()
	dl, ok := t.lru.Get(domain)
	if !ok {
		dl = &naiveDomain{limiter: rate.NewLimiter(rate.Limit(t.rps), t.burst)}
		t.lru.Add(strings.Clone(domain), dl)
	}
	t.mu.Unlock()
	return dl.roundTrip(t.base, req)
}
