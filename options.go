package polite

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"time"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/internal/robotscache"
	"github.com/polite-go/polite/limiter"
)

// Option configures a Transport. Options are applied once, by
// NewTransport, before the Transport is shared. These zero values mean the
// option's default: WithDefault(config.Limit{}) ([config.DefaultLimit]; a
// limit's zero fields take the default's, as config.Limit.Inherit says),
// WithConfig(nil) (changes nothing), WithKeyFunc(nil) (DomainKey),
// WithLimiter(nil) (a limiter.Memory), WithMaxWait(0) (no cap),
// WithTimeout(0) (none), WithMaxDomains(0) (10,000), WithMaxErrors(0)
// (never give a domain up), WithLogger(nil)
// (silent), WithMaxPause(0) (10 minutes), WithMaxCrawlDelay(0) (30
// seconds), WithUserAgent("") (the base's) and WithLookup(nil)
// (net.DefaultResolver). The zero values of WithRobots, WithServerLimit
// and WithGlobalLimit mean what their docs say, not their defaults. A
// negative duration or count, and an empty domain name, are errors.
type Option func(*options)

type options struct {
	defaultLimit   config.Limit
	domains        []domainEntry
	domainOptions  int // WithDomain and WithConfig options applied so far
	keyFunc        KeyFunc
	limiter        limiter.Limiter
	maxWait        time.Duration
	timeout        time.Duration
	maxDomains     int
	maxPause       time.Duration
	maxErrors      int
	loopbackExempt bool
	logger         *slog.Logger
	userAgent      string
	robots         robotsOptions
	serverLimit    *config.Limit
	globalLimit    *config.Limit
	lookup         func(ctx context.Context, host string) ([]netip.Addr, error)
	traces         []*Trace
}

// domainEntry is one domain's limit as an option gave it. It replaces the
// entries of earlier options that name the same domain; two entries of one
// option that do are an error.
type domainEntry struct {
	name   string
	limit  config.Limit
	option int // which WithDomain or WithConfig gave it
}

// defaultMaxDomains is WithMaxDomains' default.
const defaultMaxDomains = 10000

func defaultOptions() options {
	return options{defaultLimit: config.DefaultLimit()}
}

// withDefaults fills in the defaults of what the options left zero.
func (o *options) withDefaults() {
	if o.keyFunc == nil {
		o.keyFunc = DomainKey
	}
	if o.limiter == nil {
		o.limiter = limiter.NewMemory()
	}
	if o.maxDomains == 0 {
		o.maxDomains = defaultMaxDomains
	}
	if o.maxPause == 0 {
		o.maxPause = limiter.DefaultMaxPause
	}
	if o.robots.maxCrawlDelay == 0 {
		o.robots.maxCrawlDelay = robotscache.DefaultMaxCrawlDelay
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	o.defaultLimit = o.defaultLimit.Inherit(config.DefaultLimit())
}

// check reports the first option that cannot be used, and puts the
// robots.txt agent in the form it is matched in.
func (o *options) check() error {
	switch {
	case o.maxDomains < 0:
		return fmt.Errorf("polite: WithMaxDomains: must not be negative, got %d", o.maxDomains)
	case o.maxWait < 0:
		return fmt.Errorf("polite: WithMaxWait: must not be negative, got %v", o.maxWait)
	case o.timeout < 0:
		return fmt.Errorf("polite: WithTimeout: must not be negative, got %v", o.timeout)
	case o.maxPause < 0:
		return fmt.Errorf("polite: WithMaxPause: must not be negative, got %v", o.maxPause)
	case o.maxErrors < 0:
		return fmt.Errorf("polite: WithMaxErrors: must not be negative, got %d", o.maxErrors)
	}
	if err := checkUserAgent(o.userAgent); err != nil {
		return err
	}
	return o.robots.check(o.userAgent)
}

// WithDefault sets the limit of every domain that has none of its own:
// [config.DefaultLimit], 1 request a second, burst 1, by default. What l
// leaves out it takes from that built-in default, as config.Limit.Inherit
// says: WithDefault(config.Limit{})
// is the built-in default, and WithDefault(config.Limit{MaxConcurrent: 2})
// adds a cap to it.
func WithDefault(l config.Limit) Option {
	return func(o *options) { o.defaultLimit = l }
}

// WithDomain sets the limit of one domain, named as the key function names
// it (with DomainKey, the registrable domain: "example.com", not
// "www.example.com"). What l leaves out it takes from the default, as
// config.Limit.Inherit says. A later option that names the same domain,
// however it is spelt ("Example.COM."), replaces it. A URL, a path or a
// port ("https://example.com", "example.com:8080") is an error that says
// what to write, unless the key function keys requests by that very name;
// so is a name the key function keys requests apart from ("a.com?q"
// under HostKey, "www.example.com" under DomainKey).
//
// A name "*.example.com" is a pattern: every key under example.com (not
// example.com itself) gets the limit, each key paced on its own, as
// colly's DomainGlob does. A key's own limit beats a pattern's, and a
// longer pattern beats a shorter one. A pattern is "*." and a host name:
// a "*" anywhere else, or a pattern over a URL, a path, a port or a query,
// is an error, whatever the key function, as is a pattern none of whose
// keys the key function makes. With DomainKey, a pattern fits hosts under
// a public suffix ("*.blogspot.com"): "*.example.com" is an error, as
// DomainKey keys every host under example.com "example.com" (write that);
// with HostKey, any pattern fits.
func WithDomain(domain string, l config.Limit) Option {
	return func(o *options) {
		o.domainOptions++
		o.domains = append(o.domains, domainEntry{domain, l, o.domainOptions})
	}
}

// WithConfig sets the default and the domains' limits from f, as config.Load
// and config.Parse return it, and the server's and the global limits where
// f sets them. Later options override it, domain by domain.
// Two of its domains that name the same one (example.com and Example.COM)
// are an error. A nil f changes nothing.
func WithConfig(f *config.File) Option {
	return func(o *options) {
		if f == nil {
			return
		}
		o.defaultLimit = f.Default
		if f.Server != nil {
			o.serverLimit = f.Server
		}
		if f.Global != nil {
			o.globalLimit = f.Global
		}
		o.domainOptions++
		for _, domain := range slices.Sorted(maps.Keys(f.Domains)) {
			o.domains = append(o.domains, domainEntry{domain, f.Domains[domain], o.domainOptions})
		}
	}
}

// WithServerLimit paces every request also by the server it goes to, so
// that the domains one server hosts share l, as Nutch's byIP queues and
// Scrapy's CONCURRENT_REQUESTS_PER_IP do. A server is named by the
// addresses its host resolves to (through WithLookup), whatever their
// order and families: the smallest IPv4 address, or, with none, the /64
// of the smallest IPv6 address. A host whose lookup fails keeps the server
// it last resolved to; one that never resolved is paced under one key
// that every such host shares, under l, and a server first seen after
// them keeps its gap from the latest of them: a request is never sent
// unpaced because its lookup failed, though the base may resolve the name
// where the lookup did not.
// Every rule of l applies, max_concurrent in this process; l takes
// nothing from the default, so config.Limit{MaxConcurrent: 8} caps the
// requests in flight to a server and sets no pace.
//
// Do not use it when requests go through a proxy, which reaches the
// servers for you, nor for sites behind a CDN, whose many sites share
// addresses that do not stand for one server.
func WithServerLimit(l config.Limit) Option {
	return func(o *options) { o.serverLimit = &l }
}

// WithGlobalLimit paces every request also by one key that all domains
// share, as Scrapy's CONCURRENT_REQUESTS caps a whole crawl, or a proxy's
// or an uplink's limit would: every rule of l applies, max_concurrent in
// this process; l takes nothing from the default.
func WithGlobalLimit(l config.Limit) Option {
	return func(o *options) { o.globalLimit = &l }
}

// WithLookup sets how WithServerLimit finds the addresses of a host;
// net.DefaultResolver's LookupNetIP by default. A host's server is
// remembered for a minute after its lookup, for at most WithMaxDomains
// hosts; a failed lookup is not remembered.
func WithLookup(lookup func(ctx context.Context, host string) ([]netip.Addr, error)) Option {
	return func(o *options) { o.lookup = lookup }
}

// WithKeyFunc sets how requests are grouped into domains; DomainKey by
// default. The key function is called for every request.
func WithKeyFunc(f KeyFunc) Option {
	return func(o *options) { o.keyFunc = f }
}

// WithLimiter sets where the domains' pace is kept: by default a
// limiter.Memory in this process; redislimiter shares it between processes.
func WithLimiter(l limiter.Limiter) Option {
	return func(o *options) { o.limiter = l }
}

// WithMaxWait caps how long any request may wait for its turn; a request
// that would wait longer (for example on a quota that frees up tomorrow)
// fails at once with a *WaitError wrapping limiter.ErrWaitTooLong. By
// default there is no cap beyond the request's context.
func WithMaxWait(d time.Duration) Option {
	return func(o *options) { o.maxWait = d }
}

// WithTimeout gives each request d from its turn: sending it, its
// response's headers and reading its body must all fit in d, as they must
// fit in http.Client.Timeout from the call, but the wait for its turn does
// not count. A request that runs out of it fails as one that ran out of
// Client.Timeout does, with an error wrapping context.DeadlineExceeded.
// Use it instead of Client.Timeout (leave that 0) where many requests to
// one domain may be waiting at once, as a crawler with a short timeout
// such as colly's has; see WaitError. By default there is none.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithMaxDomains sets how many domains the Transport tracks at most, 10,000
// by default. Past that, the least recently used idle domains are
// forgotten, with their stats.
func WithMaxDomains(n int) Option {
	return func(o *options) { o.maxDomains = n }
}

// WithLoopbackExempt sends requests to loopback hosts (localhost,
// *.localhost, 127.0.0.0/8, ::1) without pacing, as one does for a local
// test server. Their stats are still recorded.
func WithLoopbackExempt() Option {
	return func(o *options) { o.loopbackExempt = true }
}

// WithLogger makes the Transport log to l: at Info the limits in force when
// it is made, at Debug each wait (domain, how long, which rule), each
// pause a server asks for and each request not sent (domain, why). A
// request robots.txt refuses is logged at Debug with its domain, host and
// the rule that refused it, never its URL; the first such refusal of a
// host by a rule is also logged at Info. By default the Transport is
// silent.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithMaxPause caps how long a server can pause a domain through
// Retry-After, rate-limit headers, repeated 429s or the backoff while it
// fails (config.Limit.ErrorStatuses), [limiter.DefaultMaxPause] (10
// minutes) by default, so that no server can stall a crawl for days.
func WithMaxPause(d time.Duration) Option {
	return func(o *options) { o.maxPause = d }
}

// WithMaxErrors gives a domain up after n failed answers in a row: the
// answers its limit's ErrorStatuses name (by default 500, 502, 503, 504
// and transport failures such as a refused connection; see
// config.Limit.ErrorStatuses). Any other answer before the n-th starts
// the count again. From then on, every request to the domain fails with
// an error matching ErrGivenUp without being sent, at once (or, if it was
// already waiting for its turn, when the turn comes), and is counted in
// the domain's stats.Snapshot.GivenUpRequests; Transport.GivenUp returns
// that error. The domain stays given up until the Transport forgets it
// (see WithMaxDomains). Without it, or with n 0, no domain is ever given
// up: a Transport serving for days should not drop a domain for an
// outage, while a crawl that must end (polite fetch gives up after 7)
// should. With the default backoff (1 s, doubling), n failed answers in
// a row take at least 2^(n-1)-1 seconds: 15 s for 5, 8.5 minutes for 10.
func WithMaxErrors(n int) Option {
	return func(o *options) { o.maxErrors = n }
}

// WithRobots makes the Transport obey robots.txt as the crawler whose
// product token is agent (such as "ExampleBot"). Given a whole User-Agent
// string ("ExampleBot/2.1 (+https://example.com/bot)"), it uses its
// product token, the part before the first '/' or space; given "", the
// product token of WithUserAgent's string. An agent with no product token,
// or "" without WithUserAgent, is an error.
//
// Files are read and matched as RFC 9309 says, by package
// [github.com/polite-go/polite/robots], whose doc lists where it differs
// from Google's parser. So that no request goes that a reasonable reading
// of a file disallows, a request goes only if both RFC 9309's reading of
// the User-agent lines (by product token: letters, '-' and '_', so
// "User-agent: MJ12bot" names MJ) and their reading by whole name
// ("MJ12bot", "008") allow it, and the Crawl-delay is the longer of the
// two readings'. An agent with other characters ("MJ12bot") is named by
// no line in the RFC's reading, so the group of "*" applies to it too:
// choose a product token of letters, '-' and '_', for which the readings
// differ only on a line such as "User-agent: ExampleBot2" (ExampleBot in
// the RFC's reading). A Crawl-delay belongs to the User-agent lines just
// above it; one before any User-agent line applies to every crawler. The
// dot segments of a URL's path ("/a/../b") are removed before matching.
// Each host's robots.txt (per scheme, host and port) is fetched before
// the host's first request, with WithUserAgent's string as its User-Agent
// (without it, that of the request that needs the file), paced like any
// request to its domain and counted in its stats; concurrent first
// requests share one fetch. It is kept 24 hours, as RFC 9309 asks.
//
// A request to a path the file disallows fails with an error wrapping
// ErrDisallowed and is never sent. A 4xx answer (but 429), or more than 5
// redirects, means there are no rules. A 5xx or 429 answer, no answer, or
// an answer not read within 10 seconds disallows the whole host for a
// minute, after which the file is fetched again; if an earlier copy of the
// file is known, it is used instead. The 10 seconds count from the fetch's
// send to the end of the file, redirects included, but not its waits for
// its turns. A fetch goes on when the requests waiting for it give up
// (each with its own *WaitError), for the next ones to use. The Crawl-delay
// of the agent's group (or of "*") becomes the least gap between two
// requests to the domain: never shorter than its configured pace, at most
// WithMaxCrawlDelay. When the hosts of one domain disagree, the longest
// Crawl-delay applies.
//
// At most the first 500 KiB of a file is read. The files kept are counted
// at 1 KiB per host plus 4 bytes per byte of file (which bounds what a
// parsed file holds), within 16 MiB in all: past that, the least recently
// used are forgotten, but for those still being fetched, and fetched again
// when needed. A check costs at worst the number of rules times the length of
// the URL, never more.
func WithRobots(agent string) Option {
	return func(o *options) { o.robots.on, o.robots.agent = true, agent }
}

// WithUserAgent sets the User-Agent header of every request that carries
// none (on a clone: the caller's request is not modified) and of every
// robots.txt fetch. A request that sets its own User-Agent, even to "",
// keeps it. Name the crawler and how to reach its operator, as RFC 9309
// section 2.2.1 asks: "ExampleBot/2.1 (+https://example.com/bot)". By
// default, requests go as the base transport sends them (net/http's
// default is "Go-http-client/1.1"). A ua that is not a valid header value
// is an error.
func WithUserAgent(ua string) Option {
	return func(o *options) { o.userAgent = ua }
}

// WithMaxCrawlDelay caps the Crawl-delay a robots.txt can impose, 30
// seconds by default. A cap of a nanosecond all but ignores Crawl-delay.
func WithMaxCrawlDelay(d time.Duration) Option {
	return func(o *options) { o.robots.maxCrawlDelay = d }
}
