package otelpolite

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/stats"
)

// delayedAfter is how long a request waits before it counts as delayed,
// as in polite's stats.
const delayedAfter = 10 * time.Millisecond

// instruments are the metrics of one Transport, named after the
// Prometheus collector's: an exporter to Prometheus adds the unit and
// _total back (polite.wait, in s, becomes polite_wait_seconds_total).
type instruments struct {
	requests   metric.Int64Counter
	robots     metric.Int64Counter
	delayed    metric.Int64Counter
	canceled   metric.Int64Counter
	disallowed metric.Int64Counter
	failed     metric.Int64Counter
	responses  metric.Int64Counter
	throttled  metric.Int64Counter
	degraded   metric.Int64Counter
	wait       metric.Float64Counter
	paused     metric.Float64Counter
}

// newInstruments makes the instruments on m. An instrument m cannot make
// is a no-op, as the OpenTelemetry API returns it with its error, which
// m's provider has reported.
func newInstruments(m metric.Meter) *instruments {
	i := &instruments{}
	i.requests, _ = m.Int64Counter("polite.requests", metric.WithUnit("{request}"), metric.WithDescription("Requests sent through the polite Transport."))
	i.robots, _ = m.Int64Counter("polite.robots.requests", metric.WithUnit("{request}"), metric.WithDescription("robots.txt fetches sent, apart from the requests."))
	i.delayed, _ = m.Int64Counter("polite.requests.delayed", metric.WithUnit("{request}"), metric.WithDescription("Requests that waited more than 10ms for their turn, by the scope whose turn came last."))
	i.canceled, _ = m.Int64Counter("polite.requests.canceled", metric.WithUnit("{request}"), metric.WithDescription("Requests whose wait failed (cancelled, deadline, too long); never sent."))
	i.disallowed, _ = m.Int64Counter("polite.requests.disallowed", metric.WithUnit("{request}"), metric.WithDescription("Requests robots.txt forbade; never sent."))
	i.failed, _ = m.Int64Counter("polite.requests.failed", metric.WithUnit("{request}"), metric.WithDescription("Sent requests whose round trip returned an error."))
	i.responses, _ = m.Int64Counter("polite.responses", metric.WithUnit("{response}"), metric.WithDescription("Responses by status class."))
	i.throttled, _ = m.Int64Counter("polite.throttled_responses", metric.WithUnit("{response}"), metric.WithDescription("429 and 503 responses."))
	i.degraded, _ = m.Int64Counter("polite.degraded_requests", metric.WithUnit("{request}"), metric.WithDescription("Requests paced by a fallback because the shared limiter did not answer."))
	i.wait, _ = m.Float64Counter("polite.wait", metric.WithUnit("s"), metric.WithDescription("Time requests spent waiting for their turn."))
	i.paused, _ = m.Float64Counter("polite.paused", metric.WithUnit("s"), metric.WithDescription("Time the domain was paused at the server's request, by reason."))
	return i
}

// countSent counts a request sent to domain: a robots.txt fetch apart.
func (i *instruments) countSent(ctx context.Context, domain string, robots, degraded bool) {
	at := metric.WithAttributes(attrDomain.String(domain))
	if robots {
		i.robots.Add(ctx, 1, at)
		return
	}
	i.requests.Add(ctx, 1, at)
	if degraded {
		i.degraded.Add(ctx, 1, at)
	}
}

// countAnswer counts what the base returned for a request to domain, as
// the collector does: a robots.txt fetch's response is not counted.
func (i *instruments) countAnswer(ctx context.Context, domain string, robots bool, code int, err error) {
	at := metric.WithAttributes(attrDomain.String(domain))
	switch {
	case err != nil:
		i.failed.Add(ctx, 1, at)
		return
	case robots:
		return
	}
	i.responses.Add(ctx, 1, metric.WithAttributes(attrDomain.String(domain), attrClass.String(stats.StatusClass(code/100))))
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		i.throttled.Add(ctx, 1, at)
	}
}

func (i *instruments) countWait(ctx context.Context, domain, scope string, wait time.Duration) {
	i.wait.Add(ctx, wait.Seconds(), metric.WithAttributes(attrDomain.String(domain)))
	if wait > delayedAfter {
		i.delayed.Add(ctx, 1, metric.WithAttributes(attrDomain.String(domain), attrScope.String(scope)))
	}
}

func (i *instruments) countPause(ctx context.Context, domain string, reason limiter.Reason, pause time.Duration) {
	i.paused.Add(ctx, pause.Seconds(), metric.WithAttributes(attrDomain.String(domain), attrReason.String(string(reason))))
}

func (i *instruments) countRefusal(ctx context.Context, domain, why string) {
	attrs := metric.WithAttributes(attrDomain.String(domain), attrRefusal.String(why))
	if why == "robots.txt" || why == "robots.txt unreachable" {
		i.disallowed.Add(ctx, 1, attrs)
		return
	}
	i.canceled.Add(ctx, 1, attrs)
}
