// Package metrics exports a polite Transport's per-domain stats to Prometheus.
package metrics

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/stats"
)

// otherDomain is the domain label of the series that sum the domains left
// out by WithMaxDomains.
const otherDomain = "other"

// NewCollector returns a Prometheus collector of t's per-domain stats,
// read from t.AllStats at every scrape, so it adds nothing to the requests'
// path. Register it once:
//
//	c, err := metrics.NewCollector(t)
//	if err != nil {
//		return err
//	}
//	prometheus.MustRegister(c)
//
// Every metric but polite_domains has a "domain" label; responses also
// have a "class" label ("2xx" ... "5xx", "other"), and polite_paused a
// "reason" label: who asked for the pause, as stats.Snapshot.PauseReason
// says ("retry-after", "ratelimit", "backoff", "errors" while the server
// fails, "shared", "crawl-delay", "adaptive"), empty while not paused. A
// domain key that is not valid UTF-8 (a custom polite.KeyFunc may make
// one) is labelled as strconv.QuoteToASCII quotes it. The series are:
//
//	polite_requests_total                   counter  requests sent (stats TotalRequests)
//	polite_robots_requests_total            counter  robots.txt fetches sent, apart from those
//	polite_requests_delayed_total           counter  requests that waited more than 10ms
//	polite_requests_delayed_by_scope_total{scope}  counter  of those, by the scope whose turn came last: "server" or "global"
//	polite_requests_canceled_total          counter  requests whose wait failed, not sent
//	polite_requests_failed_total            counter  sent requests whose round trip failed
//	polite_requests_disallowed_total        counter  requests robots.txt forbade, not sent
//	polite_requests_given_up_total          counter  requests refused once the domain was given up (polite.WithMaxErrors), not sent
//	polite_wait_seconds_total               counter  time spent waiting for a turn
//	polite_queued_seconds_total             counter  time requests waited in a frontier's line before they were handed out
//	polite_responses_total{class}           counter  responses by status class
//	polite_throttled_responses_total        counter  429 and 503 responses
//	polite_degraded_requests_total          counter  requests paced by a fallback (Redis down)
//	polite_paused_seconds_total             counter  time paused at the server's request
//	polite_requests_in_flight               gauge    requests sent whose body is not closed
//	polite_paused{reason}                   gauge    1 while the domain is paused, else 0
//	polite_domains                          gauge    domains the Transport tracks (no label)
//
// Cardinality: a domain has series only while the Transport tracks it, so
// there are at most the Transport's polite.WithMaxDomains (10,000 by
// default) times 22 series, however many domains a crawl meets. A domain
// the Transport forgets loses its series, and its counters restart from 0
// if it comes back, as a restarted process's would.
//
// For a crawl over many domains, cap the series with WithMaxDomains.
//
// The collector is safe for concurrent use.
func NewCollector(t *polite.Transport, opts ...Option) (prometheus.Collector, error) {
	if t == nil {
		return nil, errors.New("metrics: NewCollector: Transport is nil")
	}
	o, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	return &collector{t: t, now: time.Now, maxDomains: o.maxDomains}, nil
}

// collector implements prometheus.Collector over a Transport.
type collector struct {
	t          *polite.Transport
	maxDomains int
	now        func() time.Time

	mu      sync.Mutex
	chosen  map[string]bool   // domains with series of their own, under WithMaxDomains
	seen    map[string]counts // the last counts of each domain summed into "other"
	retired counts            // counts of domains that left "other"
}

// counts are the counters of one domain, or of several summed.
type counts struct {
	total, delayed, canceled, failed int64
	serverDelayed, globalDelayed     int64
	robots, disallowed, givenUp      int64
	throttled, degraded              int64
	wait, paused, queued             time.Duration
	responses                        [6]int64
}

func countsOf(s stats.Snapshot) counts {
	return counts{
		total: s.TotalRequests, delayed: s.DelayedRequests, canceled: s.CanceledRequests,
		serverDelayed: s.ServerDelayedRequests, globalDelayed: s.GlobalDelayedRequests,
		failed: s.FailedRequests, robots: s.RobotsRequests, disallowed: s.DisallowedRequests, givenUp: s.GivenUpRequests,
		throttled: s.ThrottledResponses, degraded: s.DegradedRequests,
		wait: s.TotalWaitTime, paused: s.PausedTime, queued: s.QueuedTime, responses: s.Responses,
	}
}

func (a *counts) add(b counts) {
	a.total += b.total
	a.delayed += b.delayed
	a.serverDelayed += b.serverDelayed
	a.globalDelayed += b.globalDelayed
	a.canceled += b.canceled
	a.failed += b.failed
	a.robots += b.robots
	a.disallowed += b.disallowed
	a.givenUp += b.givenUp
	a.throttled += b.throttled
	a.degraded += b.degraded
	a.wait += b.wait
	a.paused += b.paused
	a.queued += b.queued
	for i := range a.responses {
		a.responses[i] += b.responses[i]
	}
}

// series is what one domain label reports.
type series struct {
	counts
	inFlight int64
	pausedBy map[string]int64 // by reason, the domains paused; nil when none is
}

var (
	domainLabel = []string{"domain"}

	requestsDesc  = prometheus.NewDesc("polite_requests_total", "Requests sent through the polite Transport.", domainLabel, nil)
	robotsDesc    = prometheus.NewDesc("polite_robots_requests_total", "robots.txt fetches sent, apart from the requests.", domainLabel, nil)
	delayedDesc   = prometheus.NewDesc("polite_requests_delayed_total", "Requests that waited more than 10ms for their turn.", domainLabel, nil)
	byScopeDesc   = prometheus.NewDesc("polite_requests_delayed_by_scope_total", "Delayed requests whose last turn was their server's or the global one.", []string{"domain", "scope"}, nil)
	canceledDesc  = prometheus.NewDesc("polite_requests_canceled_total", "Requests whose wait failed (cancelled, deadline, too long); never sent.", domainLabel, nil)
	failedDesc    = prometheus.NewDesc("polite_requests_failed_total", "Sent requests whose round trip returned an error.", domainLabel, nil)
	disallowDesc  = prometheus.NewDesc("polite_requests_disallowed_total", "Requests robots.txt forbade; never sent.", domainLabel, nil)
	givenUpDesc   = prometheus.NewDesc("polite_requests_given_up_total", "Requests refused once the domain was given up after failing again and again; never sent.", domainLabel, nil)
	queuedDesc    = prometheus.NewDesc("polite_queued_seconds_total", "Time requests waited in a frontier's line before they were handed out, summed over the requests.", domainLabel, nil)
	waitDesc      = prometheus.NewDesc("polite_wait_seconds_total", "Time requests spent waiting for their turn.", domainLabel, nil)
	responsesDesc = prometheus.NewDesc("polite_responses_total", "Responses by status class.", []string{"domain", "class"}, nil)
	throttledDesc = prometheus.NewDesc("polite_throttled_responses_total", "429 and 503 responses.", domainLabel, nil)
	degradedDesc  = prometheus.NewDesc("polite_degraded_requests_total", "Requests paced by a fallback because the shared limiter did not answer.", domainLabel, nil)
	pausedSecDesc = prometheus.NewDesc("polite_paused_seconds_total", "Time the domain was paused at the server's request.", domainLabel, nil)
	inFlightDesc  = prometheus.NewDesc("polite_requests_in_flight", "Requests sent whose response body is not closed yet.", domainLabel, nil)
	pausedDesc    = prometheus.NewDesc("polite_paused", "1 while the domain is paused at the server's request, by reason (for domain=\"other\": how many are).", []string{"domain", "reason"}, nil)
	domainsDesc   = prometheus.NewDesc("polite_domains", "Domains the polite Transport tracks.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{requestsDesc, robotsDesc, delayedDesc, byScopeDesc, canceledDesc, failedDesc, disallowDesc, givenUpDesc, waitDesc, queuedDesc,
		responsesDesc, throttledDesc, degradedDesc, pausedSecDesc, inFlightDesc, pausedDesc, domainsDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	all := c.t.AllStats()
	now := c.now()
	ch <- prometheus.MustNewConstMetric(domainsDesc, prometheus.GaugeValue, float64(len(all)))
	for domain, s := range c.group(all, now) {
		emit(ch, label(domain), s)
	}
}

// label is the domain label of domain. Prometheus takes only UTF-8 label
// values, and a custom polite.KeyFunc may return any bytes: such a key is
// quoted, with its invalid bytes escaped, which keeps distinct keys apart.
func label(domain string) string {
	if utf8.ValidString(domain) {
		return domain
	}
	return strconv.QuoteToASCII(domain)
}

// group turns the Transport's stats into the series to report, by domain label.
func (c *collector) group(all map[string]stats.Snapshot, now time.Time) map[string]series {
	out := make(map[string]series, len(all))
	if c.maxDomains <= 0 {
		for domain, s := range all {
			out[domain] = seriesOf(s, now)
		}
		return out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chooseLocked(all)
	seen := make(map[string]counts)
	other := series{counts: c.retired}
	for domain, s := range all {
		if c.chosen[domain] {
			out[domain] = seriesOf(s, now)
			continue
		}
		one := seriesOf(s, now)
		seen[domain] = one.counts
		other.add(one.counts)
		other.inFlight += one.inFlight
		for reason, n := range one.pausedBy {
			if other.pausedBy == nil {
				other.pausedBy = map[string]int64{}
			}
			other.pausedBy[reason] += n
		}
	}
	for domain, last := range c.seen {
		if _, still := seen[domain]; !still {
			c.retired.add(last)
			other.add(last)
		}
	}
	c.seen = seen
	if len(seen) > 0 || c.retired != (counts{}) {
		out[otherDomain] = other
	}
	return out
}

// chooseLocked keeps the chosen domains the Transport still tracks and
// fills the free places with the busiest of the others. c.mu is held.
func (c *collector) chooseLocked(all map[string]stats.Snapshot) {
	if c.chosen == nil {
		c.chosen = make(map[string]bool)
	}
	for domain := range c.chosen {
		if _, ok := all[domain]; !ok {
			delete(c.chosen, domain)
		}
	}
	free := c.maxDomains - len(c.chosen)
	if free <= 0 {
		return
	}
	var candidates []stats.Snapshot
	for domain, s := range all {
		if !c.chosen[domain] && domain != otherDomain {
			candidates = append(candidates, s)
		}
	}
	slices.SortFunc(candidates, func(a, b stats.Snapshot) int {
		if n := cmp.Compare(b.TotalRequests, a.TotalRequests); n != 0 {
			return n
		}
		return cmp.Compare(a.Domain, b.Domain)
	})
	for _, s := range candidates[:min(free, len(candidates))] {
		c.chosen[s.Domain] = true
	}
}

func seriesOf(s stats.Snapshot, now time.Time) series {
	out := series{counts: countsOf(s), inFlight: s.InFlight}
	if s.PausedUntil.After(now) {
		out.pausedBy = map[string]int64{string(s.PauseReason): 1}
	}
	return out
}

func emit(ch chan<- prometheus.Metric, domain string, s series) {
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, append([]string{domain}, labels...)...)
	}
	counter(requestsDesc, float64(s.total))
	counter(robotsDesc, float64(s.robots))
	counter(delayedDesc, float64(s.delayed))
	counter(byScopeDesc, float64(s.serverDelayed), "server")
	counter(byScopeDesc, float64(s.globalDelayed), "global")
	counter(canceledDesc, float64(s.canceled))
	counter(failedDesc, float64(s.failed))
	counter(disallowDesc, float64(s.disallowed))
	counter(givenUpDesc, float64(s.givenUp))
	counter(waitDesc, s.wait.Seconds())
	counter(queuedDesc, s.queued.Seconds())
	for class, n := range s.responses {
		counter(responsesDesc, float64(n), stats.StatusClass(class))
	}
	counter(throttledDesc, float64(s.throttled))
	counter(degradedDesc, float64(s.degraded))
	counter(pausedSecDesc, s.paused.Seconds())
	ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(s.inFlight), domain)
	if len(s.pausedBy) == 0 {
		ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, 0, domain, "")
	}
	for reason, n := range s.pausedBy {
		ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, float64(n), domain, reason)
	}
}
