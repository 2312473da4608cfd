package limiter_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite/limiter"
)

// TestEffectiveRule checks that a Request's rule is its own, and a zero
// Rule when it has none.
func TestEffectiveRule(t *testing.T) {
	own := &limiter.Rule{Rate: 2, Burst: 3}
	assert.Same(t, own, (&limiter.Request{Key: "a.test", Rule: own}).EffectiveRule())
	assert.Equal(t, limiter.Rule{}, *(&limiter.Request{Key: "a.test"}).EffectiveRule())
}
