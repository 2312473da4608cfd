package polite_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// The answers of a struggling server, one per request in turn: "hang"
// holds the request until the client gives up.
var struggling = []string{"502", "502", "hang", "200", "200", "502", "200"}

// TestStrugglingServerEndToEnd: a loopback server answers 502 twice, then
// hangs past the client's response header timeout, then recovers. The
// gaps it sees between requests grow (1s, 2s, 4s: the backoff doubles),
// come back to the configured pace after a success, and a later 502 backs
// off from 1s again. Bounds are one-sided and generous where they are
// upper bounds.
func TestStrugglingServerEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 9 seconds")
	}
	var seen arrivals
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch reply := struggling[min(seen.add(), len(struggling))-1]; reply {
		case "hang":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		default:
			status, _ := strconv.Atoi(reply)
			w.WriteHeader(status)
		}
	}))
	defer srv.Close()
	base := &http.Transport{ResponseHeaderTimeout: 300 * time.Millisecond}
	defer base.CloseIdleConnections()
	pace := 100 * time.Millisecond
	tr := newTransport(t, base, polite.WithDefault(config.Limit{MinDelay: pace}))
	client := &http.Client{Transport: tr}

	for i, reply := range struggling {
		resp, err := client.Get(srv.URL + "/" + strconv.Itoa(i))
		if reply == "hang" {
			require.Error(t, err, "the client gave up on the hanging request")
			s, _ := tr.Stats("127.0.0.1")
			assert.Equal(t, limiter.Reason("errors"), s.PauseReason)
			assert.Equal(t, int64(1), s.FailedRequests)
			continue
		}
		require.NoError(t, err)
		resp.Body.Close()
	}

	slack := 20 * time.Millisecond // the server's clock reads arrivals a little after polite lets them go
	assert.GreaterOrEqual(t, seen.gap(0, 1), time.Second-slack, "the first 502 backs off 1s")
	assert.GreaterOrEqual(t, seen.gap(1, 2), 2*time.Second-slack, "the second doubles it")
	assert.GreaterOrEqual(t, seen.gap(2, 3), 4*time.Second+300*time.Millisecond-slack, "the timeout doubles it again, after the timeout")
	assert.GreaterOrEqual(t, seen.gap(3, 4), pace-slack)
	assert.Less(t, seen.gap(3, 4), 2*time.Second, "after a success: the configured pace")
	assert.GreaterOrEqual(t, seen.gap(5, 6), time.Second-slack)
	assert.Less(t, seen.gap(5, 6), 4*time.Second, "a 502 after a success backs off from 1s again, not 8s")
}

// TestStrugglingServerGaps is the struggling server in a bubble of fake
// time, with a client timeout of 10s: every arrival is exact.
func TestStrugglingServerGaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		var arrived []time.Duration
		start := time.Now()
		base := baseFunc(func(req *http.Request) (*http.Response, error) {
			reply := struggling[calls.Add(1)-1]
			arrived = append(arrived, time.Since(start))
			if reply == "hang" {
				<-req.Context().Done()
				return nil, req.Context().Err()
			}
			status, _ := strconv.Atoi(reply)
			return answer(req, status), nil
		})
		tr := newTransport(t, base, polite.WithDefault(config.Limit{MinDelay: 100 * time.Millisecond}))
		client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		for i := range struggling {
			resp, err := client.Get("http://struggling.example/" + strconv.Itoa(i))
			if err == nil {
				resp.Body.Close()
			}
		}
		s := time.Second
		ms := time.Millisecond
		// The third request's 10s timeout starts with its 2s wait, at 1s:
		// it ends at 11s, and the backoff, doubled to 4s, at 15s.
		assert.Equal(t, []time.Duration{0, s, 3 * s, 15 * s, 15*s + 100*ms, 15*s + 200*ms, 16*s + 200*ms}, arrived,
			"502: 1s; 502: 2s; a timeout: 4s after it; 200: the pace; 502: 1s again")
	})
}

// TestCancelledRequestDoesNotBackOff: a request its caller gives up on
// says nothing about the server.
func TestCancelledRequestDoesNotBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := baseFunc(func(req *http.Request) (*http.Response, error) {
			<-req.Context().Done()
			return nil, req.Context().Err()
		})
		tr := newTransport(t, base, polite.WithDefault(config.Limit{MinDelay: 100 * time.Millisecond}))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		require.Error(t, roundTrip(t, tr, ctx, "http://patient.example/"))
		assert.Zero(t, tr.RemainingWait("patient.example"), "no backoff: the caller cancelled")
	})
}
