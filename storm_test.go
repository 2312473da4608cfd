package polite_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// TestCancellationStormLeavesNothingBehind checks, from the server's
// side, that a storm of requests cancelled or timed out at random while
// they wait leaves their domain as if they had never come: 100 ms after
// the last has ended, the domain has no wait left, and two requests the
// server holds 300 ms each go side by side under max_concurrent 2. It
// failed from the change that made transport failures back a domain off
// (83e6b9b), which counted a caller's deadline reached at the server as
// the server's failure: the domain was backed off for a second after
// the storm.
func TestCancellationStormLeavesNothingBehind(t *testing.T) {
	const hold = 300 * time.Millisecond
	var (
		mu       sync.Mutex
		arrivals []time.Time
		after    = make(chan struct{}) // closed once the storm is over
		inFlight atomic.Int64
		// most is the most requests in flight at once at the server during
		// the storm, logged, not checked: a request its caller gives up on
		// at the server frees its place at once, and the server may see its
		// connection closed after the next request has come.
		most atomic.Int64
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-after:
			mu.Lock()
			arrivals = append(arrivals, time.Now())
			mu.Unlock()
			time.Sleep(hold)
		default:
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			select {
			case <-time.After(20 * time.Millisecond):
			case <-r.Context().Done(): // the caller gave up: its connection is closed
			}
			inFlight.Add(-1)
		}
	}))
	defer srv.Close()
	tr := newTransport(t, nil, polite.WithDefault(config.Limit{RequestsPerSecond: 50, Burst: 2, MaxConcurrent: 2}))
	client := &http.Client{Transport: tr}

	var storm sync.WaitGroup
	for i := range 600 {
		storm.Add(1)
		go func() {
			defer storm.Done()
			ctx, cancel := context.WithCancel(context.Background())
			end := time.Duration(rand.Int64N(int64(400 * time.Millisecond)))
			if i%2 == 0 {
				ctx, cancel = context.WithTimeout(context.Background(), end)
			} else {
				time.AfterFunc(end, cancel)
			}
			defer cancel()
			if resp, err := client.Do(get(t, ctx, srv.URL)); err == nil {
				resp.Body.Close()
			}
		}()
	}
	storm.Wait()
	close(after)
	time.Sleep(100 * time.Millisecond)
	remaining := tr.RemainingWait("127.0.0.1")
	assert.Less(t, remaining, 50*time.Millisecond, "turns of requests that ended are given back, and no deadline of theirs backs the domain off")

	start := time.Now()
	var pair sync.WaitGroup
	for range 2 {
		pair.Add(1)
		go func() {
			defer pair.Done()
			resp, err := client.Get(srv.URL)
			if assert.NoError(t, err) {
				resp.Body.Close()
			}
		}()
	}
	pair.Wait()
	took := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, arrivals, 2)
	gap := arrivals[1].Sub(arrivals[0]).Abs()
	t.Logf("during the storm, at most %d in flight; after it: %v remaining wait; the two took %v, %v apart at the server", most.Load(), remaining, took, gap)
	assert.Less(t, gap, hold, "the two requests reach the server side by side (a backoff would part them by a second or more)")
	assert.Less(t, took, 2*hold, "both places under max_concurrent 2 are free")
}
