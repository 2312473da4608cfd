package polite_test

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/heaptest"
	"github.com/polite-go/polite/limiter"
)

// paced reports whether a second request to rawURL, sent right after a
// first one, is refused by a one-minute WithMaxWait: that is, whether the
// domain's limit is the hour-long one the test configured.
func paced(t *testing.T, tr *polite.Transport, rawURL string) bool {
	t.Helper()
	require.NoError(t, roundTrip(t, tr, context.Background(), rawURL))
	return roundTrip(t, tr, context.Background(), rawURL) != nil
}

// byTenant keys requests by their "t" query parameter.
func byTenant(req *http.Request) (string, error) { return req.URL.Query().Get("t"), nil }

func TestDomainConfigNames(t *testing.T) {
	tests := []struct {
		name    string
		keyFunc polite.KeyFunc
		domain  string
		slow    []string // URLs paced by the domain's limit
		fast    []string // URLs paced by the (fast) default
	}{
		{"registrable domain", polite.DomainKey, "example.com", []string{"http://www.example.com/", "https://api.example.com:8443/x"}, []string{"http://example.org/"}},
		{"default key function", nil, "example.com", []string{"http://www.example.com/", "https://api.example.com:8443/x", "http://EXAMPLE.com./"}, []string{"http://example.org/"}},
		{"default, unicode", nil, "MÜNCHEN.de", []string{"http://www.xn--mnchen-3ya.de/", "http://münchen.de/"}, nil},
		{"default, ipv6", nil, "2001:db8::1", []string{"http://[2001:DB8::1]:8080/", "http://[2001:db8::1]/"}, nil},
		{"upper case", polite.DomainKey, "Example.COM", []string{"http://www.example.com/"}, nil},
		{"trailing dot", polite.DomainKey, "example.com.", []string{"http://example.com/"}, nil},
		{"unicode", polite.DomainKey, "MÜNCHEN.de", []string{"http://www.xn--mnchen-3ya.de/", "http://münchen.de/"}, nil},
		{"punycode", polite.DomainKey, "xn--mnchen-3ya.de", []string{"http://www.münchen.de/"}, nil},
		{"ip", polite.DomainKey, "192.0.2.1", []string{"http://192.0.2.1:8080/"}, nil},
		{"ipv6", polite.DomainKey, "2001:db8::1", []string{"http://[2001:DB8::1]:8080/"}, nil},
		{"ipv6 in brackets", polite.DomainKey, "[2001:db8::1]", []string{"http://[2001:db8::1]/"}, nil},
		{"single label", polite.DomainKey, "intranet", []string{"http://intranet/"}, nil},
		{"subdomain under HostKey", polite.HostKey, "www.example.com", []string{"http://WWW.example.com:80/"}, []string{"http://api.example.com/", "http://example.com/"}},
		{"bare public suffix", polite.DomainKey, "co.uk", []string{"http://co.uk/"}, []string{"http://example.co.uk/"}},
		{"custom key taken as written", byTenant, "Tenant-A", []string{"http://example.com/?t=Tenant-A", "http://example.org/?t=Tenant-A"}, []string{"http://example.com/?t=tenant-a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTransport(t, countingBase(new(atomic.Int64)),
				polite.WithKeyFunc(tt.keyFunc),
				polite.WithDefault(fastLimit),
				polite.WithDomain(tt.domain, everyHour),
				polite.WithMaxWait(time.Minute))
			for i, u := range tt.slow {
				if i == 0 {
					assert.True(t, paced(t, tr, u), "%s is paced by the %q entry", u, tt.domain)
				} else {
					assert.Error(t, roundTrip(t, tr, context.Background(), u), "%s shares the %q entry's pace", u, tt.domain)
				}
			}
			for _, u := range tt.fast {
				assert.False(t, paced(t, tr, u), "%s is not paced by the %q entry", u, tt.domain)
			}
		})
	}
}

func TestDomainConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		opts   []polite.Option
		domain string // the domain the error must name
		field  string
	}{
		{"subdomain under DomainKey can never match", []polite.Option{polite.WithDomain("www.example.com", everySecond)}, "www.example.com", "domains"},
		{"empty domain", []polite.Option{polite.WithDomain("", everySecond)}, "", "domains"},
		{"bad host", []polite.Option{polite.WithDomain("exa mple.com", everySecond)}, "exa mple.com", "domains"},
		{"negative rate", []polite.Option{polite.WithDomain("example.com", config.Limit{RequestsPerSecond: -1, Burst: 1})}, "example.com", "requests_per_second"},
		{"negative burst", []polite.Option{polite.WithDomain("example.com", config.Limit{RequestsPerSecond: 1, Burst: -1})}, "example.com", "burst_capacity"},
		{"a burst the default's rate refills too slowly", []polite.Option{polite.WithDefault(config.Limit{RequestsPerSecond: 1e-6}), polite.WithDomain("example.com", config.Limit{Burst: 100})}, "example.com", "burst_capacity"},
		{"negative min_delay", []polite.Option{polite.WithDomain("example.com", config.Limit{MinDelay: -time.Second})}, "example.com", "min_delay"},
		{"negative jitter", []polite.Option{polite.WithDomain("example.com", config.Limit{MinDelay: time.Second, Jitter: -1})}, "example.com", "jitter"},
		{"negative max_concurrent", []polite.Option{polite.WithDomain("example.com", config.Limit{MinDelay: time.Second, MaxConcurrent: -1})}, "example.com", "max_concurrent"},
		{"quota of 0 requests", []polite.Option{polite.WithDomain("example.com", config.Limit{MinDelay: time.Second, Quotas: []config.Quota{{Requests: 0, Window: time.Hour}}})}, "example.com", "quotas[0].requests"},
		{"quota without window", []polite.Option{polite.WithDomain("example.com", config.Limit{MinDelay: time.Second, Quotas: []config.Quota{{Requests: 5, Window: time.Hour}, {Requests: 5}}})}, "example.com", "quotas[1].window"},
		{"invalid default", []polite.Option{polite.WithDefault(config.Limit{Jitter: -1})}, "default_config", "jitter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := polite.NewTransport(nil, tt.opts...)

			require.Error(t, err)
			assert.Nil(t, tr)
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.domain, fe.Domain)
			assert.Equal(t, tt.field, fe.Field)
			assert.Contains(t, err.Error(), fmt.Sprintf("%q", tt.domain), "the message names the domain")
		})
	}
}

func TestDomainConfigDuplicates(t *testing.T) {
	for _, names := range [][2]string{
		{"example.com", "EXAMPLE.com"},
		{"example.com", "example.com."},
		{"münchen.de", "xn--mnchen-3ya.de"},
	} {
		t.Run(names[1], func(t *testing.T) {
			f := &config.File{Default: everySecond, Domains: map[string]config.Limit{names[0]: everySecond, names[1]: everyHour}}
			require.NoError(t, f.Validate())

			_, err := polite.NewTransport(nil, polite.WithConfig(f))

			var fe *config.FieldError
			require.ErrorAs(t, err, &fe, "two entries of one config for one domain")
			assert.Equal(t, "domains", fe.Field)
			assert.Contains(t, names, fe.Domain)
			assert.ErrorContains(t, err, "same domain")
		})
	}
	t.Run("a later option for the same domain replaces the earlier", func(t *testing.T) {
		f := &config.File{Default: fastLimit, Domains: map[string]config.Limit{"Example.com": everyHour, "example.org": everyHour}}
		tr, err := polite.NewTransport(countingBase(new(atomic.Int64)), polite.WithConfig(f),
			polite.WithDomain("EXAMPLE.com.", everyHour), polite.WithDomain("example.com", fastLimit),
			polite.WithMaxWait(time.Minute))
		require.NoError(t, err)
		assert.False(t, paced(t, tr, "http://example.com/"))
		assert.True(t, paced(t, tr, "http://example.org/"), "other entries of the config stay")
	})
}

// Zero or nil given to an option means its default.
func TestDomainOptionZeroIsTheDefault(t *testing.T) {
	var calls atomic.Int64
	tr, err := polite.NewTransport(countingBase(&calls), polite.WithKeyFunc(nil), polite.WithMaxDomains(0),
		polite.WithMaxPause(0), polite.WithLogger(nil), polite.WithConfig(nil), polite.WithLimiter(nil),
		polite.WithDefault(everySecond), polite.WithMaxWait(time.Minute))
	require.NoError(t, err)
	require.NoError(t, roundTrip(t, tr, context.Background(), "http://www.example.com/"))
	require.NoError(t, roundTrip(t, tr, context.Background(), "http://api.example.com/"))
	_, ok := tr.Stats("example.com")
	assert.True(t, ok, "DomainKey keys the requests")
	assert.Equal(t, int64(2), calls.Load())
}

func TestDomainOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opt  polite.Option
		want string
	}{
		{"negative max domains", polite.WithMaxDomains(-1), "WithMaxDomains"},
		{"negative max wait", polite.WithMaxWait(-time.Second), "WithMaxWait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := polite.NewTransport(nil, tt.opt)
			assert.Nil(t, tr)
			assert.ErrorContains(t, err, tt.want)
			assert.Regexp(t, "^polite: ", err.Error())
		})
	}
}

func TestDomainWithConfig(t *testing.T) {
	f, err := config.Parse([]byte(`{
		"version": "1.0",
		"default_config": {"requests_per_second": 2, "burst_capacity": 1},
		"domains": {
			"Example.com": {"min_delay": "3s"},
			"example.org": {"requests_per_second": 1, "burst_capacity": 1, "disabled": true}
		}
	}`))
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithConfig(f))
		waits := func(rawURL string) time.Duration {
			require.NoError(t, roundTrip(t, tr, context.Background(), rawURL))
			start := time.Now()
			require.NoError(t, roundTrip(t, tr, context.Background(), rawURL))
			return time.Since(start)
		}
		assert.Equal(t, 500*time.Millisecond, waits("http://other.net/"), "default_config")
		assert.Equal(t, 3*time.Second, waits("http://www.example.com/"), "domains entry")
		assert.Equal(t, time.Duration(0), waits("http://example.org/"), "disabled entry")
	})
	t.Run("later options override it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithConfig(f),
				polite.WithDefault(config.Limit{MinDelay: time.Minute}), polite.WithDomain("example.com", config.Limit{MinDelay: time.Hour}))
			start := time.Now()
			for range 2 {
				require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/"))
				require.NoError(t, roundTrip(t, tr, context.Background(), "http://other.net/"))
			}
			assert.Equal(t, time.Hour, time.Since(start))
			assert.Equal(t, time.Minute, tr.RemainingWait("other.net"), "WithDefault replaced default_config")
		})
	})
	t.Run("nil config changes nothing", func(t *testing.T) {
		_, err := polite.NewTransport(nil, polite.WithConfig(nil))
		assert.NoError(t, err)
	})
}

func TestDomainStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, countingBase(new(atomic.Int64)),
			polite.WithDomain("example.com", config.Limit{MinDelay: 10 * time.Millisecond}),
			polite.WithDomain("example.org", config.Limit{MinDelay: 11 * time.Millisecond}),
			polite.WithMaxWait(time.Minute))
		start := time.Now()
		for _, u := range []string{"http://example.com/", "http://example.org/"} {
			for range 3 {
				require.NoError(t, roundTrip(t, tr, context.Background(), u))
			}
		}
		com, ok := tr.Stats("EXAMPLE.com")
		require.True(t, ok, "Stats normalises the name")
		assert.Equal(t, "example.com", com.Domain)
		assert.Equal(t, int64(3), com.TotalRequests)
		assert.Equal(t, int64(0), com.DelayedRequests, "a 10ms wait is not a delay")
		org, ok := tr.Stats("example.org")
		require.True(t, ok)
		assert.Equal(t, int64(2), org.DelayedRequests, "an 11ms wait is")
		assert.Equal(t, 2*11*time.Millisecond, org.TotalWaitTime)
		assert.Equal(t, 11*time.Millisecond, org.AverageWaitTime)
		assert.InDelta(t, 2.0/3, org.DelayRate, 1e-9)
		assert.Equal(t, start.Add(2*10*time.Millisecond+2*11*time.Millisecond), org.LastRequestTime)

		// Refused and cancelled requests are counted apart, never as sent.
		slow := newTransport(t, countingBase(new(atomic.Int64)), polite.WithDefault(everyHour), polite.WithMaxWait(time.Minute))
		require.NoError(t, roundTrip(t, slow, context.Background(), "http://example.net/"))
		assert.Error(t, roundTrip(t, slow, context.Background(), "http://example.net/"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.Error(t, roundTrip(t, slow, ctx, "http://example.net/"))
		s, ok := slow.Stats("example.net")
		require.True(t, ok)
		assert.Equal(t, int64(1), s.TotalRequests)
		assert.Equal(t, int64(2), s.CanceledRequests)

		all := tr.AllStats()
		assert.Len(t, all, 2)
		assert.Equal(t, com, all["example.com"])
		assert.Equal(t, org, all["example.org"])
		_, ok = tr.Stats("example.net")
		assert.False(t, ok, "a domain never seen has no stats")
	})
}

func TestDomainStatsAreCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, countingBase(new(atomic.Int64)),
			polite.WithDefault(config.Limit{RequestsPerSecond: 100, Burst: 10, Quotas: []config.Quota{{Requests: 3, Window: time.Hour}}}))
		start := time.Now()
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/"))
		before, _ := tr.Stats("example.com")
		all := tr.AllStats()
		require.Len(t, before.Quotas, 1)
		assert.Equal(t, 2, before.Quotas[0].Remaining)
		assert.Equal(t, start.Add(time.Hour), before.Quotas[0].NextFree)
		assert.Equal(t, 3, before.Quotas[0].Limit)
		before.Quotas[0].Remaining = 99

		time.Sleep(time.Minute)
		resp, err := tr.RoundTrip(get(t, context.Background(), "http://example.com/"))
		require.NoError(t, err)
		after, _ := tr.Stats("example.com")
		assert.Equal(t, int64(2), after.TotalRequests)
		assert.Equal(t, int64(1), after.InFlight, "the body is still open")
		assert.Equal(t, 1, after.Quotas[0].Remaining, "the caller's change did not leak back")
		assert.Equal(t, start.Add(time.Hour), after.Quotas[0].NextFree)
		assert.Equal(t, int64(1), all["example.com"].TotalRequests, "an older copy does not change")
		resp.Body.Close()
		after, _ = tr.Stats("example.com")
		assert.Equal(t, int64(0), after.InFlight)
	})
}

func TestDomainRemainingWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithDefault(config.Limit{MinDelay: 2 * time.Second}))
		assert.Equal(t, time.Duration(0), tr.RemainingWait("example.com"), "never seen")
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/"))
		for range 5 {
			assert.Equal(t, 2*time.Second, tr.RemainingWait("example.com"), "asking consumes nothing")
		}
		assert.Equal(t, 2*time.Second, tr.RemainingWait("Example.COM."))
		time.Sleep(1500 * time.Millisecond)
		assert.Equal(t, 500*time.Millisecond, tr.RemainingWait("example.com"))
		start := time.Now()
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/"))
		assert.Equal(t, 500*time.Millisecond, time.Since(start))
		assert.Equal(t, time.Duration(0), tr.RemainingWait("example.org"))
	})
}

func TestDomainUnpaced(t *testing.T) {
	tests := []struct {
		name string
		opts []polite.Option
		urls []string
	}{
		{"disabled", []polite.Option{polite.WithDomain("example.com", config.Limit{Disabled: true, MaxConcurrent: 1})}, []string{"http://example.com/", "http://www.example.com/"}},
		{"loopback exempt", []polite.Option{polite.WithLoopbackExempt()}, []string{"http://localhost:8080/", "http://127.0.0.1/", "http://127.3.4.5:99/", "http://[::1]:8080/", "http://app.localhost/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newTransport(t, countingBase(new(atomic.Int64)), tt.opts...)
				start := time.Now()
				var held []*http.Response
				for range 3 {
					for _, u := range tt.urls {
						resp, err := tr.RoundTrip(get(t, context.Background(), u))
						require.NoError(t, err)
						held = append(held, resp) // not closed: no cap applies
					}
				}
				assert.Equal(t, time.Duration(0), time.Since(start), "sent at once")
				var total int64
				for _, s := range tr.AllStats() {
					total += s.TotalRequests
					assert.Zero(t, s.DelayedRequests)
				}
				assert.Equal(t, int64(3*len(tt.urls)), total, "stats still recorded")
				for _, u := range tt.urls {
					req := get(t, context.Background(), u)
					key, err := polite.DomainKey(req)
					require.NoError(t, err)
					assert.Zero(t, tr.RemainingWait(key))
				}
				for _, resp := range held {
					resp.Body.Close()
				}
			})
		})
	}
	t.Run("loopback paced without the option", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := newTransport(t, countingBase(new(atomic.Int64)))
			start := time.Now()
			for range 2 {
				require.NoError(t, roundTrip(t, tr, context.Background(), "http://localhost/"))
			}
			assert.Equal(t, time.Second, time.Since(start))
		})
	})
}

func TestDomainEviction(t *testing.T) {
	const max = 100
	tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithDefault(fastLimit), polite.WithMaxDomains(max),
		polite.WithDomain("slow.com", everyHour), polite.WithMaxWait(time.Minute))
	busy, err := tr.RoundTrip(get(t, context.Background(), "http://busy.com/"))
	require.NoError(t, err)
	require.NoError(t, roundTrip(t, tr, context.Background(), "http://slow.com/"))

	for i := range 10 * max {
		require.NoError(t, roundTrip(t, tr, context.Background(), fmt.Sprintf("http://site%d.com/", i)))
		require.LessOrEqual(t, len(tr.AllStats()), max, "after %d domains", i+3)
		_, ok := tr.Stats(fmt.Sprintf("site%d.com", i))
		require.True(t, ok, "the newest domain is tracked")
	}

	s, ok := tr.Stats("busy.com")
	require.True(t, ok, "a domain with a request in flight is never evicted")
	assert.Equal(t, int64(1), s.InFlight)
	busy.Body.Close()
	_, ok = tr.Stats("slow.com")
	assert.False(t, ok, "an idle domain was evicted with its stats")
	assert.Greater(t, tr.RemainingWait("slow.com"), 59*time.Minute, "the limiter still knows its pace")
	err = roundTrip(t, tr, context.Background(), "http://slow.com/")
	assert.ErrorIs(t, err, limiter.ErrWaitTooLong, "eviction does not reset a domain's pace")
}

func TestDomainEvictionUnderConcurrency(t *testing.T) {
	// Few table places for many busy domains: domains are evicted and
	// re-created all the time while requests to them come and go. The
	// concurrency cap of one must hold throughout, which it would not if a
	// domain ever existed twice. Each domain is reached through two hosts,
	// so that one host can meet the domain another host re-created.
	const (
		max        = 8
		hot        = 32
		goroutines = 32
		perG       = 300
	)
	var (
		mu       sync.Mutex
		inFlight = map[string]int{}
		over     atomic.Int64
	)
	tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
		_, domain, _ := strings.Cut(req.URL.Host, ".")
		mu.Lock()
		inFlight[domain]++
		if inFlight[domain] > 1 {
			over.Add(1)
		}
		mu.Unlock()
		runtime.Gosched()
		mu.Lock()
		inFlight[domain]--
		mu.Unlock()
		return answer(req, http.StatusOK), nil
	}), polite.WithMaxDomains(max), polite.WithDefault(config.Limit{RequestsPerSecond: 1e9, Burst: 1e6, MaxConcurrent: 1}))
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				u := fmt.Sprintf("http://%s.hot%d.com/", []string{"www", "api"}[i%2], (g*7+i)%hot)
				if !assert.NoError(t, roundTrip(t, tr, context.Background(), u)) {
					return
				}
			}
		})
	}
	wg.Wait()
	assert.Zero(t, over.Load(), "requests over a domain's concurrency cap")
	assert.LessOrEqual(t, len(tr.AllStats()), max+goroutines)
	for d, s := range tr.AllStats() {
		assert.Zero(t, s.InFlight, d)
	}
}

func TestDomainHeapPerTrackedDomain(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap over 20000 domains")
	}
	const n = 20000
	// A slow default keeps every domain's pace in the limiter for the
	// whole test, so the figure includes it.
	tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithMaxDomains(2*n),
		polite.WithDefault(config.Limit{RequestsPerSecond: 0.01, Burst: 1}))
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://www.domain%d.com/", i)
	}
	held := heaptest.Held(func() {
		for _, u := range urls {
			require.NoError(t, roundTrip(t, tr, context.Background(), u))
		}
	})
	require.Len(t, tr.AllStats(), n)
	perDomain := held / n
	t.Logf("heap per tracked domain: %d bytes", perDomain)
	assert.LessOrEqual(t, perDomain, int64(1024))
	runtime.KeepAlive(tr)
	runtime.KeepAlive(urls)
}

func TestDomainHeapStaysBoundedPastMaxDomains(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap over 32000 domains")
	}
	// n is eight times max: forgotten domains that stayed reachable
	// would show many times over.
	const (
		max = 2000
		n   = 8*2*max - 1
	)
	// A fast default lets the limiter forget each domain's pace at once,
	// so what stays is the Transport's own: its table of domains.
	tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithMaxDomains(max),
		polite.WithDefault(config.Limit{RequestsPerSecond: 1e6, Burst: 1}))
	held := heaptest.Held(func() {
		for i := range n {
			require.NoError(t, roundTrip(t, tr, context.Background(), fmt.Sprintf("http://www.domain%d.com/", i)))
		}
	})
	tracked := len(tr.AllStats())
	require.LessOrEqual(t, tracked, max)
	perDomain := held / max
	t.Logf("heap per tracked domain after %d domains, at most %d tracked: %d bytes", n, max, perDomain)
	assert.LessOrEqual(t, perDomain, int64(1024), "forgotten domains must not stay reachable")
	runtime.KeepAlive(tr)
}

// A tracked domain costs the same whatever the length of the URL that
// made it: the table keeps no reference to the request's URL.
func TestDomainHeapIgnoresTheURLLength(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap over 4000 domains")
	}
	const n = 4000
	perDomain := func(path string) int64 {
		tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithMaxDomains(2*n),
			polite.WithDefault(config.Limit{RequestsPerSecond: 1e6, Burst: 1}))
		held := heaptest.Held(func() {
			for i := range n {
				u := fmt.Sprintf("http://www.long%d-%d.com/%s", len(path), i, path)
				require.NoError(t, roundTrip(t, tr, context.Background(), u))
			}
		})
		runtime.KeepAlive(tr)
		return held / n
	}
	short, long := perDomain("a"), perDomain(strings.Repeat("a", 4000))
	t.Logf("heap per tracked domain: %d bytes with a 1-byte path, %d with a 4,000-byte one", short, long)
	assert.Less(t, long, short+256, "a 4,000-byte path stays in memory")
}
