package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/metrics"
)

// TestDashboardQueriesNameExportedMetrics: every query of the Grafana
// dashboard (dashboard/polite.json) names a metric, and every metric it
// names is one the collector describes, so that the dashboard cannot
// drift from the collector.
func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	exported := describedNames(t)
	raw, err := os.ReadFile("dashboard/polite.json")
	require.NoError(t, err)
	var dashboard any
	require.NoError(t, json.Unmarshal(raw, &dashboard))
	queries := queriesOf(dashboard)
	require.NotEmpty(t, queries)

	metricName := regexp.MustCompile(`\bpolite_[a-z_]+\b`)
	used := map[string]bool{}
	for _, q := range queries {
		names := metricName.FindAllString(q, -1)
		assert.NotEmpty(t, names, "a query that names no metric: %s", q)
		for _, name := range names {
			assert.True(t, exported[name], "%s, in %s, is not a metric the collector exports", name, q)
			used[name] = true
		}
	}
	assert.Greater(t, len(used), len(exported)/2, "the dashboard shows most metrics")
}

// describedNames returns the names of the metrics a collector describes.
func describedNames(t *testing.T) map[string]bool {
	tr, err := polite.NewTransport(nil)
	require.NoError(t, err)
	c, err := metrics.NewCollector(tr)
	require.NoError(t, err)
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	names := map[string]bool{}
	for d := range ch {
		m := fqName.FindStringSubmatch(d.String())
		require.NotNil(t, m, d.String())
		names[m[1]] = true
	}
	require.NotEmpty(t, names)
	return names
}

// queriesOf returns every PromQL query in a Grafana dashboard: the panels'
// "expr" and the template variables' "definition".
func queriesOf(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for key, x := range v {
			if s, ok := x.(string); ok && (key == "expr" || key == "definition") {
				out = append(out, s)
				continue
			}
			out = append(out, queriesOf(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, queriesOf(x)...)
		}
	}
	return out
}
