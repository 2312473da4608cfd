package otelpolite_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/frontier"
	"github.com/polite-go/polite/metrics"
	"github.com/polite-go/polite/otelpolite"
)

// TestMetrics reads, with the SDK's manual reader, the metrics of four
// requests to one domain, which each waited for their turn (the robots.txt
// fetch took the first), the last answered 429 with Retry-After, one
// robots.txt refused, and one whose body is still open: they agree with
// the Transport's own stats.
func TestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	srv := newServer(t, nil)
	tr, err := polite.NewTransport(nil, polite.WithDefault(pace), polite.WithRobots("testbot"))
	require.NoError(t, err)
	_, err = otelpolite.RegisterMetrics(tr, otelpolite.WithMeterProvider(mp))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	open, err := client.Get(srv.URL + "/open")
	require.NoError(t, err)
	t.Cleanup(func() { open.Body.Close() })
	for _, path := range []string{"/1", "/2", "/private", "/busy"} {
		get(t, client, context.Background(), srv.URL+path)
	}

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	all := tr.AllStats()
	require.Len(t, all, 1)
	var domain string
	for domain = range all {
	}
	s := all[domain]
	at := attribute.NewSet(attribute.String("polite.domain", domain))
	with := func(key, value string) attribute.Set {
		return attribute.NewSet(attribute.String("polite.domain", domain), attribute.String(key, value))
	}

	assert.EqualValues(t, 4, s.TotalRequests)
	assert.EqualValues(t, s.TotalRequests, point[int64](t, rm, "polite.requests", at))
	assert.EqualValues(t, s.RobotsRequests, point[int64](t, rm, "polite.robots.requests", at))
	assert.EqualValues(t, s.DelayedRequests, point[int64](t, rm, "polite.requests.delayed", at))
	assert.EqualValues(t, s.DisallowedRequests, point[int64](t, rm, "polite.requests.disallowed", at))
	for class, want := range map[string]int64{"2xx": s.Responses[2], "4xx": s.Responses[4]} {
		assert.EqualValues(t, want, point[int64](t, rm, "polite.responses", with("polite.class", class)), class)
	}
	assert.EqualValues(t, 1, s.ThrottledResponses)
	assert.EqualValues(t, s.ThrottledResponses, point[int64](t, rm, "polite.throttled_responses", at))
	assert.Equal(t, s.PausedTime.Seconds(), point[float64](t, rm, "polite.paused_seconds", at))
	assert.EqualValues(t, 1, point[int64](t, rm, "polite.paused", with("polite.reason", "retry-after")), "paused for 1s at the server's request")
	assert.EqualValues(t, 1, s.InFlight)
	assert.EqualValues(t, s.InFlight, point[int64](t, rm, "polite.requests.in_flight", at))
	assert.EqualValues(t, 1, point[int64](t, rm, "polite.domains", *attribute.EmptySet()))
	wait := point[float64](t, rm, "polite.wait", at)
	assert.Greater(t, wait, 0.45, "three waits of about 200ms")
	assert.Equal(t, s.TotalWaitTime.Seconds(), wait)
}

// TestMetricsMatchCollector makes two domains through every figure it
// can (robots.txt, waits, a frontier's line, a refusal, a 429's pause, a
// body left open, a cancelled wait, a domain given up) and reads them both
// through the Prometheus collector and through RegisterMetrics, with and
// without a cap on the domains: turned into Prometheus names by the
// package doc's rule, OpenTelemetry has every metric of the collector,
// and no other, of the same kind, with the same points. A metric the
// collector gains that otelpolite lacks fails here.
func TestMetricsMatchCollector(t *testing.T) {
	srv := newServer(t, nil)
	tr, err := polite.NewTransport(nil, polite.WithDefault(pace), polite.WithRobots("testbot"), polite.WithMaxErrors(1))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	get(t, client, context.Background(), other+"/broken")
	_, err = get(t, client, context.Background(), other+"/after")
	require.ErrorIs(t, err, polite.ErrGivenUp)

	queue := frontier.New(tr)
	for _, path := range []string{"/q1", "/q2"} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		require.NoError(t, queue.Push(req))
	}
	queue.Close()
	for {
		req, err := queue.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	get(t, client, context.Background(), srv.URL+"/private")
	open, err := client.Get(srv.URL + "/open")
	require.NoError(t, err)
	t.Cleanup(func() { open.Body.Close() })
	get(t, client, context.Background(), srv.URL+"/busy")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = get(t, client, ctx, srv.URL+"/late")
	require.Error(t, err, "paused for a second, past its deadline")

	s, ok := tr.Stats("127.0.0.1")
	require.True(t, ok)
	assert.Positive(t, s.QueuedTime)
	assert.EqualValues(t, 1, s.CanceledRequests)
	given, ok := tr.Stats("localhost")
	require.True(t, ok)
	assert.EqualValues(t, 1, given.GivenUpRequests)

	for _, maxDomains := range []int{0, 1} {
		got := newTwins(t, tr, maxDomains).agree(t)
		if maxDomains == 1 {
			assert.Contains(t, got, `polite_requests_total counter {domain="other"}`)
		}
	}
}

// TestMetricsForgottenDomains keys each request by its path on a
// Transport that tracks two domains: a domain it forgets loses its
// points, and under WithMaxDomains(1) the counts of those in "other" stay
// there, as the collector's do. A key that is not UTF-8 is quoted, as the collector
// quotes it.
func TestMetricsForgottenDomains(t *testing.T) {
	srv := newServer(t, nil)
	byPath := func(r *http.Request) (string, error) { return r.URL.Path, nil }
	tr, err := polite.NewTransport(nil, polite.WithKeyFunc(byPath), polite.WithMaxDomains(2), polite.WithLoopbackExempt())
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	all, capped := newTwins(t, tr, 0), newTwins(t, tr, 1)
	for _, path := range []string{"/a", "/a", "/b", "/c", "/%FF"} {
		_, err := get(t, client, context.Background(), srv.URL+path)
		require.NoError(t, err)
		all.agree(t)
		capped.agree(t)
	}
	assert.Len(t, tr.AllStats(), 2)
	got := all.agree(t)
	assert.NotContains(t, got, `polite_requests_total counter {domain="/a"}`, "forgotten")
	assert.Contains(t, got, `polite_requests_total counter {domain="\"/\\xff\""}`, "quoted")
	assert.EqualValues(t, 2, requests(got), "the requests of the domains tracked")
	assert.Positive(t, capped.agree(t)[`polite_requests_total counter {domain="other"}`], "the domains not chosen, forgotten or not")
}

// requests sums polite_requests_total over the domains of points.
func requests(points map[string]float64) float64 {
	var n float64
	for name, v := range points {
		if strings.HasPrefix(name, "polite_requests_total ") {
			n += v
		}
	}
	return n
}

// twins read one Transport's metrics through the Prometheus collector and
// through RegisterMetrics, under the same WithMaxDomains.
type twins struct {
	registry *prometheus.Registry
	reader   *sdkmetric.ManualReader
}

func newTwins(t *testing.T, tr *polite.Transport, maxDomains int) twins {
	t.Helper()
	registry := prometheus.NewPedanticRegistry()
	c, err := metrics.NewCollector(tr, metrics.WithMaxDomains(maxDomains))
	require.NoError(t, err)
	require.NoError(t, registry.Register(c))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	_, err = otelpolite.RegisterMetrics(tr, otelpolite.WithMeterProvider(mp), otelpolite.WithMaxDomains(maxDomains))
	require.NoError(t, err)
	return twins{registry: registry, reader: reader}
}

// agree asserts that both read the same points, turned into Prometheus
// names by the package doc's rule, and returns them. A pause that ends
// between the two reads changes polite_paused: each pause ends once, so
// with at most two pauses one of three pairs of reads agrees.
func (w twins) agree(t *testing.T) map[string]float64 {
	t.Helper()
	var want, got map[string]float64
	for range 3 {
		families, err := w.registry.Gather()
		require.NoError(t, err)
		var rm metricdata.ResourceMetrics
		require.NoError(t, w.reader.Collect(context.Background(), &rm))
		if want, got = prometheusPoints(families), otelPoints(t, rm); maps.Equal(want, got) {
			break
		}
	}
	assert.Equal(t, want, got)
	return got
}

// TestRegisterMetricsErrors: what RegisterMetrics cannot use is an error.
func TestRegisterMetricsErrors(t *testing.T) {
	_, err := otelpolite.RegisterMetrics(nil)
	assert.ErrorContains(t, err, "Transport is nil")
	tr, err := polite.NewTransport(nil)
	require.NoError(t, err)
	_, err = otelpolite.RegisterMetrics(tr, otelpolite.WithMaxDomains(-1))
	assert.ErrorContains(t, err, "must not be negative")
}

// TestMetricsUnregister: a registration unregistered reports nothing.
func TestMetricsUnregister(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tr, err := polite.NewTransport(nil)
	require.NoError(t, err)
	reg, err := otelpolite.RegisterMetrics(tr, otelpolite.WithMeterProvider(mp))
	require.NoError(t, err)
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	assert.EqualValues(t, 0, point[int64](t, rm, "polite.domains", *attribute.EmptySet()))
	require.NoError(t, reg.Unregister())
	require.NoError(t, reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			assert.Empty(t, otelPoints(t, metricdata.ResourceMetrics{ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: []metricdata.Metrics{m}}}}), m.Name)
		}
	}
}

// prometheusPoints lists the samples of families as
// `name kind {label="value",...}`, with their values.
func prometheusPoints(families []*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, f := range families {
		kind := strings.ToLower(f.GetType().String())
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			value := m.GetGauge().GetValue()
			if f.GetType() == dto.MetricType_COUNTER {
				value = m.GetCounter().GetValue()
			}
			out[sample(f.GetName(), kind, labels)] = value
		}
	}
	return out
}

// otelPoints lists the points of rm as prometheusPoints does, named by
// the package doc's rule: dots become underscores, the unit s adds
// _seconds unless the name ends with it, a counter (a monotonic sum) adds
// _total and is a counter, anything else a gauge; an attribute polite.x
// is the label x.
func otelPoints(t *testing.T, rm metricdata.ResourceMetrics) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			name := strings.ReplaceAll(m.Name, ".", "_")
			if m.Unit == "s" && !strings.HasSuffix(name, "_seconds") {
				name += "_seconds"
			}
			var points []metricdata.DataPoint[float64]
			monotonic := false
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				points, monotonic = floats(data.DataPoints), data.IsMonotonic
			case metricdata.Sum[float64]:
				points, monotonic = data.DataPoints, data.IsMonotonic
			case metricdata.Gauge[int64]:
				points = floats(data.DataPoints)
			default:
				t.Fatalf("%s: unexpected %T", m.Name, m.Data)
			}
			kind := "gauge"
			if monotonic {
				name, kind = name+"_total", "counter"
			}
			for _, p := range points {
				labels := map[string]string{}
				for _, kv := range p.Attributes.ToSlice() {
					labels[strings.TrimPrefix(string(kv.Key), "polite.")] = kv.Value.AsString()
				}
				out[sample(name, kind, labels)] = p.Value
			}
		}
	}
	return out
}

func floats(points []metricdata.DataPoint[int64]) []metricdata.DataPoint[float64] {
	out := make([]metricdata.DataPoint[float64], len(points))
	for i, p := range points {
		out[i] = metricdata.DataPoint[float64]{Attributes: p.Attributes, Value: float64(p.Value)}
	}
	return out
}

// sample names one sample: its metric, kind and labels, sorted.
func sample(name, kind string, labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = k + "=" + strconv.Quote(labels[k])
	}
	return name + " " + kind + " {" + strings.Join(pairs, ",") + "}"
}

// point returns the value of the metric named name for the attributes at.
func point[N int64 | float64](t *testing.T, rm metricdata.ResourceMetrics, name string, at attribute.Set) N {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			var points []metricdata.DataPoint[N]
			switch data := m.Data.(type) {
			case metricdata.Sum[N]:
				points = data.DataPoints
			case metricdata.Gauge[N]:
				points = data.DataPoints
			default:
				t.Fatalf("%s: unexpected %T", name, m.Data)
			}
			for _, p := range points {
				if p.Attributes.Equals(&at) {
					return p.Value
				}
			}
			t.Fatalf("%s has no point for %v", name, at.ToSlice())
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
