// Package config describes how fast polite may talk to each domain.
package config

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Limit is the pace of one domain. A limit paces by RequestsPerSecond (a token
// bucket holding Burst tokens), by MinDelay, or both; the other rules add to
// those. A request goes when every rule of its domain allows it.
//
// A limit that sets neither RequestsPerSecond nor MinDelay, and is not
// Disabled, paces at its default's rate, burst and min delay, which are
// DefaultLimit's (1 request a second, burst 1) unless a default says
// otherwise; a
// RequestsPerSecond without a Burst has burst 1 (see Limit.Inherit). So the
// zero Limit is the default's pace, and Limit{MaxConcurrent: 2} adds a cap
// to it.
// A Limit is a plain value: copies are independent, and one that no one
// changes may be read from any number of goroutines.
//
// A Limit is the user's side of a domain's settings: the Transport reads
// MaxConcurrent and Disabled itself, and hands the rest to its limiter as
// a limiter.Rule (limiter.RuleOf), with defaults filled in and the
// Transport's cap on server pauses (polite.WithMaxPause) added. A limiter
// reads only the Rule.
type Limit struct {
	// RequestsPerSecond is the token bucket's refill rate; 0 means no
	// bucket, or the default's pace when MinDelay is 0 too.
	RequestsPerSecond float64
	// Burst is how many requests may go back to back when the bucket is
	// full; 0 means 1 when RequestsPerSecond is set.
	Burst int
	// MinDelay is the least time between the starts of two requests.
	MinDelay time.Duration
	// Jitter adds a uniformly random [0, Jitter) to each gap between
	// requests, so that a crawl does not tick like a clock.
	Jitter time.Duration
	// MaxConcurrent caps the requests in flight in this process; 0 means no cap.
	MaxConcurrent int
	// Quotas are sliding windows that the domain's requests must all fit in.
	Quotas []Quota
	// Disabled turns pacing off; the domain's stats are still recorded.
	Disabled bool
	// Adaptive lets the delay follow the server's latency (AutoThrottle).
	Adaptive bool
	// TargetConcurrency is how many requests adaptive pacing aims to keep
	// in flight at the server: the gap tends to its latency divided by
	// TargetConcurrency. 0 means 1, Scrapy AutoThrottle's default.
	TargetConcurrency float64
	// AdaptiveStartDelay is the gap adaptive pacing keeps until the first
	// response, and starts from (Scrapy's AUTOTHROTTLE_START_DELAY). 0
	// means the pace the other rules set. Used only with Adaptive.
	AdaptiveStartDelay time.Duration
	// AdaptiveMaxDelay is the longest gap adaptive pacing sets (Scrapy's
	// AUTOTHROTTLE_MAX_DELAY); a slower configured pace is kept as it is.
	// 0 means a minute. Used only with Adaptive.
	AdaptiveMaxDelay time.Duration
	// ErrorStatuses are the answers that, again and again, back the domain
	// off as a 429 without Retry-After does: 1s, doubling each time, up to
	// the maximum pause (WithMaxPause), until a success. 0 in the list
	// stands for a transport failure: a timeout, a refused or reset
	// connection, a failed TLS handshake (a cancelled request's context
	// never counts, nor the deadline of a request's context that left the
	// server less than a second). Each status is 0 or from 400 to 599.
	//
	// nil means 500, 502, 503, 504 and 0: each says the server, or the
	// proxy in front of it, is failing or overloaded (a 503's pause is
	// called "backoff", as a 429's is; the others' "errors"). Other 5xx
	// are left out as not about load: 501 and 505 say what the server does
	// not support, 506 to 511 are configuration or authentication. 4xx
	// other than 429 are the request's fault, not the server's. An empty,
	// non-nil list turns this backoff off. A 429 always backs off, and a
	// Retry-After on any status is honoured whatever the list.
	ErrorStatuses []int
}

// Quota allows at most Requests requests (up to 1,000,000) in any window of
// length Window.
// A Quota is a plain value, safe to copy and to read concurrently.
type Quota struct {
	Requests int
	Window   time.Duration
}

// FieldError says which field of which domain's limit is wrong.
// A FieldError is not modified after it is returned.
type FieldError struct {
	// Domain is the domain whose limit is wrong, or "default_config".
	Domain string
	// Field is the JSON name of the field.
	Field string
	// Err says what is wrong with it.
	Err error
}

// Error says which domain and field are wrong, and why.
func (e *FieldError) Error() string {
	return fmt.Sprintf("config: domain %q: %s: %v", e.Domain, e.Field, e.Err)
}

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// Validate reports the first field of l that cannot be used, as a
// *FieldError naming domain. A field l leaves to its default (see
// Limit.Inherit) is not an error.
//
// Besides what each field's doc asks, it refuses values that would make a
// wait absurd: a requests_per_second below 1e-6 (one request per 11.6
// days), a bucket that takes more than 366 days to refill
// (burst_capacity / requests_per_second), a min_delay or jitter over 24
// hours, an adaptive_start_delay or adaptive_max_delay over 24 hours, and
// a quota window over 366 days. So every rule of a domain
// recovers within about a year, and a limiter that keeps state until then
// (Redis keys expire after it) never forgets a rule that still applies.
func (l Limit) Validate(domain string) error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Domain: domain, Field: field, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case l.RequestsPerSecond < 0 || math.IsNaN(l.RequestsPerSecond) || math.IsInf(l.RequestsPerSecond, 0):
		return bad("requests_per_second", "must be a positive number, got %v", l.RequestsPerSecond)
	case l.RequestsPerSecond > 0 && l.RequestsPerSecond < minRate:
		return bad("requests_per_second", "must be at least %v (one request per %v), got %v", minRate, time.Duration(1e9/minRate), l.RequestsPerSecond)
	case l.Burst < 0:
		return bad("burst_capacity", "must not be negative, got %d", l.Burst)
	case l.RequestsPerSecond > 0 && float64(l.Burst)/l.RequestsPerSecond > maxWindow.Seconds():
		return bad("burst_capacity", "%d refills in more than %v at requests_per_second %v", l.Burst, maxWindow, l.RequestsPerSecond)
	case l.RequestsPerSecond == 0 && l.Burst != 0 && (l.MinDelay > 0 || l.Disabled):
		return bad("burst_capacity", "set without requests_per_second")
	case l.MinDelay < 0:
		return bad("min_delay", "must not be negative, got %v", l.MinDelay)
	case l.MinDelay > maxDelay:
		return bad("min_delay", "must be at most %v, got %v", maxDelay, l.MinDelay)
	case l.Jitter < 0:
		return bad("jitter", "must not be negative, got %v", l.Jitter)
	case l.Jitter > maxDelay:
		return bad("jitter", "must be at most %v, got %v", maxDelay, l.Jitter)
	case l.TargetConcurrency < 0 || math.IsNaN(l.TargetConcurrency) || math.IsInf(l.TargetConcurrency, 0):
		return bad("target_concurrency", "must be a positive number, got %v", l.TargetConcurrency)
	case l.AdaptiveStartDelay < 0:
		return bad("adaptive_start_delay", "must not be negative, got %v", l.AdaptiveStartDelay)
	case l.AdaptiveStartDelay > maxDelay:
		return bad("adaptive_start_delay", "must be at most %v, got %v", maxDelay, l.AdaptiveStartDelay)
	case l.AdaptiveMaxDelay < 0:
		return bad("adaptive_max_delay", "must not be negative, got %v", l.AdaptiveMaxDelay)
	case l.AdaptiveMaxDelay > maxDelay:
		return bad("adaptive_max_delay", "must be at most %v, got %v", maxDelay, l.AdaptiveMaxDelay)
	case l.AdaptiveMaxDelay > 0 && l.AdaptiveStartDelay > l.AdaptiveMaxDelay:
		return bad("adaptive_start_delay", "%v is more than adaptive_max_delay %v", l.AdaptiveStartDelay, l.AdaptiveMaxDelay)
	case l.MaxConcurrent < 0:
		return bad("max_concurrent", "must not be negative, got %d", l.MaxConcurrent)
	}
	for i, status := range l.ErrorStatuses {
		if status != 0 && (status < 400 || status > 599) {
			return bad(fmt.Sprintf("error_statuses[%d]", i), "must be 0 (a transport failure) or a status from 400 to 599, got %d", status)
		}
	}
	for i, q := range l.Quotas {
		field := fmt.Sprintf("quotas[%d]", i)
		switch {
		case q.Requests < 1:
			return bad(field+".requests", "must be at least 1, got %d", q.Requests)
		case q.Requests > maxQuotaRequests:
			return bad(field+".requests", "must be at most %d, got %d", maxQuotaRequests, q.Requests)
		case q.Window <= 0:
			return bad(field+".window", "must be positive, got %v", q.Window)
		case q.Window > maxWindow:
			return bad(field+".window", "must be at most %v, got %v", maxWindow, q.Window)
		}
	}
	return nil
}

// maxQuotaRequests is the largest quota allowed, which Quota's doc states.
// A quota remembers the start of each request in its window, 8 bytes
// each, so the largest costs 8 MB per domain.
const maxQuotaRequests = 1_000_000

// The bounds on waits that Validate sets, which its doc states.
const (
	minRate   = 1e-6                 // requests_per_second, when set
	maxDelay  = 24 * time.Hour       // min_delay, jitter
	maxWindow = 366 * 24 * time.Hour // quota windows, a full bucket's refill
)

// DefaultLimit returns the built-in default limit: 1 request a second,
// burst 1, no other rule. It paces every domain that has no limit of its
// own when neither a File's default_config nor polite.WithDefault says
// otherwise, and it is File.Default when the file gives none.
func DefaultLimit() Limit {
	return Limit{RequestsPerSecond: 1, Burst: 1}
}

var errEmptyDomain = errors.New("domain name is empty")
