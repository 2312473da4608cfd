package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

const fetchSynopsis = `polite fetch [flags] [URL...]

Fetches each URL through a polite Transport, paced per domain, with a pool
of workers; a free worker takes the next URL of the domain whose turn comes
soonest. URLs come from the arguments or, without any, from stdin, one per
line (blank lines and lines starting with # are skipped).

Progress goes to stderr (a live bar on a terminal, one line per URL
otherwise), then a table of per-domain stats to stdout (JSON with -json).
Exit status: 0 when every URL got a response, whatever its status; 1 when
some did not (a bad URL, a network error, a timeout); 2 for bad usage or a
bad configuration.`

// defaultUserAgent is the User-Agent header polite fetch sends.
const defaultUserAgent = "polite-fetch (+https://github.com/polite-go/polite)"

// fetchFlags are polite fetch's flags.
type fetchFlags struct {
	config      string
	rate        float64
	burst       int
	concurrency int
	json        bool
	out         string
	timeout     time.Duration
	metrics     string
	redis       string
	robots      string
	verbose     bool
	set         map[string]bool // the flags given on the command line
}

func (f *fetchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "JSON config `file` with the default and per-domain limits")
	fs.Float64Var(&f.rate, "rate", 0, "`requests` per second per domain, for domains the config does not name (default: the config's default_config, else 1)")
	fs.IntVar(&f.burst, "burst", 0, "`requests` per domain that may go back to back (default: the config's default_config, else 1)")
	fs.IntVar(&f.concurrency, "concurrency", 4, "number of `workers` fetching at once")
	fs.BoolVar(&f.json, "json", false, "print the per-domain stats as one JSON object keyed by domain instead of a table")
	fs.StringVar(&f.out, "out", "", "save each body under `dir`, as DIR/HOST/NAME (never outside DIR, never overwriting)")
	fs.DurationVar(&f.timeout, "timeout", time.Minute, "time limit per URL, waiting for its turn included (0: none)")
	fs.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics at http://`addr`/metrics while fetching, e.g. 127.0.0.1:9090")
	fs.StringVar(&f.redis, "redis", "", "share each domain's pace with other processes through the Redis at `url` (redis://host:6379/0); if it does not answer, each process paces on its own")
	fs.StringVar(&f.robots, "robots", "", "obey robots.txt as the crawler named `agent` (its Crawl-delay too), and send it as the User-Agent")
	fs.BoolVar(&f.verbose, "v", false, "log each wait and the limits in force to stderr (turns the live bar off)")
}

// check validates the flags' values, given the set of flags fs parsed.
func (f *fetchFlags) check(fs *flag.FlagSet) error {
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	switch {
	case f.set["rate"] && (!(f.rate > 0) || math.IsInf(f.rate, 0)):
		return fmt.Errorf("-rate: must be a positive number of requests per second, got %v", f.rate)
	case f.set["burst"] && f.burst < 1:
		return fmt.Errorf("-burst: must be at least 1, got %d", f.burst)
	case f.concurrency < 1:
		return fmt.Errorf("-concurrency: must be at least 1, got %d", f.concurrency)
	case f.timeout < 0:
		return fmt.Errorf("-timeout: must not be negative, got %v", f.timeout)
	}
	return nil
}

// options turns the flags into Transport options: the config file first,
// then -rate and -burst over its default, then -robots. The limiter is
// added apart (see sharedLimiter).
func (f *fetchFlags) options() ([]polite.Option, error) {
	var opts []polite.Option
	if f.robots != "" {
		opts = append(opts, polite.WithRobots(f.robots))
	}
	def := config.DefaultLimit
	if f.config != "" {
		file, err := config.Load(f.config)
		if err != nil {
			return nil, err
		}
		opts = append(opts, polite.WithConfig(file))
		def = file.Default
	}
	if f.set["rate"] {
		def.RequestsPerSecond = f.rate
		def.Burst = max(def.Burst, 1)
	}
	if f.set["burst"] {
		def.Burst = f.burst
	}
	return append(opts, polite.WithDefault(def)), nil
}

func runFetch(ctx context.Context, args []string, e env) int {
	fs := newFlagSet("polite fetch", fetchSynopsis)
	var f fetchFlags
	f.register(fs)
	urls, err := parseArgs(fs, args)
	if err == nil {
		err = f.check(fs)
	}
	if err == nil {
		urls, err = urlsOrStdin(urls, e.stdin)
	}
	if err != nil {
		return usageError(e, fs, err)
	}

	t, closeTransport, err := f.newTransport(e.stderr)
	if err != nil {
		return fatal(e, "polite fetch", err)
	}
	defer closeTransport()

	var saver *saver
	if f.out != "" {
		if saver, err = newSaver(f.out); err != nil {
			return fatal(e, "polite fetch", fmt.Errorf("-out: %w", err))
		}
		defer saver.Close()
	}
	if f.metrics != "" {
		srv, err := serveMetrics(f.metrics, t)
		if err != nil {
			return fatal(e, "polite fetch", fmt.Errorf("-metrics: %w", err))
		}
		defer srv.Close()
		fmt.Fprintf(e.stderr, "polite fetch: serving metrics at http://%s/metrics\n", srv.Addr)
	}

	targets := make([]target, len(urls))
	for i, raw := range urls {
		targets[i] = parseTarget(raw, polite.DomainKey)
	}
	c := &crawl{
		client:      &http.Client{Transport: t, Timeout: f.timeout},
		transport:   t,
		concurrency: f.concurrency,
		userAgent:   f.userAgent(),
		saver:       saver,
		display:     newDisplay(e.stderr, !f.verbose),
	}
	start := time.Now()
	failed := c.run(ctx, targets)
	fmt.Fprintf(e.stderr, "polite fetch: %d URLs in %s: %d got a response, %d failed\n",
		len(targets), time.Since(start).Round(time.Millisecond), len(targets)-failed, failed)

	if err := report(e, t, f.json); err != nil {
		fmt.Fprintf(e.stderr, "polite fetch: writing the stats: %v\n", err)
		return exitFailed
	}
	if failed > 0 {
		return exitFailed
	}
	return exitOK
}

// newTransport returns the Transport the flags describe, logging to
// stderr, and a function that releases what it holds.
func (f *fetchFlags) newTransport(stderr io.Writer) (*polite.Transport, func(), error) {
	opts, err := f.options()
	if err != nil {
		return nil, nil, err
	}
	logger := slog.New(slog.DiscardHandler)
	if f.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	opts = append(opts, polite.WithLogger(logger))
	release := func() {}
	if f.redis != "" {
		redisLogger := logger // Redis going away and coming back is worth a line even without -v
		if !f.verbose {
			redisLogger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		}
		lim, err := sharedLimiter(f.redis, redisLogger)
		if err != nil {
			return nil, nil, fmt.Errorf("-redis: %w", err)
		}
		release = func() { lim.Close() }
		opts = append(opts, polite.WithLimiter(lim))
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = f.concurrency
	t, err := polite.NewTransport(base, opts...)
	if err != nil {
		release()
		return nil, nil, err
	}
	return t, func() {
		t.CloseIdleConnections()
		release()
	}, nil
}

// userAgent is the User-Agent header to send: the robots agent, if any,
// names the crawler.
func (f *fetchFlags) userAgent() string {
	if f.robots != "" {
		return f.robots + " (polite-fetch; +https://github.com/polite-go/polite)"
	}
	return defaultUserAgent
}

// report writes the per-domain stats to stdout: a table, or JSON.
func report(e env, t *polite.Transport, asJSON bool) error {
	if !asJSON {
		return writeTable(e.stdout, t.AllStats())
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(t.AllStats())
}

// fatal reports an error that stops the command before it fetches
// anything, on one line, and returns the exit code for bad usage or
// configuration.
func fatal(e env, command string, err error) int {
	fmt.Fprintf(e.stderr, "%s: %v\n", command, err)
	return exitUsage
}
