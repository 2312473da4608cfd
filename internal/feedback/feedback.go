// Package feedback turns what servers say into pauses and gaps: the
// pause a server asks for, exponential backoff after a 429 or while a
// server struggles, adaptive pacing and robots.txt's Crawl-delay.
package feedback

import (
	"net/http"
	"slices"
	"time"
)

// firstBackoff is the pause after a 429 or 503 that says nothing of when to
// come back, or after an error; each further one doubles it, up to the
// maximum pause.
const firstBackoff = time.Second

// defaultMaxAdaptiveDelay is the longest gap adaptive pacing puts between
// two requests unless the Policy says otherwise (Scrapy AutoThrottle's
// default maximum). A configured pace slower than that is kept as it is.
const defaultMaxAdaptiveDelay = time.Minute

// The reasons a State gives for a pause or a widened gap.
const (
	RetryAfter = "retry-after" // a response's Retry-After
	Backoff    = "backoff"     // a 429 or 503 without Retry-After
	Errors     = "errors"      // a server failing: 5xx answers, transport failures
	RateLimit  = "ratelimit"   // a RateLimit header saying no request remains
	CrawlDelay = "crawl-delay" // robots.txt's Crawl-delay widens the gap
	Adaptive   = "adaptive"    // adaptive pacing widens the gap
)

// Response is what one response, or the failure to get one, says about
// pacing.
type Response struct {
	Status     int
	Failed     bool          // no response: the round trip failed at the transport; Status is 0
	Sent       time.Time     // when its request was sent
	Latency    time.Duration // from sent to the response's headers
	RetryAfter time.Duration // from Retry-After; 0 if absent or void
	RateLimit  time.Duration // until a RateLimit quota resets; 0 if none is exhausted
}

// Policy is how a key's server is observed: the bounds the caller set.
type Policy struct {
	MaxPause time.Duration // the longest pause a server can impose
	Adaptive bool          // adaptive pacing on
	Target   float64       // requests adaptive pacing keeps in flight; 0 means 1
	Floor    time.Duration // the configured pace, below which adaptive pacing never goes
	// StartDelay is the adaptive gap before the first response; 0 means
	// Floor.
	StartDelay time.Duration
	// MaxDelay is the longest adaptive gap; 0 means a minute.
	MaxDelay time.Duration
	// ErrorStatuses are the statuses that back the key off as a 429 does,
	// 0 standing for a transport failure; nil means DefaultErrorStatuses.
	ErrorStatuses []int
}

// DefaultErrorStatuses are the answers that back a key off when the
// Policy does not say: 500, 502, 503, 504 and transport failures (0).
// Each says the server, or the proxy in front of it, is failing or
// overloaded. Other 5xx are not about load: 501 and 505 say what the
// server does not support, 506 to 511 are configuration or
// authentication.
var DefaultErrorStatuses = []int{0, 500, 502, 503, 504}

// struggling reports whether r is an error that backs the key off.
func (p *Policy) struggling(r *Response) bool {
	if r.Failed {
		return Struggling(p.ErrorStatuses, 0)
	}
	return r.Status != 0 && Struggling(p.ErrorStatuses, r.Status)
}

// Struggling reports whether status, 0 for a transport failure, is one of
// statuses (nil: DefaultErrorStatuses): an error that backs a key off.
func Struggling(statuses []int, status int) bool {
	if status > 0 && status < 400 {
		return false
	}
	if statuses == nil {
		statuses = DefaultErrorStatuses
	}
	return slices.Contains(statuses, status)
}

func (p *Policy) maxDelay() time.Duration {
	if p.MaxDelay > 0 {
		return p.MaxDelay
	}
	return defaultMaxAdaptiveDelay
}

// State is what one key has observed of its server; a limiter keeps one
// per key. Its methods take explicit times; it is not safe for concurrent
// use.
type State struct {
	until    int64         // the end of the latest pause this State asked for, in Unix nanoseconds
	reason   string        // why until was set
	step     time.Duration // the current backoff pause; 0 when not backing off
	stepAt   int64         // when the current backoff step began, in Unix nanoseconds
	adaptive time.Duration // the adaptive gap; 0 until the first response
	crawl    time.Duration // the longest Crawl-delay of the key's hosts
	host     string        // the host whose robots.txt asks for crawl
}

// Verdict is what Observe decided: pause the key for Pause (0: do not).
type Verdict struct {
	Pause  time.Duration
	Reason string
	Added  time.Duration // how much later the key's pause now ends
}

// Observe takes in r, received at now, and returns the pause to ask for,
// capped at p.MaxPause.
//
//   - A response with a Retry-After, whatever its status, pauses for it.
//   - A response whose RateLimit headers say no request remains pauses
//     until the quota resets; with a Retry-After as well, the longer
//     pause wins.
//   - Otherwise a 429, or an error p.ErrorStatuses lists (503 and the
//     other 5xx that say a server is failing, transport failures), backs
//     off: 1s, then twice the previous pause each time, up to p.MaxPause.
//     429s and errors share the step. A response to a request sent no
//     later than the current backoff step began was already in flight
//     when that step was decided: it does not double the step again.
//   - A 2xx or 3xx response to a request sent after the current step began
//     ends the backoff.
//
// With p.Adaptive it also moves the adaptive gap (see adaptDelay); a
// transport failure does not, having no latency to tell.
func (s *State) Observe(r *Response, now time.Time, p *Policy) Verdict {
	if p.Adaptive && !r.Failed {
		old := s.adaptive
		if old == 0 {
			old = p.StartDelay
		}
		s.adaptive = adaptDelay(old, r.Latency, r.Status, p.Target, p.Floor, p.maxDelay())
	}
	var v Verdict
	switch {
	case r.RetryAfter > 0 || r.RateLimit > 0:
		v = Verdict{Pause: r.RetryAfter, Reason: RetryAfter}
		if r.RateLimit > r.RetryAfter {
			v = Verdict{Pause: r.RateLimit, Reason: RateLimit}
		}
	case r.Status == http.StatusTooManyRequests || p.struggling(r):
		if s.step > 0 && r.Sent.UnixNano() <= s.stepAt {
			return Verdict{}
		}
		s.step = min(max(2*s.step, firstBackoff), p.MaxPause)
		s.stepAt = now.UnixNano()
		v = Verdict{Pause: s.step, Reason: Errors}
		if Throttled(r.Status) {
			v.Reason = Backoff
		}
	}
	if r.Status >= 200 && r.Status < 400 && s.step > 0 && r.Sent.UnixNano() > s.stepAt {
		s.step = 0
	}
	if v.Pause <= 0 {
		return Verdict{}
	}
	v.Pause = min(v.Pause, p.MaxPause)
	n := now.UnixNano()
	if end := n + int64(v.Pause); end > s.until {
		if s.until > n {
			v.Added = time.Duration(end - s.until)
		} else {
			v.Added = v.Pause
		}
		s.until, s.reason = end, v.Reason
	}
	return v
}

// SetCrawlDelay takes in c, the Crawl-delay of host's robots.txt. The key
// keeps the longest Crawl-delay its hosts ask for: a host asking for more
// raises it, and the host that set it lowers it when its robots.txt,
// fetched anew, asks for less. (A host that still asks for more raises it
// again with its next request: the key remembers one host, not all.)
// It reports whether the key's Crawl-delay changed.
func (s *State) SetCrawlDelay(host string, c time.Duration) bool {
	if s.host == host && c == s.crawl || s.host != host && c <= s.crawl {
		return false
	}
	s.crawl, s.host = c, host
	return true
}

// Backoff is the current backoff step: the pause the latest 429 or error
// asked for, which the next one doubles; 0 when not backing off, or for a
// nil State.
func (s *State) Backoff() time.Duration {
	if s == nil {
		return 0
	}
	return s.step
}

// MinDelay is the least gap between two requests that the server asked
// for: the larger of the Crawl-delay and the adaptive gap, and the reason
// for it; 0 and "" if neither is set. start is the adaptive gap until the
// first response moves it: the start delay under adaptive pacing, else 0.
// A nil State has observed nothing.
func (s *State) MinDelay(start time.Duration) (time.Duration, string) {
	var crawl, adaptive time.Duration
	if s != nil {
		crawl, adaptive = s.crawl, s.adaptive
	}
	if adaptive == 0 {
		adaptive = start
	}
	switch {
	case crawl == 0 && adaptive == 0:
		return 0, ""
	case crawl >= adaptive:
		return crawl, CrawlDelay
	default:
		return adaptive, Adaptive
	}
}

// Throttled reports whether status asks the client to slow down.
func Throttled(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// adaptDelay is the adaptive pacing rule, Scrapy AutoThrottle's: after a
// response that took latency (request sent to response headers), the gap
// between two requests moves halfway towards latency/target, the gap that
// keeps target requests in flight at the server:
//
//	new = (old + latency/target) / 2
//
// never below floor (the key's configured pace) nor above ceiling, in
// whole microseconds. A response that is not 2xx never shortens the gap
// (error pages are fast and would speed the crawl up), and a 429 or 503
// doubles it. old is the start delay before the first response, or 0,
// which starts the gap at floor.
func adaptDelay(old, latency time.Duration, status int, target float64, floor, ceiling time.Duration) time.Duration {
	if !(target > 0) {
		target = 1
	}
	old = max(old, floor)
	var next time.Duration
	if Throttled(status) {
		next = 2 * min(old, ceiling)
	} else {
		goal := min(float64(max(latency, 0))/target, float64(ceiling))
		next = (min(old, ceiling) + time.Duration(goal)) / 2
	}
	next = max(min(roundUpToMicro(next), ceiling), floor)
	if (status < 200 || status > 299) && next < old {
		return old
	}
	return next
}

// roundUpToMicro rounds d up to the microsecond, as the Redis scripts
// count time, so that a gap observed once queues turns alike in both.
func roundUpToMicro(d time.Duration) time.Duration {
	if r := d % time.Microsecond; r > 0 {
		d += time.Microsecond - r
	}
	return d
}

// Saved is a State as it is written to disk: times in Unix nanoseconds.
type Saved struct {
	Until    int64         `json:"until,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Step     time.Duration `json:"step,omitempty"`
	StepAt   int64         `json:"step_at,omitempty"`
	Adaptive time.Duration `json:"adaptive,omitempty"`
	Crawl    time.Duration `json:"crawl,omitempty"`
	Host     string        `json:"host,omitempty"`
}

// Save returns s as it is written to disk.
func (s *State) Save() Saved {
	return Saved{Until: s.until, Reason: s.reason, Step: s.step, StepAt: s.stepAt,
		Adaptive: s.adaptive, Crawl: s.crawl, Host: s.host}
}

// Restore makes s what v saved.
func (s *State) Restore(v Saved) {
	*s = State{until: v.Until, reason: v.Reason, step: v.Step, stepAt: v.StepAt,
		adaptive: v.Adaptive, crawl: v.Crawl, host: v.Host}
}
