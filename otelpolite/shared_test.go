package otelpolite_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/internal/redistest"
	"github.com/polite-go/polite/limiter/redislimiter"
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
			l, err := redislimiter.New(client, redislimiter.Options{})
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
