package otelpolite_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/limiter/redislimiter"
	"github.com/polite-go/polite/limiter/redislimiter/redistest"
	"github.com/polite-go/polite/otelpolite"
)

// TestRedisLimiterAndFrontier paces through a redislimiter on a real
// Redis and hands the requests out through a frontier, each pushed in a
// trace of its own: a request that waits in the Transport gets its
// polite.wait span with the reason the Redis limiter gives, and every
// span, otelhttp's included, is in the trace its request was pushed in.
func TestRedisLimiterAndFrontier(t *testing.T) {
	for _, outer := range []bool{true, false} {
		t.Run(map[bool]string{true: "otelhttp over polite", false: "polite over otelhttp"}[outer], func(t *testing.T) {
			tp, rec := recorder()
			srv := newServer(t, nil)
			client := redis.NewClient(&redis.Options{Addr: redistest.Start(t).Addr()})
			t.Cleanup(func() { client.Close() })
			l, err := redislimiter.New(client)
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
			var base http.RoundTripper = http.DefaultTransport.(*http.Transport).Clone()
			if !outer {
				base = otelhttp.NewTransport(base, otelhttp.WithTracerProvider(tp))
			}
			tr, err := polite.NewTransport(base, polite.WithLimiter(l), polite.WithDefault(pace),
				otelpolite.WithTracing(otelpolite.WithTracerProvider(tp)))
			require.NoError(t, err)
			httpClient := &http.Client{Transport: tr}
			if outer {
				httpClient.Transport = otelhttp.NewTransport(tr, otelhttp.WithTracerProvider(tp))
			}

			// Straight through the Transport: the second request waits.
			ctx, parent := tp.Tracer("test").Start(context.Background(), "direct")
			for _, path := range []string{"/a", "/b"} {
				_, err := get(t, httpClient, ctx, srv.URL+path)
				require.NoError(t, err)
			}
			parent.End()
			wait := only(t, rec.Ended(), "polite.wait")
			assert.Equal(t, parent.SpanContext().TraceID(), wait.SpanContext().TraceID())
			assert.Equal(t, "rate", attributes(wait)["polite.reason"].AsString())

			// Through a frontier, each request in a trace of its own.
			queue := frontier.New(tr)
			pushed := map[string]trace.TraceID{}
			for _, path := range []string{"/1", "/2", "/3"} {
				ctx, span := tp.Tracer("test").Start(context.Background(), "push "+path)
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
				require.NoError(t, err)
				require.NoError(t, queue.Push(req))
				pushed[path] = span.SpanContext().TraceID()
				defer span.End()
			}
			queue.Close()
			for {
				req, err := queue.Next(context.Background())
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				resp, err := httpClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
			}
			for path, id := range pushed {
				s := clientSpan(t, rec.Ended(), path)
				assert.Equal(t, id, s.SpanContext().TraceID(), "otelhttp's span of %s in the trace it was pushed in", path)
			}
			for _, w := range named(rec.Ended(), "polite.wait")[1:] {
				assert.Contains(t, slices.Collect(maps.Values(pushed)), w.SpanContext().TraceID(), "a wait in the trace of a pushed request")
			}
		})
	}
}

// TestMetricsDegradedAndFailed: a request paced by the fallback while
// Redis does not answer, sent to a server that is gone, counts as degraded
// and failed, as in the Transport's stats.
func TestMetricsDegradedAndFailed(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	gone := newServer(t, nil)
	gone.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	nobody := ln.Addr().String()
	ln.Close()
	client := redis.NewClient(&redis.Options{Addr: nobody, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	l, err := redislimiter.New(client, redislimiter.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	tr, err := polite.NewTransport(nil, polite.WithLimiter(l))
	require.NoError(t, err)
	_, err = otelpolite.RegisterMetrics(tr, otelpolite.WithMeterProvider(mp))
	require.NoError(t, err)

	_, err = get(t, &http.Client{Transport: tr}, context.Background(), gone.URL+"/")
	require.Error(t, err)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	s, ok := tr.Stats("127.0.0.1")
	require.True(t, ok)
	at := attribute.NewSet(attribute.String("polite.domain", "127.0.0.1"))
	assert.EqualValues(t, 1, s.DegradedRequests)
	assert.EqualValues(t, s.DegradedRequests, point[int64](t, rm, "polite.degraded_requests", at))
	assert.EqualValues(t, 1, s.FailedRequests)
	assert.EqualValues(t, s.FailedRequests, point[int64](t, rm, "polite.requests.failed", at))
}
