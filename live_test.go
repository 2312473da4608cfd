package polite_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// TestSetLimitSlowsADomainMidCrawl checks from the server's side that a
// SetLimit that slows a domain takes effect at its next turn: requests go
// back to back, then keep the new gap.
func TestSetLimitSlowsADomainMidCrawl(t *testing.T) {
	const gap = 300 * time.Millisecond
	s := newHostServer(t)
	tr := newTransport(t, s.base(), polite.WithDefault(fastLimit))
	client := &http.Client{Transport: tr}
	u := s.url("crawl.test", "/")
	for range 3 {
		fetchAll(t, client, []string{u})
	}
	require.NoError(t, tr.SetLimit("crawl.test", config.Limit{MinDelay: gap}))
	changed := time.Now()
	for range 3 {
		fetchAll(t, client, []string{u})
	}
	got := s.at("crawl.test")
	require.Len(t, got, 6)
	assert.Less(t, got[2].Sub(got[0]), gap, "before the change, the fast default")
	var after []time.Time
	for _, at := range got {
		if at.After(changed) {
			after = append(after, at)
		}
	}
	require.Len(t, after, 3)
	assert.GreaterOrEqual(t, after[0].Sub(got[2]), gap-arrivalSlack, "the first turn after the change keeps the new gap")
	assert.GreaterOrEqual(t, minGap(after), gap-arrivalSlack)
	assert.Equal(t, config.Limit{MinDelay: gap}, tr.Limit("crawl.test"))
}

// TestSetLimitHoldsForRequestsAlreadyWaiting checks that a limit changed
// while requests wait holds for every request that has not left yet: 20
// requests wait at 10/s when the min delay becomes 1 s, and all that go
// after the change go at least 1 s apart, not 100 ms (the rules in force
// at departure apply); the request that went before the change keeps its
// time.
func TestSetLimitHoldsForRequestsAlreadyWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &arrivalBase{}
		tr := newTransport(t, base, polite.WithDefault(config.Limit{RequestsPerSecond: 10, Burst: 1}),
			polite.WithMaxWait(time.Hour))
		start := time.Now()
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() { assert.NoError(t, roundTrip(t, tr, context.Background(), "http://slow.test/")) })
		}
		time.Sleep(50 * time.Millisecond)
		synctest.Wait()
		require.NoError(t, tr.SetLimit("slow.test", config.Limit{RequestsPerSecond: 10, Burst: 1, MinDelay: time.Second}))
		wg.Wait()
		arrivals := base.sorted()
		require.Len(t, arrivals, 20)
		assert.Equal(t, start, arrivals[0], "the first request went before the change")
		for i := 1; i < len(arrivals); i++ {
			assert.GreaterOrEqual(t, arrivals[i].Sub(arrivals[i-1]), time.Second, "gap before request %d", i)
		}
	})
}

func TestSetLimitInvalidChangesNothing(t *testing.T) {
	tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithKeyFunc(polite.HostKey), polite.WithDefault(fastLimit),
		polite.WithDomain("a.test", everySecond))
	tests := []struct {
		name, domain string
		limit        config.Limit
		field        string
	}{
		{"negative rate", "a.test", config.Limit{RequestsPerSecond: -1, Burst: 1}, "requests_per_second"},
		{"negative min delay", "*.test", config.Limit{MinDelay: -time.Second}, "min_delay"},
		{"bad pattern", "*a.test", everyHour, "domains"},
		{"empty name", "", everyHour, "domains"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tr.SetLimit(tt.domain, tt.limit)
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.domain, fe.Domain)
			assert.Equal(t, tt.field, fe.Field)
			assert.Equal(t, everySecond, tr.Limit("a.test"))
			assert.Equal(t, fastLimit, tr.Limit("b.test"))
		})
	}
}

func TestSetLimitPattern(t *testing.T) {
	tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithKeyFunc(polite.HostKey), polite.WithDefault(fastLimit),
		polite.WithMaxWait(time.Minute))
	assert.False(t, paced(t, tr, "http://a.example.com/"))
	require.NoError(t, tr.SetLimit("*.example.com", everyHour))
	// No new key has come since, so the limiter still holds a.example.com's
	// pace: its requests just made count under the new limit.
	assert.Error(t, roundTrip(t, tr, context.Background(), "http://a.example.com/"), "a tracked key follows the new pattern too")
	assert.True(t, paced(t, tr, "http://b.example.com/"))
}

func TestSetConfig(t *testing.T) {
	var logs bytes.Buffer
	tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithKeyFunc(polite.HostKey), polite.WithDefault(fastLimit),
		polite.WithDomain("a.test", everyHour), polite.WithMaxWait(time.Minute),
		polite.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	assert.True(t, paced(t, tr, "http://a.test/"))

	logs.Reset()
	require.NoError(t, tr.SetConfig(&config.File{Default: fastLimit, Domains: map[string]config.Limit{"b.test": everyHour},
		Global: &config.Limit{MinDelay: time.Hour}}))
	assert.Equal(t, fastLimit, tr.Limit("a.test"), "an entry the file leaves out is gone")
	assert.Equal(t, everyHour, tr.Limit("b.test"))
	assert.Contains(t, logs.String(), `limit removed" domain=a.test`)
	assert.Contains(t, logs.String(), `limit changed" domain=b.test`)
	assert.Contains(t, logs.String(), `limit changed" domain=global_config`)
	assert.NotContains(t, logs.String(), "domain=default", "the default did not change")
	assert.True(t, paced(t, tr, "http://c.test/"), "the global scope applies at once")

	err := tr.SetConfig(&config.File{Default: fastLimit, Server: &config.Limit{RequestsPerSecond: -1}})
	var fe *config.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "server_config", fe.Domain)
	assert.Equal(t, everyHour, tr.Limit("b.test"), "an invalid file changes nothing")
	require.Error(t, tr.SetConfig(nil))
}

// TestTightenedLimitKeepsItsGapFromTheLatestRequest checks that a stricter
// limit, from SetLimit or from SetConfig, keeps its gap from a domain's
// latest request even when the domain was idle long enough for the
// limiter to forget its pace: the new limit holds from the server's side
// at once.
func TestTightenedLimitKeepsItsGapFromTheLatestRequest(t *testing.T) {
	strict := config.Limit{MinDelay: time.Minute}
	tighten := map[string]func(tr *polite.Transport) error{
		"SetLimit": func(tr *polite.Transport) error { return tr.SetLimit("a.example", strict) },
		"SetConfig": func(tr *polite.Transport) error {
			return tr.SetConfig(&config.File{Default: config.Limit{MinDelay: time.Second}, Domains: map[string]config.Limit{"a.example": strict}})
		},
	}
	for name, tighten := range tighten {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithKeyFunc(polite.HostKey),
					polite.WithDefault(config.Limit{MinDelay: time.Second}), polite.WithMaxWait(time.Hour))
				ctx := context.Background()
				require.NoError(t, roundTrip(t, tr, ctx, "http://a.example/"))
				time.Sleep(2 * time.Second) // a.example's pace has recovered: the limiter may forget it
				for i := range 2000 {
					// Each new key lets the limiter forget quiet ones; these
					// reach every part of its table.
					require.NoError(t, roundTrip(t, tr, ctx, fmt.Sprintf("http://k%d.example/", i)))
				}
				require.NoError(t, tighten(tr))
				assert.Equal(t, time.Minute-2*time.Second, tr.RemainingWait("a.example"))
				start := time.Now()
				require.NoError(t, roundTrip(t, tr, ctx, "http://a.example/"))
				assert.Equal(t, time.Minute-2*time.Second, time.Since(start), "a minute after the latest request")
			})
		})
	}
}

// TestTightenedScopeLimitKeepsItsGapFromTheLatestRequest is
// TestTightenedLimitKeepsItsGapFromTheLatestRequest for the server and the
// global scopes: another Transport on the same limiter brings the new keys
// that let it forget the scope's pace.
func TestTightenedScopeLimitKeepsItsGapFromTheLatestRequest(t *testing.T) {
	loose, strict := config.Limit{MinDelay: time.Second}, config.Limit{MinDelay: time.Minute}
	tests := map[string]struct {
		scope     polite.Option
		tightened config.File
	}{
		"server": {polite.WithServerLimit(loose), config.File{Default: fastLimit, Server: &strict}},
		"global": {polite.WithGlobalLimit(loose), config.File{Default: fastLimit, Global: &strict}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := limiter.NewMemory()
				tr := newTransport(t, countingBase(new(atomic.Int64)), polite.WithLimiter(m), polite.WithDefault(fastLimit),
					tt.scope, polite.WithLookup(loopback), polite.WithMaxWait(time.Hour))
				other := newTransport(t, countingBase(new(atomic.Int64)), polite.WithLimiter(m), polite.WithDefault(fastLimit))
				ctx := context.Background()
				require.NoError(t, roundTrip(t, tr, ctx, "http://a.example/"))
				time.Sleep(2 * time.Second) // the scope's pace has recovered: the limiter may forget it
				for i := range 2000 {
					require.NoError(t, roundTrip(t, other, ctx, fmt.Sprintf("http://k%d.example/", i)))
				}
				require.NoError(t, tr.SetConfig(&tt.tightened))
				req, err := http.NewRequest(http.MethodGet, "http://b.example/", nil)
				require.NoError(t, err)
				assert.Equal(t, time.Minute-2*time.Second, tr.RequestWait(req))
				start := time.Now()
				require.NoError(t, roundTrip(t, tr, ctx, "http://b.example/"))
				assert.Equal(t, time.Minute-2*time.Second, time.Since(start), "a minute after the latest request")
			})
		})
	}
}

// TestScopeRemovedWhileRequestsWait checks that SetConfig may remove a
// scope that requests are waiting in: each still goes, at the turn it was
// given under the scope's limit when it claimed the scope.
func TestScopeRemovedWhileRequestsWait(t *testing.T) {
	gap := config.Limit{MinDelay: time.Second}
	for name, scope := range map[string]polite.Option{
		"server": polite.WithServerLimit(gap),
		"global": polite.WithGlobalLimit(gap),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &arrivalBase{}
				tr := newTransport(t, base, polite.WithKeyFunc(polite.HostKey), polite.WithDefault(fastLimit), scope,
					polite.WithLookup(loopback), polite.WithMaxWait(time.Hour))
				var wg sync.WaitGroup
				for i := range 3 {
					wg.Go(func() {
						assert.NoError(t, roundTrip(t, tr, context.Background(), fmt.Sprintf("http://h%d.example/", i)))
					})
				}
				time.Sleep(100 * time.Millisecond)
				synctest.Wait()
				require.NoError(t, tr.SetConfig(&config.File{Default: fastLimit}))
				wg.Wait()
				arrivals := base.sorted()
				require.Len(t, arrivals, 3)
				for i := 1; i < len(arrivals); i++ {
					assert.GreaterOrEqual(t, arrivals[i].Sub(arrivals[i-1]), time.Second, "gap before request %d", i)
				}
			})
		})
	}
}
