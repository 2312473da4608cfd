package polite

import (
	"time"

	"github.com/polite-go/polite/config"
)

// DefaultTargetConcurrency is the number of requests adaptive pacing aims
// to keep in flight at each server unless WithTargetConcurrency says
// otherwise: Scrapy AutoThrottle's default.
const DefaultTargetConcurrency = 1.0

// MaxAdaptiveDelay is the longest gap adaptive pacing puts between two
// requests to a domain (Scrapy AutoThrottle's default maximum). A
// configured pace slower than that is kept as it is.
const MaxAdaptiveDelay = time.Minute

// adaptDelay is the adaptive pacing rule, Scrapy AutoThrottle's: after a
// response that took latency (request sent to response headers), the gap
// between two requests moves halfway towards latency/target, the gap that
// keeps target requests in flight at the server:
//
//	new = (old + latency/target) / 2
//
// never below floor (the domain's configured pace) nor above
// MaxAdaptiveDelay. A response that is not 2xx never shortens the gap
// (error pages are fast and would speed the crawl up), and a 429 or 503
// doubles it. old is 0 before the first response, which starts the gap at
// floor.
func adaptDelay(old, latency time.Duration, status int, target float64, floor time.Duration) time.Duration {
	old = max(old, floor)
	var next time.Duration
	if isThrottled(status) {
		next = 2 * min(old, MaxAdaptiveDelay)
	} else {
		goal := min(float64(max(latency, 0))/target, float64(MaxAdaptiveDelay))
		next = (min(old, MaxAdaptiveDelay) + time.Duration(goal)) / 2
	}
	next = max(min(next, MaxAdaptiveDelay), floor)
	if (status < 200 || status > 299) && next < old {
		return old
	}
	return next
}

// pace is the gap a limit's configuration sets between two requests: the
// larger of MinDelay and one token of RequestsPerSecond.
func pace(l *config.Limit) time.Duration {
	p := l.MinDelay
	if l.RequestsPerSecond > 0 {
		p = max(p, time.Duration(float64(time.Second)/l.RequestsPerSecond))
	}
	return p
}
