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
		retries:     3,
	}
	sum := c.run(ctx, &listSource{targets: targets})

	fmt.Fprintln(e.stdout)
	if err := writeTable(e.stdout, domainRows(t.AllStats(), &c.figures, sum.elapsed, time.Now())); err != nil {
		fmt.Fprintf(e.stderr, "polite demo: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(e.stdout, `
%d pages in %s, %d failed. In the table:
  REQUESTS  requests sent (ROBOTS: robots.txt fetches, apart); RATE  the pace
            they went at; RETRIES  URLs put back after a 429 or 5xx
  QUEUED    time URLs waited in the frontier, summed over them; WAITED
            time requests waited in the Transport: little, as the frontier
            hands out a domain's next URL when its turn comes
  PAUSED    how long the server paused the domain (Retry-After, backoff)
            within the run: no request to it went meanwhile
  Slow domains never held up fast ones: a free worker takes the URL whose
  domain can go soonest.
Next: polite fetch -h, and the config file in the README.
`, sum.total, sum.elapsed.Round(100*time.Millisecond), sum.failed)
	if sum.failed+sum.notStarted > 0 {
		return exitFailed
	}
	return exitOK
}
