package limiter

import (
	"math/rand/v2"
	"time"
)

// SetJitterSource makes m take each jitter sample, a duration in
// [0, bound) for a rule whose Jitter is bound, from draw instead of at
// random, so that a test sees the same gaps on every run (or two limiters
// the same samples). nil, the default, draws at random. Call it before m
// is used.
func (m *Memory) SetJitterSource(draw func(bound time.Duration) time.Duration) {
	m.drawJitter = draw
}

// jitter is a sample of rule's jitter, 0 without one.
func (m *Memory) jitter(rule *Rule) time.Duration {
	switch {
	case rule.Jitter <= 0:
		return 0
	case m.drawJitter != nil:
		return m.drawJitter(rule.Jitter)
	}
	return rand.N(rule.Jitter)
}
