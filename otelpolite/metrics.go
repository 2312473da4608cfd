package otelpolite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/stats"
)

// RegisterMetrics reports t's per-domain stats through OpenTelemetry's
// metric API: the figures of the Prometheus collector (package metrics),
// under the names of the package doc's table, read from t.AllStats each
// time the meter provider collects, so it adds nothing to the requests'
// path. It reads WithMeterProvider and WithMaxDomains. Unregister the
// returned registration to stop reporting.
//
// Memory: a domain has points only while the Transport tracks it (at most
// its polite.WithMaxDomains, 10,000 by default); a domain it forgets loses
// them, and its counters restart from 0 if it comes back. WithMaxDomains
// caps the domains with points of their own, as the collector's option
// of that name does.
//
// RegisterMetrics returns an error for a nil t, a negative WithMaxDomains,
// or instruments the meter cannot make.
func RegisterMetrics(t *polite.Transport, opts ...Option) (metric.Registration, error) {
	if t == nil {
		return nil, errors.New("otelpolite: RegisterMetrics: Transport is nil")
	}
	s := resolve(opts)
	if s.maxDomains < 0 {
		return nil, fmt.Errorf("otelpolite: WithMaxDomains: must not be negative, got %d", s.maxDomains)
	}
	if s.meterProvider == nil {
		s.meterProvider = otel.GetMeterProvider()
	}
	meter := s.meterProvider.Meter(scope)
	i, all, err := newInstruments(meter)
	if err != nil {
		return nil, fmt.Errorf("otelpolite: RegisterMetrics: %w", err)
	}
	o := &observer{t: t, instruments: i, groups: &domainGroups{maxDomains: s.maxDomains}}
	reg, err := meter.RegisterCallback(o.observe, all...)
	if err != nil {
		return nil, fmt.Errorf("otelpolite: RegisterMetrics: %w", err)
	}
	return reg, nil
}

// instruments are the metrics of one Transport; see the package doc.
type instruments struct {
	requests, robots, delayed, delayedByScope metric.Int64ObservableCounter
	canceled, failed, disallowed, givenUp     metric.Int64ObservableCounter
	responses, throttled, degraded            metric.Int64ObservableCounter
	wait, queued, pausedTime                  metric.Float64ObservableCounter
	inFlight, domains                         metric.Int64ObservableUpDownCounter
	paused                                    metric.Int64ObservableGauge
}

// newInstruments makes the instruments on m and returns them, also as a
// list for RegisterCallback.
func newInstruments(m metric.Meter) (*instruments, []metric.Observable, error) {
	var all []metric.Observable
	var errs []error
	count := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		all, errs = append(all, c), append(errs, err)
		return c
	}
	seconds := func(name, desc string) metric.Float64ObservableCounter {
		c, err := m.Float64ObservableCounter(name, metric.WithUnit("s"), metric.WithDescription(desc))
		all, errs = append(all, c), append(errs, err)
		return c
	}
	upDown := func(name, unit, desc string) metric.Int64ObservableUpDownCounter {
		c, err := m.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		all, errs = append(all, c), append(errs, err)
		return c
	}
	i := &instruments{
		requests:       count("polite.requests", "{request}", "Requests sent through the polite Transport."),
		robots:         count("polite.robots.requests", "{request}", "robots.txt fetches sent, apart from the requests."),
		delayed:        count("polite.requests.delayed", "{request}", "Requests that waited more than 10ms for their turn."),
		delayedByScope: count("polite.requests.delayed_by_scope", "{request}", "Delayed requests whose last turn was their server's or the global one."),
		canceled:       count("polite.requests.canceled", "{request}", "Requests whose wait failed (cancelled, deadline, too long); never sent."),
		failed:         count("polite.requests.failed", "{request}", "Sent requests whose round trip returned an error."),
		disallowed:     count("polite.requests.disallowed", "{request}", "Requests robots.txt forbade; never sent."),
		givenUp:        count("polite.requests.given_up", "{request}", "Requests refused once the domain was given up after failing again and again; never sent."),
		responses:      count("polite.responses", "{response}", "Responses by status class."),
		throttled:      count("polite.throttled_responses", "{response}", "429 and 503 responses."),
		degraded:       count("polite.degraded_requests", "{request}", "Requests paced by a fallback because the shared limiter did not answer."),
		wait:           seconds("polite.wait", "Time requests spent waiting for their turn."),
		queued:         seconds("polite.queued", "Time requests waited in a frontier's line before they were handed out, summed over the requests."),
		pausedTime:     seconds("polite.paused_seconds", "Time the domain was paused at the server's request."),
		inFlight:       upDown("polite.requests.in_flight", "{request}", "Requests sent whose response body is not closed yet."),
		domains:        upDown("polite.domains", "{domain}", "Domains the polite Transport tracks."),
	}
	paused, err := m.Int64ObservableGauge("polite.paused", metric.WithDescription("1 while the domain is paused at the server's request, by reason (for polite.domain=\"other\": how many are)."))
	i.paused, all, errs = paused, append(all, paused), append(errs, err)
	return i, all, errors.Join(errs...)
}

// observer reports a Transport's stats at each collection.
type observer struct {
	t *polite.Transport
	*instruments
	groups *domainGroups
}

func (o *observer) observe(_ context.Context, ob metric.Observer) error {
	all := o.t.AllStats()
	ob.ObserveInt64(o.domains, int64(len(all)))
	for domain, s := range o.groups.group(all, time.Now()) {
		o.observeDomain(ob, domain, s)
	}
	return nil
}

func (o *observer) observeDomain(ob metric.Observer, domain string, s series) {
	at := metric.WithAttributeSet(attribute.NewSet(attrDomain.String(domain)))
	with := func(kv attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributes(attrDomain.String(domain), kv)
	}
	ob.ObserveInt64(o.requests, s.total, at)
	ob.ObserveInt64(o.robots, s.robots, at)
	ob.ObserveInt64(o.delayed, s.delayed, at)
	ob.ObserveInt64(o.delayedByScope, s.serverDelayed, with(attrScope.String("server")))
	ob.ObserveInt64(o.delayedByScope, s.globalDelayed, with(attrScope.String("global")))
	ob.ObserveInt64(o.canceled, s.canceled, at)
	ob.ObserveInt64(o.failed, s.failed, at)
	ob.ObserveInt64(o.disallowed, s.disallowed, at)
	ob.ObserveInt64(o.givenUp, s.givenUp, at)
	for class, n := range s.responses {
		ob.ObserveInt64(o.responses, n, with(attrClass.String(stats.StatusClass(class))))
	}
	ob.ObserveInt64(o.throttled, s.throttled, at)
	ob.ObserveInt64(o.degraded, s.degraded, at)
	ob.ObserveFloat64(o.wait, s.wait.Seconds(), at)
	ob.ObserveFloat64(o.queued, s.queued.Seconds(), at)
	ob.ObserveFloat64(o.pausedTime, s.paused.Seconds(), at)
	ob.ObserveInt64(o.inFlight, s.inFlight, at)
	if len(s.pausedBy) == 0 {
		ob.ObserveInt64(o.paused, 0, with(attrReason.String("")))
	}
	for reason, n := range s.pausedBy {
		ob.ObserveInt64(o.paused, n, with(attrReason.String(reason)))
	}
}
