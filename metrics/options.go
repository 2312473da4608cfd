package metrics

import "fmt"

// Option configures a collector made by NewCollector. Each option's doc
// says its default; NewCollector reports an option it cannot use as an
// error.
type Option func(*options)

type options struct {
	maxDomains int
}

// WithMaxDomains caps the domains that get series of their own at n; by
// default, or if n is 0, there is no cap. Free places go to the busiest
// domains (by requests sent) at the scrape that finds them free, and a
// domain keeps its place for as long as the Transport tracks it, so that
// its series do not come and go. Every other domain is summed into the
// series with domain="other", whose counters keep growing (the counts of
// a domain that leaves "other" stay in it), whose in-flight gauge is their
// sum, and whose paused gauges are how many of them are paused, by
// reason. A negative n is an error.
func WithMaxDomains(n int) Option {
	return func(o *options) { o.maxDomains = n }
}

// resolve applies opts over the defaults, or returns the first option
// that cannot be used.
func resolve(opts []Option) (options, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxDomains < 0 {
		return o, fmt.Errorf("metrics: WithMaxDomains: must not be negative, got %d", o.maxDomains)
	}
	return o, nil
}
