package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/net/http/httpguts"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/statefile"
)

const fetchSynopsis = `polite fetch [flags] [URL...]

Fetches each URL through a polite Transport, paced per domain, with a pool
of workers; a free worker takes the next URL of the domain whose turn comes
soonest. URLs come from the arguments or, without any, from stdin, one per
line (blank lines, lines starting with # and a UTF-8 byte-order mark are
skipped). The list is read as the crawl goes, at most 10,000 URLs ahead of
those done, so that the first request goes as soon as its line comes and
memory does not grow with the list; the frontier picks among the URLs read.
A line that cannot be used (two URLs, more than 64 KiB, a bad URL) fails
alone, naming its line number, and the run goes on.

An answer that asks to come back later (429, 500, 502, 503, 504, 522,
524), a network error or timeout, and a robots.txt that could not be
fetched put the URL back in line: it goes again when its domain's turn
comes (after the pause the server asked for), up to -retries times.

A domain whose server fails -max-errors answers in a row (an answer the
limit's error_statuses name, by default 500, 502, 503 and 504, or a
refused, reset or timed out connection) is given up: its URLs left fail
at once, each with that reason, and the table marks it.

Two limits bound the time: -timeout bounds one attempt, from when its turn
comes to the end of its body; -max-wait bounds how long a URL waits for
its domain's next turn (a pause, a Retry-After, a quota, a Crawl-delay).
A URL whose turn would come later is reported as not fetched, with when
it could have gone, and the run goes on without it.

Progress goes to stderr (a live bar with the time left on a terminal, one
line per URL with the time since the start otherwise), then a table of
per-domain figures to stdout (JSON with -json). Passwords in URLs are
never printed.

On SIGINT, SIGTERM or SIGHUP, no new request starts, requests already sent
get 5 seconds to end, the state (-state) is written and the table printed;
a second signal ends the process at once. With -config, SIGHUP reloads the
file instead, while the run goes on: each domain's next turn follows its
new limit, and stderr says what changed; a file that cannot be used
changes nothing.

Exit status: 0 when every URL got a final answer, whatever its status; 1
when some did not (a bad URL, a network error, a timeout, still asked to
come back after its retries, not fetched within -max-wait), or the state
could not be written; 2 for bad usage, a bad configuration or a -state
file another process is using; 128 plus the signal's number when stopped
by a signal (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, 141 for
SIGPIPE: a write to a closed pipe stops the run as the others do), as
shells report it.`

// defaultMaxErrors is -max-errors' default: with the backoff between
// failed answers (1 s, doubling), a domain failing from the start is
// given up after 63 s, and a run of a few hundred URLs ends within two
// minutes; a server that fails each page twice before it answers (six in
// a row over three pages) is not given up.
const defaultMaxErrors = 7

// defaultMaxCrawlDelay is -max-crawl-delay's default, as
// polite.WithMaxCrawlDelay's.
const defaultMaxCrawlDelay = 30 * time.Second

// defaultUserAgent is the User-Agent header polite fetch sends without
// -user-agent, -robots or -contact: the program's name, and no contact,
// which only the operator can give.
const defaultUserAgent = "polite-fetch"

// fetchFlags are polite fetch's flags.
type fetchFlags struct {
	config        string
	rate          float64
	burst         int
	concurrency   int
	json          bool
	out           string
	timeout       time.Duration
	maxWait       time.Duration
	maxPause      time.Duration
	crawlDelay    time.Duration
	retries       int
	maxErrors     int
	host          bool
	metrics       string
	redis         string
	state         string
	robots        string
	userAgentFlag string
	contact       string
	verbose       bool
	set           map[string]bool // the flags given on the command line
	file          *config.File    // the -config file as last loaded, -rate and -burst over its default
}

func (f *fetchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "JSON config `file` (at most 1 MiB) with the default and per-domain limits")
	fs.Float64Var(&f.rate, "rate", 0, "`requests` per second per domain, for domains the config does not name (default: the config's default_config, else 1)")
	fs.IntVar(&f.burst, "burst", 0, "`requests` per domain that may go back to back (default: the config's default_config, else 1)")
	fs.IntVar(&f.concurrency, "concurrency", 4, "number of `workers` fetching at once")
	fs.BoolVar(&f.json, "json", false, "print the per-domain stats as one JSON object keyed by domain instead of a table")
	fs.StringVar(&f.out, "out", "", "save each body under `dir`, as DIR/HOST/NAME (never outside DIR, never overwriting)")
	fs.DurationVar(&f.timeout, "timeout", time.Minute, "time limit of one attempt at a URL, from when its turn comes to the end of its body (0: none)")
	fs.DurationVar(&f.maxWait, "max-wait", 10*time.Minute, "the longest a URL waits for its domain's next turn; a URL whose turn comes later is reported as not fetched (0: no limit)")
	fs.DurationVar(&f.maxPause, "max-pause", limiter.DefaultMaxPause, "the longest pause a server can impose on a domain (Retry-After, RateLimit headers, backoff)")
	fs.DurationVar(&f.crawlDelay, "max-crawl-delay", defaultMaxCrawlDelay, "the longest Crawl-delay a robots.txt can impose (with -robots)")
	fs.IntVar(&f.retries, "retries", 3, "`times` a URL is tried again when its answer asks to come back later (0: never)")
	fs.IntVar(&f.maxErrors, "max-errors", defaultMaxErrors, "give a domain up after `n` failed answers in a row (5xx, refused connections, timeouts): its URLs left fail at once (0: never)")
	fs.BoolVar(&f.host, "host", false, "pace each host on its own (polite.HostKey) rather than each registrable domain")
	fs.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics at http://`addr`/metrics while fetching, e.g. 127.0.0.1:9090")
	fs.StringVar(&f.redis, "redis", "", "share each domain's pace with other processes through the Redis at `url` (redis://host:6379/0, with go-redis's options such as ?pool_size=10&dial_timeout=5s); if it does not answer, each process paces on its own")
	fs.StringVar(&f.state, "state", "", "keep each domain's pace, pauses and quotas in `file` across runs (committed about every second and at the end; one process at a time; move it away to start afresh)")
	fs.StringVar(&f.robots, "robots", "", "obey robots.txt as the crawler named `agent`, one word such as mybot (its Crawl-delay too), and name it in the default User-Agent")
	fs.StringVar(&f.userAgentFlag, "user-agent", "", "send `string` as the User-Agent of every request and robots.txt fetch, such as \"mybot/1.0 (+https://example.com/bot)\" (default: the -robots agent, else polite-fetch, followed by the -contact URL if given)")
	fs.StringVar(&f.contact, "contact", "", "`URL` where site operators can reach you about the crawl (https://… or mailto:…), named in the default User-Agent")
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
	case f.maxWait < 0:
		return fmt.Errorf("-max-wait: must not be negative, got %v", f.maxWait)
	case f.maxPause <= 0:
		return fmt.Errorf("-max-pause: must be positive, got %v", f.maxPause)
	case f.crawlDelay <= 0:
		return fmt.Errorf("-max-crawl-delay: must be positive, got %v", f.crawlDelay)
	case f.retries < 0:
		return fmt.Errorf("-retries: must not be negative, got %d", f.retries)
	case f.maxErrors < 0:
		return fmt.Errorf("-max-errors: must not be negative, got %d", f.maxErrors)
	case f.set["state"] && f.set["redis"]:
		return errors.New("-state: not with -redis, which keeps the pace in Redis")
	case f.set["user-agent"] && f.set["contact"]:
		return errors.New("-contact: not with -user-agent, which names the contact itself")
	case f.set["user-agent"] && (f.userAgentFlag == "" || !httpguts.ValidHeaderFieldValue(f.userAgentFlag)):
		return fmt.Errorf("-user-agent: %q is not a User-Agent: want one line of text, such as \"mybot/1.0 (+https://example.com/bot)\"", f.userAgentFlag)
	case f.set["contact"]:
		if err := checkContact(f.contact); err != nil {
			return fmt.Errorf("-contact: %w", err)
		}
	}
	if f.set["robots"] {
		if err := checkAgent(f.robots); err != nil {
			return fmt.Errorf("-robots: %w", err)
		}
	}
	return nil
}

// checkContact checks a -contact URL: an absolute http, https or mailto
// URL, of printable ASCII without spaces or parentheses, so that it reads
// as one comment in a User-Agent header.
func checkContact(contact string) error {
	u, err := url.Parse(contact)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL", contact)
	case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "mailto":
		return fmt.Errorf("%q: want an https://, http:// or mailto: URL", contact)
	case u.Scheme != "mailto" && u.Host == "":
		return fmt.Errorf("%q has no host", contact)
	}
	for i := range len(contact) {
		if c := contact[i]; c <= ' ' || c > '~' || c == '(' || c == ')' {
			return fmt.Errorf("%q has %q at byte %d: want printable ASCII without spaces or parentheses", contact, c, i)
		}
	}
	return nil
}

// maxAgent is the longest -robots agent, in bytes.
const maxAgent = 128

// checkAgent checks a -robots agent: one word of printable ASCII, the
// way robots.txt names crawlers, and safe in a User-Agent header.
func checkAgent(agent string) error {
	if agent == "" {
		return errors.New("empty agent: name the crawler, such as mybot")
	}
	if len(agent) > maxAgent {
		return fmt.Errorf("agent longer than %d bytes", maxAgent)
	}
	for i := range len(agent) {
		var what string
		switch c := agent[i]; {
		case c == ' ' || c == '\t':
			what = "a space"
		case c == '\r' || c == '\n':
			what = "a line break"
		case c < ' ' || c == 0x7f:
			what = "a control character"
		case c > '~':
			what = "a byte outside printable ASCII"
		default:
			continue
		}
		return fmt.Errorf("agent %q has %s at byte %d: want one word of printable ASCII, such as mybot", agent, what, i)
	}
	return nil
}

// options turns the flags into Transport options: the config file, read
// through load, first, then -rate and -burst over its default, then
// -robots. The limiter is added apart (see sharedLimiter).
func (f *fetchFlags) options(load func(path string) (*config.File, error)) ([]polite.Option, error) {
	opts := []polite.Option{polite.WithUserAgent(f.userAgent()), polite.WithMaxPause(f.maxPause),
		polite.WithMaxWait(f.maxWait), polite.WithTimeout(f.timeout), polite.WithMaxErrors(f.maxErrors)}
	if f.host {
		opts = append(opts, polite.WithKeyFunc(polite.HostKey))
	}
	if f.robots != "" {
		opts = append(opts, polite.WithRobots(f.robots), polite.WithMaxCrawlDelay(f.crawlDelay))
	}
	if f.config == "" {
		return append(opts, polite.WithDefault(f.overDefault(config.DefaultLimit()))), nil
	}
	file, err := f.loadConfig(load)
	if err != nil {
		return nil, err
	}
	f.file = file
	return append(opts, polite.WithConfig(file)), nil
}

// loadConfig reads the -config file through load, with -rate and -burst
// over its default.
func (f *fetchFlags) loadConfig(load func(path string) (*config.File, error)) (*config.File, error) {
	file, err := load(f.config)
	if err != nil {
		return nil, err
	}
	file.Default = f.overDefault(file.Default)
	return file, nil
}

// overDefault returns def with -rate and -burst over it.
func (f *fetchFlags) overDefault(def config.Limit) config.Limit {
	if f.set["rate"] {
		def.RequestsPerSecond = f.rate
		def.Burst = max(def.Burst, 1)
	}
	if f.set["burst"] {
		def.Burst = f.burst
	}
	return def
}

// keyFunc is the key function -host asks for.
func (f *fetchFlags) keyFunc() polite.KeyFunc {
	if f.host {
		return polite.HostKey
	}
	return polite.DomainKey
}

// fetchPlan is what polite fetch's arguments and stdin ask for, checked.
type fetchPlan struct {
	fetchFlags
	opts         []polite.Option // from -config, -rate, -burst and -robots
	redisOptions *redis.Options  // from -redis; nil without it
	targets      source          // the URLs, each parsed or with its error
}

// planFetch is the whole of polite fetch's input handling: it parses the
// arguments, reads stdin when they hold no URL, checks every flag's value
// and loads the config file through load (config.Load). It sends nothing,
// dials nothing, and opens no file but the config. When the input is bad
// it writes why to stderr in one line and returns nil and exitUsage; after
// -h, the help on stdout, nil and exitOK.
func planFetch(args []string, e env, load func(path string) (*config.File, error)) (*fetchPlan, int) {
	fs := newFlagSet("polite fetch", fetchSynopsis)
	p := &fetchPlan{}
	p.register(fs)
	urls, err := parseArgs(fs, args)
	if err == nil {
		err = p.check(fs)
	}
	if err == nil && p.redis != "" {
		if p.redisOptions, err = parseRedisURL(p.redis); err != nil {
			err = fmt.Errorf("-redis: %w", err)
		}
	}
	if err == nil {
		key := p.keyFunc()
		p.targets, err = argsOrStdin(urls, e.stdin, func(raw string) target { return parseTarget(raw, key) })
	}
	if err != nil {
		return nil, usageError(e, fs, err)
	}
	if p.opts, err = p.options(load); err != nil {
		return nil, fatal(e, "polite fetch", err)
	}
	return p, exitOK
}

func runFetch(ctx context.Context, args []string, e env) (code int) {
	p, code := planFetch(args, e, config.Load)
	if p == nil {
		return code
	}
	t, closeTransport, err := p.newTransport(e.stderr)
	if err != nil {
		return fatal(e, "polite fetch", err)
	}
	closed := false
	defer func() {
		if !closed {
			closeTransport()
		}
	}()

	var saver *saver
	if p.out != "" {
		if saver, err = newSaver(p.out); err != nil {
			return fatal(e, "polite fetch", fmt.Errorf("-out: %w", err))
		}
		defer saver.Close()
	}
	if p.metrics != "" {
		srv, err := serveMetrics(p.metrics, t)
		if err != nil {
			return fatal(e, "polite fetch", fmt.Errorf("-metrics: %w", err))
		}
		defer srv.Close()
		fmt.Fprintf(e.stderr, "polite fetch: serving metrics at http://%s/metrics\n", srv.Addr)
	}

	if p.config != "" {
		defer reloadOnHangup(t, &p.fetchFlags, config.Load, e.stderr)()
	}
	c := &crawl{
		client:      &http.Client{Transport: t}, // -timeout is the Transport's: it starts with the turn
		transport:   t,
		concurrency: p.concurrency,
		userAgent:   p.userAgent(),
		saver:       saver,
		display:     newDisplay(e.stderr, !p.verbose),
		retries:     p.retries,
		maxWait:     p.maxWait,
		maxErrors:   p.maxErrors,
		maxPause:    p.maxPause,
	}
	sum := c.run(ctx, p.targets)
	code = exitOK
	if sum.failed+sum.notStarted > 0 {
		code = exitFailed
	}
	// The figures are taken, and the state written, before anything is
	// printed: stdout or stderr may be a closed pipe.
	rows := domainRows(t.AllStats(), &c.figures, sum.elapsed, time.Now())
	closed = true
	closeErr := closeTransport()
	fmt.Fprintln(e.stderr, "polite fetch: "+sum.String())
	if err := report(e.stdout, rows, p.json); err != nil {
		fmt.Fprintf(e.stderr, "polite fetch: writing the stats: %v\n", err)
		code = exitFailed
		if errors.Is(err, syscall.EPIPE) { // what SIGPIPE says, whether or not it came yet
			code = exitSignal(syscall.SIGPIPE)
		}
	}
	if closeErr != nil {
		fmt.Fprintf(e.stderr, "polite fetch: %s\n", oneLine(closeErr.Error()))
		code = exitFailed
	}
	if sig, ok := stoppedBy(ctx); ok {
		code = exitSignal(sig)
	}
	return code
}

// newTransport returns the Transport the plan describes, logging to
// stderr and pacing through Redis with -redis, and a function that
// releases what it holds, writing the state with -state: its error says
// the state could not be written.
func (p *fetchPlan) newTransport(stderr io.Writer) (*polite.Transport, func() error, error) {
	logger := slog.New(slog.DiscardHandler)
	if p.verbose {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var extra []polite.Option
	release := func() error { return nil }
	if p.redisOptions != nil {
		// Redis going away (Warn) and coming back (Info) are each worth a
		// line even without -v; go-redis's own lines (Debug) are not.
		redisLogger := logger
		if !p.verbose {
			redisLogger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
		}
		lim, err := sharedLimiter(p.redisOptions, redisLogger)
		if err != nil {
			return nil, nil, fmt.Errorf("-redis: %w", err)
		}
		release = lim.Close
		extra = append(extra, polite.WithLimiter(lim))
	}
	if p.state != "" {
		f, err := statefile.Open(p.state)
		if err != nil {
			return nil, nil, fmt.Errorf("-state: %w", err)
		}
		mem := limiter.NewMemory()
		if err := mem.Persist(f); err != nil {
			return nil, nil, fmt.Errorf("-state: %w", err)
		}
		release = func() error {
			if err := mem.Close(); err != nil {
				return fmt.Errorf("-state: the state could not be written: %w", err)
			}
			return nil
		}
		extra = append(extra, polite.WithLimiter(mem))
	}
	t, err := p.transport(logger, extra...)
	if err != nil {
		release()
		return nil, nil, err
	}
	return t, func() error {
		t.CloseIdleConnections()
		return release()
	}, nil
}

// transport returns a Transport with the plan's options, logger and the
// extra options, over a clone of http.DefaultTransport. Making it sends
// nothing.
func (p *fetchPlan) transport(logger *slog.Logger, extra ...polite.Option) (*polite.Transport, error) {
	opts := append(slices.Clip(p.opts), polite.WithLogger(logger))
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = p.concurrency
	return polite.NewTransport(base, append(opts, extra...)...)
}

// userAgent is the User-Agent header to send: -user-agent, or else the
// crawler's name (the robots agent, if any) followed by the operator's
// -contact, if given.
func (f *fetchFlags) userAgent() string {
	if f.userAgentFlag != "" {
		return f.userAgentFlag
	}
	name := defaultUserAgent
	if f.robots != "" {
		name = f.robots
	}
	if f.contact != "" {
		return name + " (+" + f.contact + ")"
	}
	return name
}

// report writes rows, the per-domain figures of a crawl, to w: a table,
// or JSON.
func report(w io.Writer, rows []domainRow, asJSON bool) error {
	if !asJSON {
		return writeTable(w, rows)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rowsByDomain(rows))
}

// fatal reports an error that stops the command before it fetches
// anything, on one line, and returns the exit code for bad usage or
// configuration.
func fatal(e env, command string, err error) int {
	fmt.Fprintf(e.stderr, "%s: %s\n", command, oneLine(err.Error()))
	return exitUsage
}
