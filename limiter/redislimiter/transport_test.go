package redislimiter

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
)

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closes atomic.Int32
}

func (c *closeCounter) Close() error {
	c.closes.Add(1)
	return nil
}

// TestTransportFailsClosedWhileRedisIsDown: a Transport over a Limiter that
// fails closed, on a port where no Redis listens, refuses the request with
// ErrUnavailable, sends nothing, and closes the request body exactly once.
func TestTransportFailsClosedWhileRedisIsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	l, err := New(client, WithFailClosed(), WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })

	var sent atomic.Int64
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		sent.Add(1)
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	})
	tr, err := polite.NewTransport(base, polite.WithLimiter(l))
	require.NoError(t, err)
	body := &closeCounter{Reader: strings.NewReader("payload")}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://example.com/upload", body)
	require.NoError(t, err)

	resp, err := tr.RoundTrip(req)

	require.Error(t, err)
	assert.Nil(t, resp, "never both a response and an error")
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.ErrorContains(t, err, "polite: example.com: limiter: ")
	assert.Equal(t, int32(1), body.closes.Load(), "request body closed exactly once")
	assert.Zero(t, sent.Load(), "requests the base saw")
}

// roundTripFunc is an in-memory http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestTransportKeepsATightenedLimitAfterRedisLostTheDomain: a Transport
// over Redis whose state of a domain is gone (expired once it recovered,
// or lost with Redis) still keeps a stricter limit's gap from the
// domain's latest request: a request that would go sooner is refused by
// WithMaxWait and never sent.
func TestTransportKeepsATightenedLimitAfterRedisLostTheDomain(t *testing.T) {
	srv := redistest.Start(t)
	l, _ := newTestLimiter(t, srv)
	var sent atomic.Int64
	base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		sent.Add(1)
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	})
	tr, err := polite.NewTransport(base, polite.WithLimiter(l), polite.WithDefault(config.Limit{MinDelay: time.Second}),
		polite.WithMaxWait(10*time.Second))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	resp, err := client.Get("http://lost.example/")
	require.NoError(t, err)
	resp.Body.Close()
	require.NoError(t, l.client.FlushAll(context.Background()).Err())

	require.NoError(t, tr.SetLimit("lost.example", config.Limit{MinDelay: time.Minute}))
	assert.InDelta(t, time.Minute, tr.RemainingWait("lost.example"), float64(5*time.Second))
	_, err = client.Get("http://lost.example/")
	var we *polite.WaitError
	require.ErrorAs(t, err, &we)
	assert.InDelta(t, time.Minute, time.Until(we.RetryAt), float64(5*time.Second))
	assert.Equal(t, int64(1), sent.Load(), "requests the base saw")
}
