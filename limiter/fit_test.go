package limiter_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
)

// A restored state holds no time further ahead than the rule it is used
// under allows: a state written an hour ahead of this clock, with a pause
// longer than the rule's MaxPause, does not stall its key.
func TestRestoredTimesFitTheRule(t *testing.T) {
	now := time.Now()
	ahead := now.Add(time.Hour).UnixNano()
	state := fmt.Sprintf(`{"format":"polite limiter.Memory state","version":1,"saved_at":"2026-01-01T00:00:00Z","keys":{
		"ahead.com":{"last":%d,"sent":%d,"bucket":{"tokens":0,"at":%d},"starts":[%d],"quiet_at":%d},
		"paused.com":{"paused_until":%d,"pause_reason":"retry-after","quiet_at":%d}}}`,
		ahead, ahead, ahead, ahead, ahead, now.Add(150*365*24*time.Hour).UnixNano(), ahead)
	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(path, []byte(state), 0o600))
	m := persisted(t, path) // imports the JSON

	rule := limiter.Rule{Rate: 1, Burst: 1, MaxPause: 2 * time.Second}
	res := m.ReserveAt(limiter.Request{Key: "ahead.com", Rule: &rule}, now)
	assert.LessOrEqual(t, res.Wait, 2*time.Second, "at most one cycle of the rule from now, and the token")
	res = m.ReserveAt(limiter.Request{Key: "paused.com", Rule: &rule}, now)
	assert.LessOrEqual(t, res.Wait, 2*time.Second, "at most the rule's MaxPause")
	assert.Equal(t, limiter.ReasonRetryAfter, res.Reason)
}
