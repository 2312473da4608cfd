package main

import (
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/metrics"
)

// serveMetrics serves t's metrics at http://addr/metrics until the
// returned server is closed; srv.Addr is the address it listens on.
func serveMetrics(addr string, t *polite.Transport) (*http.Server, error) {
	c, err := metrics.NewCollector(t)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Addr: ln.Addr().String(), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv, nil
}
