// Package otelpolite shows polite's pacing in OpenTelemetry traces
// (WithTracing) and its stats as OpenTelemetry metrics (RegisterMetrics).
//
// RegisterMetrics reports every figure of the Prometheus collector
// (package metrics), named as OpenTelemetry's rules ask: the Prometheus
// name with dots between its words, without the unit, which goes in the
// instrument's unit ("s" for seconds), nor _total, which a counter's kind
// says. An exporter to Prometheus gives the Prometheus names back: it
// turns the dots into underscores, adds _seconds for the unit s (unless
// the name ends with it) and _total to a counter, so that dashboards over
// either read the same series. The one name kept longer than the rule
// says is polite.paused_seconds, as polite.paused is the gauge. Every
// instrument but polite.domains has the attribute polite.domain ("other"
// for the domains WithMaxDomains sums); the labels class, scope and
// reason are the attributes polite.class, polite.scope and polite.reason:
//
//	Prometheus                               OpenTelemetry instrument          kind           unit, attributes
//	polite_requests_total                    polite.requests                   counter        {request}
//	polite_robots_requests_total             polite.robots.requests            counter        {request}
//	polite_requests_delayed_total            polite.requests.delayed           counter        {request}
//	polite_requests_delayed_by_scope_total   polite.requests.delayed_by_scope  counter        {request}, polite.scope
//	polite_requests_canceled_total           polite.requests.canceled          counter        {request}
//	polite_requests_failed_total             polite.requests.failed            counter        {request}
//	polite_requests_disallowed_total         polite.requests.disallowed        counter        {request}
//	polite_requests_given_up_total           polite.requests.given_up          counter        {request}
//	polite_wait_seconds_total                polite.wait                       counter        s
//	polite_queued_seconds_total              polite.queued                     counter        s
//	polite_responses_total                   polite.responses                  counter        {response}, polite.class
//	polite_throttled_responses_total         polite.throttled_responses        counter        {response}
//	polite_degraded_requests_total           polite.degraded_requests          counter        {request}
//	polite_paused_seconds_total              polite.paused_seconds             counter        s
//	polite_requests_in_flight                polite.requests.in_flight         updowncounter  {request}
//	polite_paused                            polite.paused                     gauge          polite.reason
//	polite_domains                           polite.domains                    updowncounter  {domain}, no polite.domain
//
// The instruments are asynchronous (observable): they are read from the
// Transport's stats when the meter provider collects, so their values are
// the stats' own.
package otelpolite
