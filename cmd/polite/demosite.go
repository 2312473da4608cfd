package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// demoSite is a local web server that answers for several made-up domains
// under .test (a name reserved for testing, RFC 2606), so that the demo
// needs no DNS and no network.
type demoSite struct {
	srv     *http.Server
	addr    string // host:port it listens on
	domains map[string]*demoHost
}

// demoHost is one domain of the demo site.
type demoHost struct {
	demoDomain
	hits atomic.Int64
}

// startDemoSite starts the site on a free loopback port.
func startDemoSite(domains []demoDomain) (*demoSite, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &demoSite{addr: ln.Addr().String(), domains: make(map[string]*demoHost)}
	for _, d := range domains {
		s.domains[d.name] = &demoHost{demoDomain: d}
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

func (s *demoSite) Close() error { return s.srv.Close() }

// ServeHTTP answers as the domain the request names, after a short
// latency; a throttling domain answers 429 with Retry-After to every
// throttle-th request.
func (s *demoSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	d, ok := s.domains[host]
	if !ok {
		http.NotFound(w, r)
		return
	}
	n := d.hits.Add(1)
	time.Sleep(time.Duration(10+rand.IntN(40)) * time.Millisecond)
	if d.throttle > 0 && n%int64(d.throttle) == 0 {
		w.Header().Set("Retry-After", fmt.Sprint(d.retryAfter))
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	}
	fmt.Fprintf(w, "<!doctype html><title>%s%s</title><p>Page %s of %s, request %d.\n", host, r.URL.Path, r.URL.Path, host, n)
}

// transport returns an http.Transport that sends every *.test name to the
// site, and refuses any other.
func (s *demoSite) transport() *http.Transport {
	var dialer net.Dialer
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil || !strings.HasSuffix(host, ".test") {
				return nil, fmt.Errorf("demo: %s is not a demo site (only *.test)", addr)
			}
			return dialer.DialContext(ctx, "tcp", s.addr)
		},
		MaxIdleConnsPerHost: 4,
	}
}
