package polite_test

import (
	"fmt"
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
)

// TestLimitChangeKeepsMaxConcurrent checks from the server's side that
// changing limits while requests are in flight never lets more of them
// in flight than max_concurrent, in a domain or in the global scope: 50
// goroutines put in force, one after the other every 5 ms, two configs
// that differ only in rate, while ten workers send 20 requests each, one
// after the other; requests in flight under one count against the other.
func TestLimitChangeKeepsMaxConcurrent(t *testing.T) {
	capped := func(rate float64) config.Limit {
		return config.Limit{RequestsPerSecond: rate, Burst: 10, MaxConcurrent: 2}
	}
	tests := []struct {
		name    string
		configs []*config.File
		hosts   int // the requests go to as many hosts, in turn
	}{
		{"domain", []*config.File{{Default: capped(1000)}, {Default: capped(900)}}, 1},
		{"global scope", []*config.File{{Default: fastLimit, Global: ptr(capped(1000))}, {Default: fastLimit, Global: ptr(capped(900))}}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inFlight, most atomic.Int64
			s := newHostServer(t)
			s.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := inFlight.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(10 * time.Millisecond)
				inFlight.Add(-1)
			})
			tr := newTransport(t, s.base(), polite.WithKeyFunc(polite.HostKey), polite.WithConfig(tt.configs[0]))
			client := &http.Client{Transport: tr, Timeout: time.Minute}

			done := make(chan struct{})
			var changers sync.WaitGroup
			for i := range 50 {
				changers.Go(func() {
					tick := time.NewTicker(5 * time.Millisecond)
					defer tick.Stop()
					for n := i; ; n++ {
						select {
						case <-done:
							return
						case <-tick.C:
							assert.NoError(t, tr.SetConfig(tt.configs[n%2]))
						}
					}
				})
			}
			var workers sync.WaitGroup
			for w := range 10 {
				workers.Go(func() {
					for i := range 20 {
						fetchAll(t, client, []string{s.url(fmt.Sprintf("h%d.test", (w+i)%tt.hosts), "/")})
					}
				})
			}
			workers.Wait()
			close(done)
			changers.Wait()
			t.Logf("at most %d in flight at the server", most.Load())
			assert.LessOrEqual(t, most.Load(), int64(2), "requests in flight at the server at once")
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestLimitChangeKeepsQuotaHistory checks from the server's side that a
// key's quota counts the requests made before the quota was removed and
// put back, or changed, while the limiter holds the key's state.
func TestLimitChangeKeepsQuotaHistory(t *testing.T) {
	const window = 3 * time.Second
	quota := func(n int, w time.Duration) config.Limit {
		return config.Limit{RequestsPerSecond: 1000, Burst: 10, Quotas: []config.Quota{{Requests: n, Window: w}}}
	}
	tests := []struct {
		name    string
		idle    time.Duration  // after the first three requests
		changes []config.Limit // one before each of the requests after the third
		// want is when each request after the third reaches the server,
		// from the first's arrival, in whole seconds.
		want []time.Duration
	}{
		{"removed and put back", 0, []config.Limit{{RequestsPerSecond: 1000, Burst: 10}, {RequestsPerSecond: 1000, Burst: 10}, quota(3, window)},
			[]time.Duration{0, 0, window}},
		{"widened", 0, []config.Limit{quota(4, 2*window)},
			[]time.Duration{0}},
		{"widened, then the next", 0, []config.Limit{quota(4, 2*window), quota(4, 2*window)},
			[]time.Duration{0, 2 * window}},
		{"narrowed", 0, []config.Limit{quota(2, window)},
			[]time.Duration{window}},
		{"shortened and put back", 1500 * time.Millisecond, []config.Limit{quota(3, time.Second), quota(3, window)},
			[]time.Duration{time.Second, window}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var arrivals []time.Time
				base := baseFunc(func(req *http.Request) (*http.Response, error) {
					arrivals = append(arrivals, time.Now())
					return answer(req, http.StatusOK), nil
				})
				tr := newTransport(t, base, polite.WithDefault(quota(3, window)))
				for range 3 {
					require.NoError(t, roundTrip(t, tr, t.Context(), "http://quota.test/"))
				}
				time.Sleep(tt.idle)
				for _, l := range tt.changes {
					require.NoError(t, tr.SetLimit("quota.test", l))
					require.NoError(t, roundTrip(t, tr, t.Context(), "http://quota.test/"))
				}
				var got []time.Duration
				for _, at := range arrivals[3:] {
					got = append(got, at.Sub(arrivals[0]).Truncate(time.Second))
				}
				assert.Equal(t, tt.want, got)
			})
		})
	}
}
