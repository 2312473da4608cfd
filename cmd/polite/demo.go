package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"text/tabwriter"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

const demoSynopsis = `polite demo [-v]

Crawls a small site served on this machine for a few made-up domains
(*.test; no network needed), through a polite Transport where each domain
has its own pace and one answers some requests with 429 and Retry-After.
Watch the progress on stderr, then read the per-domain table. Takes about
10-15 seconds.`

// demoDomain is one domain of the demo and how polite paces it.
type demoDomain struct {
	name       string
	limit      config.Limit
	pages      int
	throttle   int // answer 429 to every throttle-th request; 0: never
	retryAfter int // seconds, in the 429's Retry-After
	about      string
}

var demoDomains = []demoDomain{
	{name: "news.test", limit: config.Limit{RequestsPerSecond: 5, Burst: 3}, pages: 15,
		about: "5 requests/s, bursts of 3"},
	{name: "shop.test", limit: config.Limit{RequestsPerSecond: 1, Burst: 1}, pages: 8,
		about: "1 request/s (the default pace)"},
	{name: "wiki.test", limit: config.Limit{MinDelay: 800 * time.Millisecond, Jitter: 400 * time.Millisecond}, pages: 10,
		about: "800ms apart, plus a random 0-400ms"},
	{name: "api.test", limit: config.Limit{RequestsPerSecond: 2, Burst: 1}, pages: 12, throttle: 5, retryAfter: 1,
		about: "2 requests/s; the server answers every 5th request with 429, Retry-After: 1"},
}

func runDemo(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("polite demo", demoSynopsis)
	verbose := fs.Bool("v", false, "log each wait to stderr (turns the live bar off)")
	rest, err := parseArgs(fs, args)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("unexpected argument %q", rest[0])
	}
	if err != nil {
		return usageError(e, fs, err)
	}

	site, err := startDemoSite(demoDomains)
	if err != nil {
		return fatal(e, "polite demo", fmt.Errorf("starting the local site: %w", err))
	}
	defer site.Close()
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	opts := []polite.Option{polite.WithLogger(logger)}
	var targets []target
	for _, d := range demoDomains {
		opts = append(opts, polite.WithDomain(d.name, d.limit))
		for i := 1; i <= d.pages; i++ {
			targets = append(targets, parseTarget(fmt.Sprintf("http://%s/page/%d", d.name, i), polite.DomainKey))
		}
	}
	t, err := polite.NewTransport(site.transport(), opts...)
	if err != nil {
		return fatal(e, "polite demo", err)
	}
	defer t.CloseIdleConnections()

	fmt.Fprintf(e.stdout, "polite demo: crawling %d pages of %d made-up domains, served on %s (no network).\n",
		len(targets), len(demoDomains), site.addr)
	fmt.Fprintln(e.stdout, "Each domain has its own pace:")
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, d := range demoDomains {
		fmt.Fprintf(tw, "  %s\t%d pages\t%s\n", d.name, d.pages, d.about)
	}
	tw.Flush()
	fmt.Fprintln(e.stdout)

	c := &crawl{
		client:      &http.Client{Transport: t, Timeout: time.Minute},
		transport:   t,
		concurrency: 8,
		userAgent:   defaultUserAgent,
		display:     newDisplay(e.stderr, !*verbose),
	}
	start := time.Now()
	failed := c.run(ctx, targets)
	elapsed := time.Since(start)

	fmt.Fprintln(e.stdout)
	if err := writeTable(e.stdout, t.AllStats()); err != nil {
		fmt.Fprintf(e.stderr, "polite demo: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, `
%d pages in %s, %d failed. In the table:
  REQUESTS   requests sent; DELAYED  how many waited in the Transport for their
             turn (more than 10ms): few, as the workers take URLs from a frontier
             that hands out a domain's next URL when its turn comes
  AVG WAIT   the average wait of a delayed request
  THROTTLED  429 and 503 answers; PAUSED  how long the domain was paused at the
             server's request (Retry-After): no request to it went meanwhile
  Slow domains never held up fast ones: a free worker takes the URL whose
  domain can go soonest.
Next: polite fetch -h, and the config file in the README.
`, len(targets), elapsed.Round(100*time.Millisecond), failed)
	if failed > 0 {
		return exitFailed
	}
	return exitOK
}
