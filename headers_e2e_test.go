package polite_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// TestHeadersNeverSpeedUpTheConfiguredPace: whatever a server says of its
// quota (plenty left, a reset now, Retry-After 0, garbage), a domain goes
// no faster than its limit, adaptive pacing included; and no header
// pauses it beyond WithMaxPause.
func TestHeadersNeverSpeedUpTheConfiguredPace(t *testing.T) {
	generous := http.Header{
		"Ratelimit":                      {`"default";r=1000000;t=0`},
		"Ratelimit-Policy":               {`"default";q=1000000;w=1`},
		"X-Ratelimit-Remaining":          {"5000"},
		"X-Ratelimit-Reset":              {"0"},
		"X-Rate-Limit-Remaining":         {"99999"},
		"X-Ratelimit-Remaining-Requests": {"1e9"},
		"X-Ratelimit-Reset-Requests":     {"-1s"},
		"Retry-After":                    {"0", "-5", "soon", "\x00\xff"},
	}
	for _, adaptive := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			base := baseFunc(func(req *http.Request) (*http.Response, error) {
				resp := answer(req, http.StatusOK)
				resp.Header = generous.Clone()
				return resp, nil
			})
			tr := newTransport(t, base, polite.WithDefault(config.Limit{MinDelay: time.Second, Adaptive: adaptive}))
			start := time.Now()
			for range 5 {
				require.NoError(t, roundTrip(t, tr, context.Background(), "http://generous.example/"))
			}
			assert.Equal(t, 4*time.Second, time.Since(start), "adaptive %v: one second apart, as configured", adaptive)
		})
	}

	synctest.Test(t, func(t *testing.T) {
		base := baseFunc(func(req *http.Request) (*http.Response, error) {
			resp := answer(req, http.StatusTooManyRequests)
			resp.Header.Set("Retry-After", "99999999999.5")
			resp.Header.Set("X-Rate-Limit-Remaining", "0")
			resp.Header.Set("X-Rate-Limit-Reset", "999999999")
			return resp, nil
		})
		tr := newTransport(t, base, polite.WithDefault(config.Limit{MinDelay: time.Second}), polite.WithMaxPause(time.Minute))
		require.NoError(t, roundTrip(t, tr, context.Background(), "http://greedy.example/"))
		assert.Equal(t, time.Minute, tr.RemainingWait("greedy.example"), "capped by WithMaxPause")
	})
}
