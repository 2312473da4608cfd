package otelpolite_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/otelpolite"
)

// TestMetrics reads, with the SDK's manual reader, the counters of four
// requests to one domain, which each waited for their turn (the robots.txt
// fetch took the first), the last answered 429 with Retry-After, and one
// robots.txt refused: they agree with the Transport's own stats.
func TestMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	srv := newServer(t, nil)
	tr, err := polite.NewTransport(nil, polite.WithDefault(pace), polite.WithRobots("testbot"),
		otelpolite.WithTracing(otelpolite.WithMeterProvider(mp)))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	for _, path := range []string{"/1", "/2", "/3", "/private", "/busy"} {
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

	assert.EqualValues(t, 4, s.TotalRequests)
	assert.EqualValues(t, s.TotalRequests, intSum(t, rm, "polite.requests", at))
	assert.EqualValues(t, s.RobotsRequests, intSum(t, rm, "polite.robots.requests", at))
	assert.EqualValues(t, s.DelayedRequests, intSum(t, rm, "polite.requests.delayed", attribute.NewSet(attribute.String("polite.domain", domain), attribute.String("polite.scope", "domain"))))
	assert.EqualValues(t, s.DisallowedRequests, intSum(t, rm, "polite.requests.disallowed", attribute.NewSet(attribute.String("polite.domain", domain), attribute.String("polite.refusal", "robots.txt"))))
	for class, want := range map[string]int64{"2xx": s.Responses[2], "4xx": s.Responses[4]} {
		assert.EqualValues(t, want, intSum(t, rm, "polite.responses", attribute.NewSet(attribute.String("polite.domain", domain), attribute.String("polite.class", class))), class)
	}
	assert.EqualValues(t, 1, s.ThrottledResponses)
	assert.EqualValues(t, s.ThrottledResponses, intSum(t, rm, "polite.throttled_responses", at))
	assert.EqualValues(t, s.PausedTime.Seconds(), floatSum(t, rm, "polite.paused", attribute.NewSet(attribute.String("polite.domain", domain), attribute.String("polite.reason", "retry-after"))))
	wait := floatSum(t, rm, "polite.wait", at)
	assert.Greater(t, wait, 0.45, "three waits of about 200ms")
	assert.InDelta(t, s.TotalWaitTime.Seconds(), wait, 0.01)
}

// sum returns the value of the counter named name for the attributes at.
func sum[N int64 | float64](t *testing.T, rm metricdata.ResourceMetrics, name string, at attribute.Set) N {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			data, ok := m.Data.(metricdata.Sum[N])
			require.True(t, ok, "%s is a sum: %T", name, m.Data)
			for _, p := range data.DataPoints {
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

func intSum(t *testing.T, rm metricdata.ResourceMetrics, name string, at attribute.Set) int64 {
	t.Helper()
	return sum[int64](t, rm, name, at)
}

func floatSum(t *testing.T, rm metricdata.ResourceMetrics, name string, at attribute.Set) float64 {
	t.Helper()
	return sum[float64](t, rm, name, at)
}
