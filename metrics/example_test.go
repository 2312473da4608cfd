package metrics_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/metrics"
)

func ExampleNewCollector() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer site.Close()

	t, err := polite.NewTransport(nil)
	if err != nil {
		panic(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(t, metrics.WithMaxDomains(100)))
	// Serve the metrics for Prometheus to scrape, e.g. on :9090.
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	client := &http.Client{Transport: t}
	resp, err := client.Get(site.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()

	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		if f.GetName() == "polite_requests_total" {
			m := f.GetMetric()[0]
			fmt.Printf("%s{domain=%q} %v\n", f.GetName(), m.GetLabel()[0].GetValue(), m.GetCounter().GetValue())
		}
	}
	// Output: polite_requests_total{domain="127.0.0.1"} 1
}
