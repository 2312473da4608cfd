package limiter

import "time"

// adaptiveStart is the adaptive gap of a key of rule before its first
// response: the start delay under adaptive pacing, else 0.
func adaptiveStart(rule *Rule) time.Duration {
	if !rule.Adaptive {
		return 0
	}
	return rule.AdaptiveStart
}
