package polite_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// TestLimitChangeKeepsMaxConcurrent checks from the server's side that
// changing limits while requests are in flight never lets more of them
// in flight than max_concurrent: 50 goroutines put in force, one after
// the other every 5 ms, two configs that differ only in rate, while 200
// requests go; requests in flight under one count against the other.
func TestLimitChangeKeepsMaxConcurrent(t *testing.T) {
	var inFlight, most atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(10 * time.Millisecond)
		inFlight.Add(-1)
	}))
	defer srv.Close()
	configs := []*config.File{
		{Default: config.Limit{RequestsPerSecond: 1000, Burst: 10, MaxConcurrent: 2}},
		{Default: config.Limit{RequestsPerSecond: 900, Burst: 10, MaxConcurrent: 2}},
	}
	tr := newTransport(t, nil, polite.WithDefault(configs[0].Default))
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
					assert.NoError(t, tr.SetConfig(configs[n%2]))
				}
			}
		})
	}
	urls := make([]string, 200)
	for i := range urls {
		urls[i] = srv.URL
	}
	fetchAll(t, client, urls)
	close(done)
	changers.Wait()
	t.Logf("at most %d in flight at the server", most.Load())
	assert.LessOrEqual(t, most.Load(), int64(2), "requests in flight at the server at once")
}
