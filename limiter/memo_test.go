package limiter

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

// TestDroppedStateLeavesItsMemo checks that a memo does not keep alive a
// state that Memory dropped, and that its key is found again after.
func TestDroppedStateLeavesItsMemo(t *testing.T) {
	m := NewMemory()
	rule := RuleOf(config.Limit{RequestsPerSecond: 1000, Burst: 1})
	m.ReserveAt(Request{Key: "a.com", Rule: &rule}, m.epoch)
	require.NotNil(t, rule.memo.state.Load(), "the memo holds the key's state")

	other := Rule{Rate: 1000, Burst: 1}
	later := m.epoch.Add(time.Second)
	for i := range minSweep {
		m.ReserveAt(Request{Key: fmt.Sprintf("%d.com", i), Rule: &other}, later)
	}
	assert.Nil(t, rule.memo.state.Load(), "a dropped state stays in its memo")

	res := m.ReserveAt(Request{Key: "a.com", Rule: &rule}, later)
	assert.True(t, res.OK)
	assert.Zero(t, res.Wait)
	s, _ := m.keys.Load("a.com")
	assert.Same(t, s, rule.memo.state.Load())
}
