package metrics_test

import (
	"bufio"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

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
		log.Fatal(err)
	}
	c, err := metrics.NewCollector(t, metrics.WithMaxDomains(100))
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	// Serve the metrics for Prometheus to scrape; here on a test server,
	// in a program with http.Handle("/metrics", ...) on a port of its own.
	scrape := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer scrape.Close()

	client := &http.Client{Transport: t}
	resp, err := client.Get(site.URL)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()

	resp, err = http.Get(scrape.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "polite_requests_total{") {
			fmt.Println(lines.Text())
		}
	}
	// Output: polite_requests_total{domain="127.0.0.1"} 1
}
