package polite_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

var errShutdown = errors.New("shutting down")

// TestDoneContextFailsAsNetHTTP checks that a request whose context has
// ended before it asks for its turn fails with exactly the error
// http.DefaultTransport gives it, directly and through an http.Client.
func TestDoneContextFailsAsNetHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	past := time.Now().Add(-time.Second)
	contexts := map[string]func() context.Context{
		"canceled": func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		},
		"canceled with a cause": func() context.Context {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(errShutdown)
			return ctx
		},
		"deadline passed": func() context.Context {
			ctx, cancel := context.WithDeadline(context.Background(), past)
			t.Cleanup(cancel)
			return ctx
		},
		"deadline passed with a cause": func() context.Context {
			ctx, cancel := context.WithDeadlineCause(context.Background(), past, errShutdown)
			t.Cleanup(cancel)
			return ctx
		},
	}
	tr := newTransport(t, nil, polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 100}))
	for name, newCtx := range contexts {
		t.Run(name, func(t *testing.T) {
			send := func(rt http.RoundTripper) (direct, viaClient error) {
				req, err := http.NewRequestWithContext(newCtx(), http.MethodGet, srv.URL, nil)
				require.NoError(t, err)
				resp, direct := rt.RoundTrip(req)
				require.Nil(t, resp)
				_, viaClient = (&http.Client{Transport: rt}).Do(req)
				return direct, viaClient
			}
			want, wantClient := send(http.DefaultTransport)
			got, gotClient := send(tr)
			assert.Equal(t, want, got)
			var wantURL, gotURL *url.Error
			require.ErrorAs(t, wantClient, &wantURL)
			require.ErrorAs(t, gotClient, &gotURL)
			assert.True(t, gotURL.Err == wantURL.Err, "url.Error.Err: got %v, want %v", gotURL.Err, wantURL.Err)
			assert.Equal(t, wantURL.Timeout(), gotURL.Timeout())
		})
	}
}

// TestWaitErrorUnwrapsToCause checks that a request whose context ends
// while it waits fails with a *WaitError that unwraps to the context's
// cause, and is a timeout only for a plain deadline.
func TestWaitErrorUnwrapsToCause(t *testing.T) {
	tests := []struct {
		name        string
		end         func(context.Context) (context.Context, func())
		wantIs      error
		wantTimeout bool
	}{
		{"canceled", func(ctx context.Context) (context.Context, func()) {
			ctx, cancel := context.WithCancel(ctx)
			return ctx, cancel
		}, context.Canceled, false},
		{"canceled with a cause", func(ctx context.Context) (context.Context, func()) {
			ctx, cancel := context.WithCancelCause(ctx)
			return ctx, func() { cancel(errShutdown) }
		}, errShutdown, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
				return answer(req, http.StatusOK), nil
			}), polite.WithDefault(config.Limit{MinDelay: time.Hour}))
			first, _ := http.NewRequest(http.MethodGet, "http://example.com/", nil)
			resp, err := tr.RoundTrip(first)
			require.NoError(t, err)
			resp.Body.Close()

			ctx, end := tt.end(context.Background())
			time.AfterFunc(50*time.Millisecond, end)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.com/", nil)
			_, err = tr.RoundTrip(req)
			var we *polite.WaitError
			require.ErrorAs(t, err, &we)
			assert.ErrorIs(t, err, tt.wantIs)
			assert.Equal(t, context.Cause(ctx), we.Err)
			assert.Equal(t, tt.wantTimeout, we.Timeout())
		})
	}
}

// TestBodyReadToEOFEndsFlight checks that a response body read to its end
// gives back its MaxConcurrent place without being closed, as net/http
// gives back its connection.
func TestBodyReadToEOFEndsFlight(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	tr := newTransport(t, nil, polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 100, MaxConcurrent: 1}))
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for i := range 3 {
		resp, err := client.Get(srv.URL)
		require.NoError(t, err, "request %d", i)
		body, err := io.ReadAll(resp.Body) // and never closed
		require.NoError(t, err)
		assert.Equal(t, "hello", string(body))
	}
	s, ok := tr.Stats("127.0.0.1")
	require.True(t, ok)
	assert.Zero(t, s.InFlight)
	assert.EqualValues(t, 3, s.TotalRequests)
}

// TestFullDomainSaysSo checks that a request that finds no place under
// MaxConcurrent before its deadline says so, not when its turn would come.
func TestFullDomainSaysSo(t *testing.T) {
	tr := newTransport(t, baseFunc(func(req *http.Request) (*http.Response, error) {
		return answer(req, http.StatusOK), nil
	}), polite.WithDefault(config.Limit{RequestsPerSecond: 1000, Burst: 100, MaxConcurrent: 1}))
	client := &http.Client{Transport: tr, Timeout: 100 * time.Millisecond}
	resp, err := client.Get("http://example.com/")
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = client.Get("http://example.com/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "polite: example.com: request not sent: max_concurrent 1: 1 in flight until the context's deadline")
	assert.NotContains(t, err.Error(), "turn comes at")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, os.IsTimeout(err))
}

// TestWithTimeoutStartsAtTheTurn checks that WithTimeout's time counts
// from a request's turn, not its call, and covers the response's body.
func TestWithTimeoutStartsAtTheTurn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "head")
		if r.URL.Path == "/slow-body" {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	tr := newTransport(t, nil, polite.WithDefault(config.Limit{MinDelay: 100 * time.Millisecond}), polite.WithTimeout(time.Second))
	client := &http.Client{Transport: tr}

	// Eight requests at once: the last waits 700 ms, well within the
	// timeout, and all are answered.
	errs := make(chan error)
	for range 8 {
		go func() {
			resp, err := client.Get(srv.URL)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	for range 8 {
		assert.NoError(t, <-errs)
	}

	tr = newTransport(t, nil, polite.WithDefault(config.Limit{MinDelay: time.Second}), polite.WithTimeout(100*time.Millisecond))
	client = &http.Client{Transport: tr}
	resp, err := client.Get(srv.URL + "/slow-body")
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the timeout covers the body")

	// A wait of about a second goes past the timeout of 100 ms, and the
	// request is sent.
	start := time.Now()
	resp, err = client.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Greater(t, time.Since(start), 500*time.Millisecond)
}
