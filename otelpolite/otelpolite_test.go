package otelpolite_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/otelpolite"
)

// server is a real HTTP server: its robots.txt disallows /private,
// /busy answers 429 with Retry-After: 1, /broken 502, /open 200 with a
// body, and every other path 200 with none. Each
// request it receives is recorded with the trace it carries.
type server struct {
	*httptest.Server
	hold chan struct{} // if not nil, robots.txt is answered once it is closed

	mu     sync.Mutex
	traces map[string]trace.TraceID // path → the trace the request came in
}

func newServer(t *testing.T, hold chan struct{}) *server {
	s := &server{hold: hold, traces: map[string]trace.TraceID{}}
	prop := propagation.TraceContext{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc := trace.SpanContextFromContext(prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		s.mu.Lock()
		s.traces[r.URL.Path] = sc.TraceID()
		s.mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			if s.hold != nil {
				<-s.hold
			}
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
		case "/busy":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/broken":
			w.WriteHeader(http.StatusBadGateway)
		case "/open":
			io.WriteString(w, "a body to leave open")
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// orders are the two ways polite and otelhttp wrap each other, each a
// client transport made from polite's options, with otelhttp recording
// to tp. outer says that otelhttp wraps polite.
var orders = []struct {
	name   string
	outer  bool
	client func(t *testing.T, tp trace.TracerProvider, opts ...polite.Option) http.RoundTripper
}{
	{"otelhttp over polite", true, func(t *testing.T, tp trace.TracerProvider, opts ...polite.Option) http.RoundTripper {
		tr, err := polite.NewTransport(http.DefaultTransport.(*http.Transport).Clone(), opts...)
		require.NoError(t, err)
		return otelhttp.NewTransport(tr, otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(propagation.TraceContext{}))
	}},
	{"polite over otelhttp", false, func(t *testing.T, tp trace.TracerProvider, opts ...polite.Option) http.RoundTripper {
		base := otelhttp.NewTransport(http.DefaultTransport.(*http.Transport).Clone(), otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(propagation.TraceContext{}))
		tr, err := polite.NewTransport(base, opts...)
		require.NoError(t, err)
		return tr
	}},
}

// recorder returns a tracer provider that records every span it ends.
func recorder() (*sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), rec
}

// pace is 5 requests a second, burst 1: a request right after another
// waits about 200ms for the rate.
var pace = config.Limit{RequestsPerSecond: 5, Burst: 1}

func get(t *testing.T, client *http.Client, ctx context.Context, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// TestSpans sends, in each order with otelhttp and inside one parent
// span: a first request, which fetches robots.txt; a second, which waits
// for its turn; one robots.txt disallows; and one answered 429 with
// Retry-After. The trace holds the wait span with its attributes, the
// robots.txt fetch as a child of the first request's span, the refusal's
// error, and the pause with its reason.
func TestSpans(t *testing.T) {
	for _, order := range orders {
		t.Run(order.name, func(t *testing.T) {
			tp, rec := recorder()
			srv := newServer(t, nil)
			client := &http.Client{Transport: order.client(t, tp, polite.WithDefault(pace), polite.WithRobots("testbot"),
				otelpolite.WithTracing(otelpolite.WithTracerProvider(tp)))}

			ctx, parent := tp.Tracer("test").Start(context.Background(), "crawl")
			_, err := get(t, client, ctx, srv.URL+"/first")
			require.NoError(t, err)
			_, err = get(t, client, ctx, srv.URL+"/second")
			require.NoError(t, err)
			_, err = get(t, client, ctx, srv.URL+"/private?token=secret")
			require.ErrorIs(t, err, polite.ErrDisallowed)
			resp, err := get(t, client, ctx, srv.URL+"/busy")
			require.NoError(t, err)
			require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
			parent.End()

			spans := rec.Ended()
			traceID := parent.SpanContext().TraceID()
			for _, s := range spans {
				assert.Equal(t, traceID, s.SpanContext().TraceID(), "span %s in the crawl's trace", s.Name())
			}

			// The robots.txt fetch took the first turn: /first, /second
			// and /busy each waited for theirs.
			waits := named(spans, "polite.wait")
			require.Len(t, waits, 3)
			for i, path := range []string{"/first", "/second", "/busy"} {
				wait := waits[i]
				attrs := attributes(wait)
				assert.Equal(t, "127.0.0.1", attrs["polite.domain"].AsString())
				assert.Equal(t, "domain", attrs["polite.scope"].AsString())
				assert.Equal(t, "rate", attrs["polite.reason"].AsString())
				assert.Greater(t, attrs["polite.wait.duration"].AsFloat64(), 0.05, "the wait, in seconds")
				assert.Greater(t, wait.EndTime().Sub(wait.StartTime()), 50*time.Millisecond, "the span lasts as long as the wait")
				assert.Equal(t, requestSpan(t, spans, parent, path, order.outer).SpanID(), wait.Parent().SpanID(), "polite.wait is a child of the span of %s", path)
			}

			robots := only(t, spans, "polite.robots")
			assert.Equal(t, requestSpan(t, spans, parent, "/first", order.outer).SpanID(), robots.Parent().SpanID(), "the fetch is a child of the first request's span")
			if !order.outer {
				// otelhttp sends the fetch: its span is a child of the
				// fetch's, and the trace goes on to the server.
				assert.Equal(t, robots.SpanContext().SpanID(), clientSpan(t, spans, "/robots.txt").Parent().SpanID(), "otelhttp's span of the fetch is a child of polite.robots")
				srv.mu.Lock()
				assert.Equal(t, traceID, srv.traces["/robots.txt"], "the fetch carries the trace to the server")
				srv.mu.Unlock()
			}

			refused := only(t, spans, "polite.refused")
			assert.Equal(t, codes.Error, refused.Status().Code)
			assert.Contains(t, refused.Status().Description, "Disallow: /private")
			assert.NotContains(t, refused.Status().Description, "secret", "never the query")
			assert.Equal(t, "robots.txt", attributes(refused)["polite.refusal"].AsString())

			pause := event(t, spans, "polite.pause")
			pattrs := map[attribute.Key]attribute.Value{}
			for _, kv := range pause.Attributes {
				pattrs[kv.Key] = kv.Value
			}
			assert.Equal(t, "retry-after", pattrs["polite.reason"].AsString())
			assert.InDelta(t, 1, pattrs["polite.pause.duration"].AsFloat64(), 0.5)
		})
	}
}

// TestRobotsFetchLinked: a request that waits for a robots.txt fetch
// another request started gets a span linked to the fetch's, which links
// back to it.
func TestRobotsFetchLinked(t *testing.T) {
	tp, rec := recorder()
	hold := make(chan struct{})
	srv := newServer(t, hold)
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release) // before the server closes, which waits for its handlers
	client := &http.Client{Transport: orders[1].client(t, tp, polite.WithDefault(pace), polite.WithRobots("testbot"),
		otelpolite.WithTracing(otelpolite.WithTracerProvider(tp)))}

	ctx1, first := tp.Tracer("test").Start(context.Background(), "first")
	ctx2, second := tp.Tracer("test").Start(context.Background(), "second")
	var wg sync.WaitGroup
	wg.Go(func() { _, err := get(t, client, ctx1, srv.URL+"/a"); assert.NoError(t, err) })
	require.Eventually(t, func() bool { return startedFetch(srv) }, 10*time.Second, time.Millisecond)
	wg.Go(func() { _, err := get(t, client, ctx2, srv.URL+"/b"); assert.NoError(t, err) })
	require.Eventually(t, func() bool { return has(rec.Ended(), "polite.robots.wait") }, 10*time.Second, time.Millisecond)
	release()
	wg.Wait()
	first.End()
	second.End()

	spans := rec.Ended()
	robots := only(t, spans, "polite.robots")
	joined := only(t, spans, "polite.robots.wait")
	assert.Equal(t, first.SpanContext().TraceID(), robots.SpanContext().TraceID(), "the fetch in the trace of the request that started it")
	assert.Equal(t, second.SpanContext().SpanID(), joined.Parent().SpanID(), "the wait in the trace of the request that joined")
	require.Len(t, joined.Links(), 1)
	assert.Equal(t, robots.SpanContext(), joined.Links()[0].SpanContext, "linked to the fetch")
	require.Len(t, robots.Links(), 1)
	assert.Equal(t, joined.SpanContext(), robots.Links()[0].SpanContext, "the fetch linked back")
}

// TestRefusalWaitTooLong: a request whose turn comes after WithMaxWait
// gets a refused span that says so.
func TestRefusalWaitTooLong(t *testing.T) {
	for _, order := range orders {
		t.Run(order.name, func(t *testing.T) {
			tp, rec := recorder()
			srv := newServer(t, nil)
			slow := config.Limit{RequestsPerSecond: 0.1, Burst: 1}
			client := &http.Client{Transport: order.client(t, tp, polite.WithDefault(slow), polite.WithMaxWait(time.Second),
				otelpolite.WithTracing(otelpolite.WithTracerProvider(tp)))}
			ctx, parent := tp.Tracer("test").Start(context.Background(), "crawl")
			_, err := get(t, client, ctx, srv.URL+"/1")
			require.NoError(t, err)
			_, err = get(t, client, ctx, srv.URL+"/2")
			require.Error(t, err)
			parent.End()

			refused := only(t, rec.Ended(), "polite.refused")
			assert.Equal(t, codes.Error, refused.Status().Code)
			assert.Equal(t, "wait too long", attributes(refused)["polite.refusal"].AsString())
			assert.Equal(t, parent.SpanContext().TraceID(), refused.SpanContext().TraceID())
		})
	}
}

// TestRefusalGivenUp: a request to a domain given up after its failed
// answers gets a refused span that says so.
func TestRefusalGivenUp(t *testing.T) {
	for _, order := range orders {
		t.Run(order.name, func(t *testing.T) {
			tp, rec := recorder()
			srv := newServer(t, nil)
			fast := config.Limit{RequestsPerSecond: 1000, Burst: 10}
			client := &http.Client{Transport: order.client(t, tp, polite.WithDefault(fast), polite.WithMaxErrors(1),
				otelpolite.WithTracing(otelpolite.WithTracerProvider(tp)))}
			ctx, parent := tp.Tracer("test").Start(context.Background(), "crawl")
			_, err := get(t, client, ctx, srv.URL+"/broken")
			require.NoError(t, err, "a 502 is a response")
			_, err = get(t, client, ctx, srv.URL+"/1")
			require.ErrorIs(t, err, polite.ErrGivenUp)
			parent.End()

			refused := only(t, rec.Ended(), "polite.refused")
			assert.Equal(t, codes.Error, refused.Status().Code)
			assert.Equal(t, "given up", attributes(refused)["polite.refusal"].AsString())
			assert.Equal(t, parent.SpanContext().TraceID(), refused.SpanContext().TraceID())
		})
	}
}

func startedFetch(s *server) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.traces["/robots.txt"]
	return ok
}

func has(spans []sdktrace.ReadOnlySpan, name string) bool {
	for _, s := range spans {
		if s.Name() == name {
			return true
		}
	}
	return false
}

// only returns the one span named name.
func only(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	found := named(spans, name)
	require.Len(t, found, 1, "spans named %s", name)
	return found[0]
}

// named returns the spans named name, in the order they started.
func named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var found []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	slices.SortFunc(found, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return found
}

// requestSpan returns the span a request for path was made in:
// otelhttp's span of it when otelhttp wraps polite (outer), else the
// parent.
func requestSpan(t *testing.T, spans []sdktrace.ReadOnlySpan, parent trace.Span, path string, outer bool) trace.SpanContext {
	t.Helper()
	if !outer {
		return parent.SpanContext()
	}
	return clientSpan(t, spans, path).SpanContext()
}

// clientSpan returns otelhttp's one span of a request for path.
func clientSpan(t *testing.T, spans []sdktrace.ReadOnlySpan, path string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.SpanKind() == trace.SpanKindClient && strings.HasSuffix(attributes(s)["url.full"].AsString(), path) {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "otelhttp spans of %s", path)
	return found[0]
}

func attributes(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// event returns the one event named name among the spans'.
func event(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.Event {
	t.Helper()
	var found []sdktrace.Event
	for _, s := range spans {
		for _, e := range s.Events() {
			if e.Name == name {
				found = append(found, e)
			}
		}
	}
	require.Len(t, found, 1, "events named %s", name)
	return found[0]
}

// TestPauseWithoutParent: a pause learned by a request whose context holds
// no span is an event on a span of its own.
func TestPauseWithoutParent(t *testing.T) {
	tp, rec := recorder()
	srv := newServer(t, nil)
	client := &http.Client{Transport: orders[1].client(t, tp, polite.WithDefault(pace), otelpolite.WithTracing(otelpolite.WithTracerProvider(tp)))}
	resp, err := get(t, client, context.Background(), srv.URL+"/busy")
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)

	span := only(t, rec.Ended(), "polite.pause")
	assert.False(t, span.Parent().IsValid(), "a root span")
	e := event(t, rec.Ended(), "polite.pause")
	assert.Contains(t, e.Attributes, attribute.String("polite.reason", "retry-after"))
}
