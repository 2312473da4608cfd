package polite

import (
	"log/slog"
	"time"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// Option configures a Transport.
type Option func(*options)

type options struct {
	defaultLimit   config.Limit
	domains        map[string]config.Limit
	keyFunc        KeyFunc
	limiter        limiter.Limiter
	maxWait        time.Duration
	maxDomains     int
	loopbackExempt bool
	logger         *slog.Logger
}

// DefaultMaxDomains is how many domains a Transport tracks unless
// WithMaxDomains says otherwise.
const DefaultMaxDomains = 10000

func defaultOptions() options {
	return options{
		defaultLimit: config.DefaultLimit,
		domains:      map[string]config.Limit{},
		keyFunc:      DomainKey,
		maxDomains:   DefaultMaxDomains,
		logger:       slog.New(slog.DiscardHandler),
	}
}

// WithDefault sets the limit of every domain that has none of its own.
// Without it, the default is config.DefaultLimit: 1 request/s, burst 1.
func WithDefault(l config.Limit) Option {
	return func(o *options) { o.defaultLimit = l }
}

// WithDomain sets the limit of one domain, named as the key function names
// it (with DomainKey, the registrable domain: "example.com", not
// "www.example.com"). A later option for the same domain replaces it.
func WithDomain(domain string, l config.Limit) Option {
	return func(o *options) { o.domains[domain] = l }
}

// WithConfig sets the default and the domains' limits from f, as config.Load
// and config.Parse return it. Later options override it.
func WithConfig(f *config.File) Option {
	return func(o *options) {
		if f == nil {
			return
		}
		o.defaultLimit = f.Default
		for domain, l := range f.Domains {
			o.domains[domain] = l
		}
	}
}

// WithKeyFunc sets how requests are grouped into domains; DomainKey by default.
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
// fails at once with a *WaitError wrapping ErrWaitTooLong. 0, the default,
// means no cap beyond the request's context.
func WithMaxWait(d time.Duration) Option {
	return func(o *options) { o.maxWait = d }
}

// WithMaxDomains sets how many domains the Transport tracks at most
// (DefaultMaxDomains by default). Past that, the least recently used idle
// domains are forgotten, with their stats.
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
// it is made, at Debug each wait (domain, how long, which rule). The
// Transport is silent by default.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}
