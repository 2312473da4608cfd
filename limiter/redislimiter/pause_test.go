package redislimiter

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// TestWaitingRequestHonoursAnotherWorkersPause: two workers share the pace
// of a domain through Redis. A request of the first sleeps towards its turn
// when the second pauses the domain; it goes only once the pause is over.
func TestWaitingRequestHonoursAnotherWorkersPause(t *testing.T) {
	srv := redistest.Start(t)
	var (
		mu      sync.Mutex
		arrived = map[string]time.Time{}
	)
	site := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		arrived[r.URL.Path] = time.Now()
	}))
	defer site.Close()
	first, _ := newTestLimiter(t, srv)
	second, _ := newTestLimiter(t, srv)
	tr, err := polite.NewTransport(site.Client().Transport, polite.WithLimiter(first),
		polite.WithDefault(config.Limit{MinDelay: 2 * time.Second}))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	get := func(path string) {
		resp, err := client.Get(site.URL + path)
		if assert.NoError(t, err) {
			resp.Body.Close()
		}
	}

	get("/a")
	done := make(chan struct{})
	go func() {
		defer close(done)
		get("/b") // holds the turn 2s after /a, and sleeps
	}()
	// Until /b holds its turn, a request would wait less than 2s; once it
	// has, the next turn is 4s after /a.
	require.Eventually(t, func() bool { return tr.RemainingWait("127.0.0.1") > 2*time.Second }, 5*time.Second, 5*time.Millisecond,
		"/b holds its turn")
	const pause = 3 * time.Second
	pausedAt := time.Now()
	_, err = second.Observe(context.Background(), limiter.Request{Key: "127.0.0.1"},
		limiter.Observation{Status: http.StatusTooManyRequests, RetryAfter: pause})
	require.NoError(t, err)
	<-done

	mu.Lock()
	defer mu.Unlock()
	// The pause ends after pausedAt+pause on Redis's clock, which is this
	// machine's: /b, due 2s after /a, went no earlier.
	assert.GreaterOrEqual(t, arrived["/b"].Sub(pausedAt), pause, "/b went inside the other worker's pause")
}
