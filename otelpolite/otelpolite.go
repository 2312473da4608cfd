package otelpolite

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/limiter"
)

// scope names the instrumentation: the tracer's and the meter's.
const scope = "github.com/polite-go/polite/otelpolite"

// Option configures WithTracing and RegisterMetrics; each option says
// which of them reads it.
type Option func(*settings)

type settings struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	maxDomains     int
}

// resolve applies opts over the defaults: all zero.
func resolve(opts []Option) settings {
	var s settings
	for _, opt := range opts {
		opt(&s)
	}
	return s
}

// WithTracerProvider sets the provider of WithTracing's spans; the global one
// (otel.GetTracerProvider) by default, or if tp is nil.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(s *settings) { s.tracerProvider = tp }
}

// WithMeterProvider sets the provider of RegisterMetrics' instruments;
// the global one (otel.GetMeterProvider) by default, or if mp is nil.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(s *settings) { s.meterProvider = mp }
}

// WithMaxDomains caps the domains that RegisterMetrics gives points of
// their own at n, as the Prometheus collector's metrics.WithMaxDomains
// does; by default, or if n is 0, there is no cap. Free places go to the
// busiest domains (by requests sent) at the collection that finds them
// free, and a domain keeps its place for as long as the Transport tracks
// it. Every other domain is summed into the points with
// polite.domain="other", whose counters keep growing, whose
// polite.requests.in_flight is their sum, and whose polite.paused is how
// many of them are paused, by reason. A negative n is an error.
func WithMaxDomains(n int) Option {
	return func(s *settings) { s.maxDomains = n }
}

// WithTracing makes a Transport show its pacing in OpenTelemetry traces,
// through a polite.Trace. Every span it makes is a child of the span in
// the request's context, so it works whichever way the Transport and
// otelhttp wrap each other:
//
//   - a request that waited for its turn gets a span "polite.wait", as
//     long as the wait, with the attributes polite.domain, polite.scope
//     (domain, server or global), polite.reason (rate, min_delay, quota,
//     crawl-delay, retry-after, backoff, …) and polite.wait.duration (in
//     seconds);
//   - a pause a response asked for is an event "polite.pause" on the span
//     in the request's context (or, if it holds none, on a span
//     "polite.pause"), with polite.domain, polite.reason and
//     polite.pause.duration;
//   - a request not sent gets a span "polite.refused" whose status is an
//     error saying why, and polite.refusal: "robots.txt", "robots.txt
//     unreachable", "given up", "wait too long", "deadline", "canceled"
//     or "error";
//   - a robots.txt fetch is a span "polite.robots", a child of the span
//     of the request that caused it, and the HTTP span of the fetch, if
//     the Transport's base is instrumented, is a child of it; a request
//     that waits for a fetch another started gets a span
//     "polite.robots.wait" linked to the fetch's, which is linked back.
//
// It reads WithTracerProvider; RegisterMetrics makes the metrics.
func WithTracing(opts ...Option) polite.Option {
	s := resolve(opts)
	if s.tracerProvider == nil {
		s.tracerProvider = otel.GetTracerProvider()
	}
	h := &hooks{tracer: s.tracerProvider.Tracer(scope)}
	return polite.WithTrace(&polite.Trace{
		Waited:        h.waited,
		PauseObserved: h.pauseObserved,
		Refused:       h.refused,
		RobotsFetch:   h.robotsFetch,
		RobotsJoined:  h.robotsJoined,
	})
}

// The attributes of the spans, events and metrics.
const (
	attrDomain        = attribute.Key("polite.domain")
	attrScope         = attribute.Key("polite.scope")
	attrReason        = attribute.Key("polite.reason")
	attrWaitDuration  = attribute.Key("polite.wait.duration")
	attrPauseDuration = attribute.Key("polite.pause.duration")
	attrRefusal       = attribute.Key("polite.refusal")
	attrClass         = attribute.Key("polite.class")
	attrURL           = attribute.Key("url.full")
)

// hooks makes the spans of one Transport. It is safe for concurrent use.
type hooks struct {
	tracer trace.Tracer
}

func (h *hooks) waited(ctx context.Context, domain, scope string, reason limiter.Reason, wait time.Duration) {
	end := time.Now()
	_, span := h.tracer.Start(ctx, "polite.wait",
		trace.WithTimestamp(end.Add(-wait)),
		trace.WithAttributes(attrDomain.String(domain), attrScope.String(scope), attrReason.String(string(reason)), attrWaitDuration.Float64(wait.Seconds())))
	span.End(trace.WithTimestamp(end))
}

// pauseObserved adds the event polite.pause to the request's span or, if
// its context holds none, to a span of its own, so that it is seen.
func (h *hooks) pauseObserved(ctx context.Context, domain string, reason limiter.Reason, pause time.Duration) {
	attrs := trace.WithAttributes(attrDomain.String(domain), attrReason.String(string(reason)), attrPauseDuration.Float64(pause.Seconds()))
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("polite.pause", attrs)
	} else {
		_, span := h.tracer.Start(ctx, "polite.pause")
		span.AddEvent("polite.pause", attrs)
		span.End()
	}
}

func (h *hooks) refused(ctx context.Context, domain string, err error) {
	why := refusal(err)
	_, span := h.tracer.Start(ctx, "polite.refused", trace.WithAttributes(attrDomain.String(domain), attrRefusal.String(why)))
	span.SetStatus(codes.Error, describe(err))
	span.End()
}

// robotsFetch starts the span of a robots.txt fetch, a child of the
// request's, and returns the fetch's context: the span and the request's
// baggage, none of its other values.
func (h *hooks) robotsFetch(ctx context.Context, url string) (context.Context, func(error)) {
	ctx, span := h.tracer.Start(ctx, "polite.robots", trace.WithAttributes(attrURL.String(url)))
	fetchCtx := baggage.ContextWithBaggage(trace.ContextWithSpan(context.Background(), span), baggage.FromContext(ctx))
	return fetchCtx, func(err error) {
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

func (h *hooks) robotsJoined(ctx, fetchCtx context.Context) {
	fetch := trace.SpanFromContext(fetchCtx)
	_, span := h.tracer.Start(ctx, "polite.robots.wait", trace.WithLinks(trace.Link{SpanContext: fetch.SpanContext()}))
	fetch.AddLink(trace.Link{SpanContext: span.SpanContext()})
	span.End()
}

// refusal says in a few words why a request with error err was not sent.
func refusal(err error) string {
	switch {
	case errors.Is(err, polite.ErrRobotsUnreachable):
		return "robots.txt unreachable"
	case errors.Is(err, polite.ErrDisallowed):
		return "robots.txt"
	case errors.Is(err, polite.ErrGivenUp):
		return "given up"
	case errors.Is(err, limiter.ErrWaitTooLong):
		return "wait too long"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// describe is the status description of a request not sent for err: for
// robots.txt, the rule that refused it, not the URL, whose query may hold
// a secret.
func describe(err error) string {
	var robots interface{ RefusedBy() (host, rule string) }
	if errors.As(err, &robots) {
		host, rule := robots.RefusedBy()
		return "disallowed by the robots.txt of " + host + ": " + rule
	}
	return err.Error()
}
