package limiter_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/statefile"
)

// slowRule keeps a key from recovering for 1,000 s.
var slowRule = limiter.Rule{Rate: 0.001, Burst: 1}

// persisted returns a Memory that keeps its state at path, closed when
// the test ends.
func persisted(t testing.TB, path string) *limiter.Memory {
	t.Helper()
	f, err := statefile.Open(path)
	require.NoError(t, err)
	m := limiter.NewMemory()
	require.NoError(t, m.Persist(f))
	t.Cleanup(func() { m.Close() })
	return m
}

// A state kept by one Memory and restored by another, as after a restart,
// means the same: the same waits, pauses, quotas and observed gaps.
func TestStateSurvivesARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	c := newClock()
	rule := limiter.Rule{Rate: 1, Burst: 2, Quotas: []config.Quota{{Requests: 5, Window: time.Hour}}}
	before := persisted(t, path)
	a := limiter.Request{Key: "a.com", Rule: &rule}
	for range 4 {
		c.reserveAt(before, a, 0)
	}
	before.PauseAt("b.com", time.Hour, c.at(0))
	b := limiter.Request{Key: "b.com", Rule: &rule}
	crawl := limiter.Request{Key: "c.com", Rule: &rule}
	before.ObserveAt(crawl, limiter.Observation{Host: "https://c.com:443", CrawlDelay: 30 * time.Second}, c.at(0))
	c.reserveAt(before, crawl, 0)
	quiet := limiter.Request{Key: "quiet.com", Rule: &rule}
	c.reserveAt(before, quiet, -time.Hour)
	require.NoError(t, before.Close())

	after := persisted(t, path)
	assert.Equal(t, 3, after.Len(), "a key that has fully recovered is not restored")
	for _, r := range []limiter.Request{a, b, crawl, quiet} {
		want, got := stateAt(before, r.Key, rule, c.at(ms(10))), stateAt(after, r.Key, rule, c.at(ms(10)))
		assert.InDelta(t, want.Wait, got.Wait, float64(time.Millisecond), r.Key)
		assert.InDelta(t, want.Paused, got.Paused, float64(time.Millisecond), r.Key)
		assert.Equal(t, want.Reason, got.Reason, r.Key)
		assert.Equal(t, want.MinDelay, got.MinDelay, r.Key)
		require.Len(t, got.Quotas, 1)
		assert.Equal(t, want.Quotas[0].Remaining, got.Quotas[0].Remaining, r.Key)
	}
	_, start := c.reserveAt(after, a, ms(10))
	assert.InDelta(t, 3*time.Second, start, float64(time.Millisecond), "the restored bucket and turns")
}

// Keys are bytes: two keys that are not UTF-8 and differ in one byte
// keep a state each.
func TestPersistKeepsKeysAsBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	c := newClock()
	slow := limiter.Rule{MinDelay: time.Hour, MaxPause: 3 * time.Hour}
	before := persisted(t, path)
	c.reserveAt(before, limiter.Request{Key: "tenant-\xff", Rule: &slow}, 0)
	before.PauseAt("tenant-\xfe", 2*time.Hour, c.at(0))
	require.NoError(t, before.Close())

	after := persisted(t, path)
	require.Equal(t, 2, after.Len())
	ff, fe := stateAt(after, "tenant-\xff", slow, c.at(0)), stateAt(after, "tenant-\xfe", slow, c.at(0))
	assert.InDelta(t, time.Hour, ff.Wait, float64(time.Second), "tenant-\\xff waits its min_delay")
	assert.Zero(t, ff.Paused)
	assert.InDelta(t, 2*time.Hour, fe.Paused, float64(time.Second), "tenant-\\xfe keeps its own pause")
}

// Commits that run while new keys come in and old ones are dropped leave
// in the file every key the Memory holds.
func TestCommitsDuringChangesKeepEveryKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	m := persisted(t, path)
	stop := make(chan struct{})
	committed := make(chan error)
	go func() {
		for {
			select {
			case <-stop:
				committed <- nil
				return
			default:
				if err := m.Commit(); err != nil {
					committed <- err
					return
				}
			}
		}
	}()
	const n = 50000
	quick := limiter.Rule{MinDelay: time.Nanosecond} // recovered at once: swept as keys come in
	for i := range n {
		m.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("quick%d.example", i), Rule: &quick})
		m.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("domain%d.example", i), Rule: &slowRule})
	}
	close(stop)
	require.NoError(t, <-committed)
	require.NoError(t, m.Close())

	again := persisted(t, path)
	assert.Equal(t, n, again.Len())
}

// A Memory used after Close, whose changes no commit will write, does not
// keep a note of each key it changes, not even after a Commit.
func TestAClosedMemoryNotesNoChanges(t *testing.T) {
	m := persisted(t, filepath.Join(t.TempDir(), "state"))
	require.NoError(t, m.Close())
	reserve := func(prefix string) {
		for i := range 100 {
			_, err := m.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("%s%d.example", prefix, i), Rule: &slowRule})
			require.NoError(t, err)
		}
	}
	reserve("domain")
	assert.Zero(t, m.Changed(), "after Close")
	assert.NoError(t, m.Commit(), "nothing to commit")
	reserve("other")
	assert.Zero(t, m.Changed(), "after a Commit after Close")
}

// A store written an hour ahead of this clock (another machine's clock, or
// a clock stepped back since) does not make requests fail: a turn further
// ahead than the rule allows is cut to what it allows.
func TestAStoreFromTheFutureDoesNotStallRequests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	rule := limiter.Rule{Rate: 1, Burst: 1}
	r := limiter.Request{Key: "a.com", Rule: &rule}
	ahead := persisted(t, path)
	for range 3 {
		ahead.ReserveAt(r, time.Now().Add(time.Hour))
	}
	require.NoError(t, ahead.Close())

	m := persisted(t, path)
	res, err := m.Reserve(context.Background(), r)
	require.NoError(t, err)
	assert.LessOrEqual(t, res.Wait(), 2*time.Second, "the rule's own interval, not the hour")
}

// Persist without a store, or a second time, is an error, and the first
// store stays in use.
func TestPersistRefusesNoStoreAndASecondOne(t *testing.T) {
	dir := t.TempDir()
	m := limiter.NewMemory()
	require.Error(t, m.Persist(nil))
	m = persisted(t, filepath.Join(dir, "first"))
	second, err := statefile.Open(filepath.Join(dir, "second"))
	require.NoError(t, err)
	defer second.Close()
	require.Error(t, m.Persist(second))
	m.Reserve(context.Background(), limiter.Request{Key: "a.com", Rule: &slowRule})
	require.NoError(t, m.Close())
	assert.Positive(t, stateAt(persisted(t, filepath.Join(dir, "first")), "a.com", slowRule, time.Now()).Wait)
}
