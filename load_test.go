package polite_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
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
// full size, 10,000 domains (60,000 waiting requests); otherwise 1,000.
//
//	POLITE_LOAD=1 go test -run TestLoadLateWakeupsKeepTheGaps -v .
func TestLoadLateWakeupsKeepTheGaps(t *testing.T) {
	domains := 1000
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
