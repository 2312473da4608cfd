package polite_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// TestLoadLateWakeupsKeepTheGaps sends six requests to each of many
// domains at 4/s, burst 1, all at once, so that most of them wake late on
// a loaded machine, and checks what the server sees: no two requests of
// one domain closer than the limit allows, but for the scheduling delay
// between a start and the base transport's call. POLITE_LOAD=1 runs the issue's
// full size, 10,000 domains (60,000 waiting requests); otherwise 300, few
// enough not to flood a loaded machine that runs other tests beside it.
//
//	POLITE_LOAD=1 go test -run TestLoadLateWakeupsKeepTheGaps -v .
func TestLoadLateWakeupsKeepTheGaps(t *testing.T) {
	domains := 300
	if os.Getenv("POLITE_LOAD") != "" {
		domains = 10000
	}
	const perDomain = 6
	const gap = 250 * time.Millisecond
	var mu sync.Mutex
	arrivals := make(map[string][]time.Time, domains)
	base := baseFunc(func(req *http.Request) (*http.Response, error) {
		now := time.Now()
		mu.Lock()
		arrivals[req.URL.Host] = append(arrivals[req.URL.Host], now)
		mu.Unlock()
		return answer(req, http.StatusOK), nil
	})
	tr, err := polite.NewTransport(base, polite.WithDefault(config.Limit{RequestsPerSecond: 4, Burst: 1}),
		polite.WithMaxDomains(2*domains))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for d := range domains {
		for range perDomain {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, fmt.Sprintf("http://d%d.example/", d), nil)
				resp, err := tr.RoundTrip(req)
				if assert.NoError(t, err) {
					resp.Body.Close()
				}
			})
		}
	}
	wg.Wait()
	shortest, short := time.Hour, 0
	for _, times := range arrivals {
		slices.SortFunc(times, time.Time.Compare)
		for i := 1; i < len(times); i++ {
			g := times[i].Sub(times[i-1])
			shortest = min(shortest, g)
			if g < gap/2 {
				short++
			}
		}
	}
	t.Logf("%d domains × %d requests: shortest gap %v, gaps under %v: %d (limit: %v)", domains, perDomain, shortest, gap/2, short, gap)
	// The limiter keeps every start a whole gap apart; what the server
	// sees also carries the scheduling delay between a start and the base
	// transport's call, which a loaded machine stretches, hence the margin.
	assert.Zero(t, short, "gaps under half the limit")
}

// TestSlowKeyFunctionDoesNotBackdateTheTurn: a key function that takes
// 200 ms (for a host it meets the first time) is on the way to the turn,
// not part of it. At 5/s, a request sent 10 ms after the slow one went still
// reaches the server 200 ms after it.
func TestSlowKeyFunctionDoesNotBackdateTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var sent []time.Time
		base := baseFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			sent = append(sent, time.Now())
			mu.Unlock()
			return answer(req, http.StatusOK), nil
		})
		var calls atomic.Int32
		slowKey := func(req *http.Request) (string, error) {
			if calls.Add(1) == 1 {
				time.Sleep(200 * time.Millisecond)
			}
			return polite.DomainKey(req)
		}
		tr := newTransport(t, base, polite.WithKeyFunc(slowKey), polite.WithDefault(config.Limit{RequestsPerSecond: 5, Burst: 1}))
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 210 * time.Millisecond)
				assert.NoError(t, roundTrip(t, tr, context.Background(), "http://example.com/"))
			})
		}
		wg.Wait()
		require.Len(t, sent, 2)
		for i := 1; i < len(sent); i++ {
			assert.GreaterOrEqual(t, sent[i].Sub(sent[i-1]), 200*time.Millisecond, "gap %d", i)
		}
	})
}
