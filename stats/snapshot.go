// Package stats records what polite did for each domain.
package stats

import (
	"encoding/json"
	"time"

	"github.com/polite-go/polite/limiter"
)

// Snapshot is a copy of one domain's counters at one moment.
// A Snapshot is a copy: later requests do not change it.
type Snapshot struct {
	// Domain is the key the counters belong to.
	Domain string
	// TotalRequests counts requests that passed the limiter and were sent,
	// robots.txt fetches apart.
	TotalRequests int64
	// RobotsRequests counts the robots.txt fetches sent (see
	// polite.WithRobots); their responses are not counted in Responses.
	RobotsRequests int64
	// DelayedRequests counts requests that waited more than 10ms.
	DelayedRequests int64
	// ServerDelayedRequests and GlobalDelayedRequests count the delayed
	// requests whose last turn to come was their server's
	// (polite.WithServerLimit) or the global one (polite.WithGlobalLimit);
	// the others waited for their domain's.
	ServerDelayedRequests int64
	GlobalDelayedRequests int64
	// CanceledRequests counts requests whose wait failed: cancelled, past
	// their deadline, or refused because the wait was too long.
	CanceledRequests int64
	// FailedRequests counts sent requests whose round trip returned an error.
	FailedRequests int64
	// DisallowedRequests counts requests robots.txt forbade; none was sent.
	DisallowedRequests int64
	// GivenUp reports whether the domain was given up after failing again
	// and again (polite.WithMaxErrors); GivenUpRequests counts the
	// requests refused since, none of them sent.
	GivenUp         bool
	GivenUpRequests int64
	// TotalWaitTime is the time all sent requests spent waiting.
	TotalWaitTime time.Duration
	// QueuedTime is the time the domain's requests waited in a frontier's
	// line (package frontier) before they were handed out, summed over
	// the requests: a wait the Transport does not see, apart from
	// TotalWaitTime.
	QueuedTime time.Duration
	// AverageWaitTime is TotalWaitTime over DelayedRequests.
	AverageWaitTime time.Duration
	// LastRequestTime is when the latest request was sent.
	LastRequestTime time.Time
	// DelayRate is DelayedRequests over TotalRequests.
	DelayRate float64
	// InFlight is the number of requests sent whose response body is not
	// closed yet.
	InFlight int64
	// Responses counts responses by status class: Responses[2] is 2xx.
	Responses [6]int64
	// ThrottledResponses counts 429 and 503 responses.
	ThrottledResponses int64
	// DegradedRequests counts requests paced by a fallback because the
	// shared limiter (Redis) did not answer.
	DegradedRequests int64
	// PausedUntil is when the domain's current pause ends; zero if none.
	PausedUntil time.Time
	// PauseReason says who asked for the current pause
	// ([limiter.ReasonRetryAfter], [limiter.ReasonRateLimit],
	// [limiter.ReasonBackoff] after a 429, [limiter.ReasonErrors] while
	// the server fails: 5xx answers, timeouts, refused connections; or
	// [limiter.ReasonShared]: another worker sharing the limiter), or which
	// observed gap holds the next request back ([limiter.ReasonCrawlDelay],
	// [limiter.ReasonAdaptive]); empty if none.
	PauseReason limiter.Reason
	// PausedTime is the total time the domain was paused at the server's request.
	PausedTime time.Duration
	// Quotas reports each quota of the domain's limit, in order.
	Quotas []limiter.QuotaState
}

type snapshotJSON struct {
	Domain             string           `json:"domain"`
	TotalRequests      int64            `json:"total_requests"`
	RobotsRequests     int64            `json:"robots_requests"`
	DelayedRequests    int64            `json:"delayed_requests"`
	ServerDelayed      int64            `json:"server_delayed_requests,omitempty"`
	GlobalDelayed      int64            `json:"global_delayed_requests,omitempty"`
	CanceledRequests   int64            `json:"canceled_requests"`
	FailedRequests     int64            `json:"failed_requests"`
	DisallowedRequests int64            `json:"disallowed_requests"`
	GivenUp            bool             `json:"given_up,omitempty"`
	GivenUpRequests    int64            `json:"given_up_requests,omitempty"`
	TotalWaitTimeMS    float64          `json:"total_wait_time_ms"`
	QueuedTimeMS       float64          `json:"queued_time_ms,omitempty"`
	AverageWaitTimeMS  float64          `json:"average_wait_time_ms"`
	LastRequestTime    time.Time        `json:"last_request_time,omitzero"`
	DelayRate          float64          `json:"delay_rate"`
	InFlight           int64            `json:"in_flight"`
	Responses          map[string]int64 `json:"responses,omitempty"`
	ThrottledResponses int64            `json:"throttled_responses"`
	DegradedRequests   int64            `json:"degraded_requests"`
	PausedUntil        time.Time        `json:"paused_until,omitzero"`
	PauseReason        string           `json:"pause_reason,omitempty"`
	PausedTimeMS       float64          `json:"paused_time_ms"`
	Quotas             []quotaJSON      `json:"quotas,omitempty"`
}

type quotaJSON struct {
	Limit     int       `json:"limit"`
	Window    string    `json:"window"`
	Remaining int       `json:"remaining"`
	NextFree  time.Time `json:"next_free,omitzero"`
}

// MarshalJSON writes s with snake_case field names (total_requests,
// delayed_requests, average_wait_time_ms, ...); durations are in
// milliseconds and status classes are keyed "2xx" and so on.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	out := snapshotJSON{
		Domain:             s.Domain,
		TotalRequests:      s.TotalRequests,
		RobotsRequests:     s.RobotsRequests,
		DelayedRequests:    s.DelayedRequests,
		ServerDelayed:      s.ServerDelayedRequests,
		GlobalDelayed:      s.GlobalDelayedRequests,
		CanceledRequests:   s.CanceledRequests,
		FailedRequests:     s.FailedRequests,
		DisallowedRequests: s.DisallowedRequests,
		GivenUp:            s.GivenUp,
		GivenUpRequests:    s.GivenUpRequests,
		TotalWaitTimeMS:    milliseconds(s.TotalWaitTime),
		QueuedTimeMS:       milliseconds(s.QueuedTime),
		AverageWaitTimeMS:  milliseconds(s.AverageWaitTime),
		LastRequestTime:    s.LastRequestTime,
		DelayRate:          s.DelayRate,
		InFlight:           s.InFlight,
		ThrottledResponses: s.ThrottledResponses,
		DegradedRequests:   s.DegradedRequests,
		PausedUntil:        s.PausedUntil,
		PauseReason:        string(s.PauseReason),
		PausedTimeMS:       milliseconds(s.PausedTime),
	}
	for class, n := range s.Responses {
		if n > 0 {
			if out.Responses == nil {
				out.Responses = map[string]int64{}
			}
			out.Responses[StatusClass(class)] = n
		}
	}
	for _, q := range s.Quotas {
		out.Quotas = append(out.Quotas, quotaJSON{q.Limit, q.Window.String(), q.Remaining, q.NextFree})
	}
	return json.Marshal(out)
}

func milliseconds(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}
