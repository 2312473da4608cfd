package redislimiter

import (
	"math/rand/v2"
	"time"

	"github.com/polite-go/polite/limiter"
)

// This file holds what TestGeneratedScriptsMatchMemory adds to the pacing
// rules the scripts keep: jitter, and what is observed of a key's server (a
// Crawl-delay, an adaptive gap from its latency, a backoff after errors).

// randomMicros returns a random duration in whole microseconds, in (0, most].
func randomMicros(rng *rand.Rand, most time.Duration) time.Duration {
	return time.Duration(1+rng.Int64N(int64(most/time.Microsecond))) * time.Microsecond
}

// addJitterAndFeedback gives rule, at random, jitter, adaptive pacing, a cap on
// pauses and a list of error statuses other than the default.
func addJitterAndFeedback(rng *rand.Rand, rule *limiter.Rule) {
	if rng.IntN(3) == 0 {
		rule.Jitter = randomMicros(rng, 200*time.Millisecond)
	}
	if rng.IntN(4) == 0 {
		rule.Adaptive = true
		rule.Target = []float64{0, 1, 2.5}[rng.IntN(3)]
		if rng.IntN(2) == 0 {
			rule.AdaptiveStart = randomMicros(rng, 500*time.Millisecond)
		}
		if rng.IntN(2) == 0 {
			rule.AdaptiveMax = randomMicros(rng, 2*time.Second)
		}
	}
	if rng.IntN(3) == 0 {
		rule.MaxPause = randomMicros(rng, 5*time.Second)
	}
	switch rng.IntN(4) {
	case 0:
		rule.ErrorStatuses = []int{} // none
	case 1:
		rule.ErrorStatuses = []int{500, 0}
	}
}

// randomSample is a jitter sample under rule, in whole microseconds: the
// value both limiters draw in one step.
func randomSample(rng *rand.Rand, rule *limiter.Rule) time.Duration {
	if rule.Jitter <= 0 {
		return 0
	}
	return time.Duration(rng.Int64N(int64(rule.Jitter/time.Microsecond))) * time.Microsecond
}

// randomObservation is what a server may say of a request to key: a
// Crawl-delay, a response and its latency, an error status, a 429, a
// transport failure. No Crawl-delay under an adaptive rule: where both
// raise the gap, the Limiter names the reason "adaptive" whichever is
// longer, as its reason method says, while Memory names the longer.
func randomObservation(rng *rand.Rand, key string, rule *limiter.Rule) *limiter.Observation {
	switch rng.IntN(6) {
	case 0:
		if !rule.Adaptive {
			return &limiter.Observation{Host: "https://" + key, CrawlDelay: randomMicros(rng, 500*time.Millisecond)}
		}
		fallthrough
	case 1, 2:
		return &limiter.Observation{Status: 200, Latency: randomMicros(rng, 400*time.Millisecond)}
	case 3:
		return &limiter.Observation{Status: []int{500, 503}[rng.IntN(2)], Latency: randomMicros(rng, 100*time.Millisecond)}
	case 4:
		return &limiter.Observation{Status: 429}
	}
	return &limiter.Observation{Failed: true}
}
