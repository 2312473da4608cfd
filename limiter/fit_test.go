package limiter_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// A restored state holds no time further ahead than the rule it is used
// under allows: a state written an hour ahead of this clock, with a pause
// longer than the rule's MaxPause, does not stall its key.
func TestRestoredTimesFitTheRule(t *testing.T) {
	now := time.Now()
	path := filepath.Join(t.TempDir(), "state")
	before := persisted(t, path)
	written := limiter.Rule{Rate: 0.001, Burst: 1, Quotas: []config.Quota{{Requests: 100, Window: time.Hour}}}
	res := before.ReserveAt(limiter.Request{Key: "ahead.com", Rule: &written}, now.Add(time.Hour))
	limiter.ConfirmAt(&res, now.Add(time.Hour))
	before.PauseAt("paused.com", 150*365*24*time.Hour, now)
	require.NoError(t, before.Close())
	m := persisted(t, path)

	rule := limiter.Rule{Rate: 1, Burst: 1, MaxPause: 2 * time.Second}
	res = m.ReserveAt(limiter.Request{Key: "ahead.com", Rule: &rule}, now)
	assert.LessOrEqual(t, res.Wait(), 2*time.Second, "at most one cycle of the rule from now, and the token")
	res = m.ReserveAt(limiter.Request{Key: "paused.com", Rule: &rule}, now)
	assert.LessOrEqual(t, res.Wait(), 2*time.Second, "at most the rule's MaxPause")
	assert.Equal(t, limiter.ReasonRetryAfter, res.Reason())
}
