package polite_test

import (
	"errors"
	"net"
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

// statusServer answers each path with the status the map gives it (200
// if none), after delay, and counts the requests it sees.
func statusServer(t *testing.T, statuses map[string]int, delay time.Duration) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		time.Sleep(delay)
		if status, ok := statuses[r.URL.Path]; ok {
			w.WriteHeader(status)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

// fastGiveUp is a Transport that gives a domain up after maxErrors failed
// answers in a row, whose backoff (capped by WithMaxPause) is too short
// to matter.
func fastGiveUp(t *testing.T, maxErrors int) *polite.Transport {
	t.Helper()
	return newTransport(t, nil, polite.WithMaxErrors(maxErrors), polite.WithMaxPause(time.Millisecond),
		polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 10}))
}

// send sends a GET of url through tr and returns the error, closing any
// body.
func send(t *testing.T, tr http.RoundTripper, url string) error {
	t.Helper()
	resp, err := tr.RoundTrip(get(t, t.Context(), url))
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// TestGiveUpAfterFailuresInARow: a domain is given up at its third 502 in
// a row, not before (a 200 between starts the count again); from then on
// its requests fail at once with ErrGivenUp, the server sees none of
// them, and its stats say so.
func TestGiveUpAfterFailuresInARow(t *testing.T) {
	srv, seen := statusServer(t, map[string]int{"/fail": http.StatusBadGateway}, 0)
	tr := fastGiveUp(t, 3)
	for _, path := range []string{"/fail", "/fail", "/ok", "/fail", "/fail"} {
		require.NoError(t, send(t, tr, srv.URL+path), "the answer is a response, whatever its status")
	}
	assert.NoError(t, tr.GivenUp(srv.URL), "a success came between the failures")
	require.NoError(t, send(t, tr, srv.URL+"/fail"))
	assert.ErrorIs(t, tr.GivenUp(srv.URL), polite.ErrGivenUp, "three 502s in a row")

	err := send(t, tr, srv.URL+"/ok")
	require.ErrorIs(t, err, polite.ErrGivenUp)
	assert.Contains(t, err.Error(), "after 3 failed answers in a row (the last: 502 Bad Gateway)")
	assert.Equal(t, int64(6), seen.Load(), "the refused request was not sent")
	s, ok := tr.Stats(srv.URL)
	require.True(t, ok)
	assert.True(t, s.GivenUp)
	assert.Equal(t, int64(1), s.GivenUpRequests)
	assert.Equal(t, int64(6), s.TotalRequests)
}

// TestGiveUpRefusedConnections: transport failures count as failed
// answers.
func TestGiveUpRefusedConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String() + "/"
	ln.Close() // nothing listens: every connection is refused
	tr := fastGiveUp(t, 2)
	for range 2 {
		err := send(t, tr, url)
		require.Error(t, err)
		require.NotErrorIs(t, err, polite.ErrGivenUp)
	}
	err = send(t, tr, url)
	require.ErrorIs(t, err, polite.ErrGivenUp)
	assert.Contains(t, err.Error(), "connection refused")
}

// TestGiveUpNeverByDefault: without WithMaxErrors, a domain failing again
// and again is never given up.
func TestGiveUpNeverByDefault(t *testing.T) {
	srv, seen := statusServer(t, map[string]int{"/fail": http.StatusBadGateway}, 0)
	tr := newTransport(t, nil, polite.WithMaxPause(time.Millisecond), polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 10}))
	for range 15 {
		require.NoError(t, send(t, tr, srv.URL+"/fail"))
	}
	assert.NoError(t, tr.GivenUp(srv.URL))
	assert.Equal(t, int64(15), seen.Load())
}

// TestGiveUpRefusesARequestWaitingForItsTurn: a request that was waiting
// for its turn when the domain was given up is refused when its turn
// comes, not sent.
func TestGiveUpRefusesARequestWaitingForItsTurn(t *testing.T) {
	srv, seen := statusServer(t, map[string]int{"/fail": http.StatusBadGateway}, 100*time.Millisecond)
	tr := newTransport(t, nil, polite.WithMaxErrors(1), polite.WithMaxPause(time.Millisecond),
		polite.WithDefault(config.Limit{MinDelay: 400 * time.Millisecond}))
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, send(t, tr, srv.URL+"/fail")) })
	for seen.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	err := send(t, tr, srv.URL+"/ok") // waits 400 ms; the 502 comes after 100
	wg.Wait()
	require.ErrorIs(t, err, polite.ErrGivenUp)
	assert.Equal(t, int64(1), seen.Load())
}

func TestWithMaxErrorsNegative(t *testing.T) {
	_, err := polite.NewTransport(nil, polite.WithMaxErrors(-1))
	require.Error(t, err)
	assert.Equal(t, "polite: WithMaxErrors: must not be negative, got -1", err.Error())
	assert.False(t, errors.Is(err, polite.ErrGivenUp))
}
