package limiter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// persisted returns a Memory that keeps its state at path, closed when
// the test ends.
func persisted(t testing.TB, path string) *limiter.Memory {
	t.Helper()
	m := limiter.NewMemory()
	require.NoError(t, m.Persist(path))
	t.Cleanup(func() { m.Close() })
	return m
}

// A state kept by one Memory and restored by another, as after a restart,
// means the same: the same waits, pauses, quotas and learned gaps.
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

func TestPersistRefusesASecondUser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	rule := limiter.Rule{Rate: 0.01, Burst: 1}
	first := persisted(t, path)
	_, err := first.Reserve(context.Background(), limiter.Request{Key: "a.com", Rule: &rule})
	require.NoError(t, err)

	second := limiter.NewMemory()
	err = second.Persist(path)
	require.ErrorIs(t, err, limiter.ErrStateInUse)
	assert.Contains(t, err.Error(), path, "the error names the file")
	assert.Zero(t, second.Len())

	require.NoError(t, first.Close(), "the first keeps its state")
	third := persisted(t, path)
	assert.Equal(t, 1, third.Len())
}

// A state path that is a symbolic link stays one: the state is its target.
func TestPersistFollowsASymlink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(target, link))
	rule := limiter.Rule{Rate: 0.01, Burst: 1}
	r := limiter.Request{Key: "a.com", Rule: &rule}
	first := persisted(t, link)
	_, err := first.Reserve(context.Background(), r)
	require.NoError(t, err)
	require.NoError(t, first.Close())

	info, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, info.Mode().Type(), "the link is still a link")
	res, err := persisted(t, target).Reserve(context.Background(), r)
	require.NoError(t, err)
	assert.Greater(t, res.Wait, 99*time.Second, "the target holds the state")
}

// A JSON state file, as the earlier version wrote it, is imported once,
// through a symbolic link too, and the file becomes a store.
func TestPersistImportsAJSONStateFile(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "state.json"), filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(target, link))
	now := time.Now()
	hour := now.Add(time.Hour).UnixNano()
	old := map[string]any{
		"format": "polite limiter.Memory state", "version": 1, "saved_at": now.UTC(),
		"keys": map[string]any{
			"a.com":     map[string]any{"last": now.UnixNano(), "quiet_at": hour, "windows": []any{map[string]any{"limit": 3, "starts": []int64{now.UnixNano()}}}},
			"b.com":     map[string]any{"paused_until": hour, "pause_reason": "retry-after", "quiet_at": hour},
			"quiet.com": map[string]any{"last": now.Add(-time.Hour).UnixNano(), "quiet_at": now.Add(-time.Minute).UnixNano()},
		},
	}
	data, err := json.Marshal(old)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(target, data, 0o600))

	m := persisted(t, link)
	assert.Equal(t, 2, m.Len(), "the keys that have not recovered")
	rule := limiter.Rule{Rate: 100, MaxPause: 2 * time.Hour, Quotas: []config.Quota{{Requests: 3, Window: time.Hour}}}
	assert.Equal(t, 2, stateAt(m, "a.com", rule, now).Quotas[0].Remaining)
	assert.InDelta(t, time.Hour, stateAt(m, "b.com", rule, now).Paused, float64(time.Second))
	require.NoError(t, m.Close())

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "the file and the link, nothing else")
	again, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.NotEqual(t, byte('{'), again[0], "the file is a store now")
	assert.Equal(t, 2, persisted(t, link).Len())
}

// A file that is not a state this build reads is an error naming it, and
// nothing is restored: the caller sends nothing.
func TestPersistRefusesWhatItCannotRead(t *testing.T) {
	for name, write := range map[string]func(path string) error{
		"garbage": func(path string) error {
			return os.WriteFile(path, []byte("not a database, and long enough to look like one? no."), 0o600)
		},
		"damaged JSON": func(path string) error {
			return os.WriteFile(path, []byte(`{"format": "polite limiter.Memory state", "version": 1, "keys": {"a.com": {"quiet_at`), 0o600)
		},
		"JSON with a damaged key": func(path string) error {
			return os.WriteFile(path, []byte(`{"format": "polite limiter.Memory state", "version": 1, "keys": {"a.com": {"quiet_at": "soon"}}}`), 0o600)
		},
		"JSON of a later version": func(path string) error {
			return os.WriteFile(path, []byte(`{"format": "polite limiter.Memory state", "version": 7, "keys": {}}`), 0o600)
		},
		"another program's database": func(path string) error {
			return withDB(path, func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err })
		},
		"a damaged value": func(path string) error {
			return withDB(path, func(tx *bolt.Tx) error {
				if err := newState(tx); err != nil {
					return err
				}
				return tx.Bucket([]byte("keys")).Put([]byte("a.com"), []byte(`{"quiet_at": `))
			})
		},
		"a later version": func(path string) error {
			return withDB(path, func(tx *bolt.Tx) error {
				if err := newState(tx); err != nil {
					return err
				}
				return tx.Bucket([]byte("polite")).Put([]byte("version"), []byte("99"))
			})
		},
		"a page overwritten": func(path string) error {
			m := limiter.NewMemory()
			if err := m.Persist(path); err != nil {
				return err
			}
			for i := range 5000 {
				m.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("domain%d.example", i), Rule: &slowRule})
			}
			if err := m.Close(); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt(bytes.Repeat([]byte{0xa5}, 64), 60*4096) // a leaf page's header
			return err
		},
		"zeroed pages": func(path string) error {
			if err := withDB(path, func(tx *bolt.Tx) error { return newState(tx) }); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt(make([]byte, 8192), 0)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state")
			require.NoError(t, write(path))
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			m := limiter.NewMemory()
			err = m.Persist(path)
			require.ErrorIs(t, err, limiter.ErrStateDamaged)
			assert.Contains(t, err.Error(), path, "the error names the file")
			assert.Contains(t, err.Error(), "move it away", "the error says what to do")
			assert.Zero(t, m.Len(), "nothing restored")
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, before, after, "the file is left as it was")
		})
	}
}

// withDB runs change in a transaction on a new bbolt file at path.
func withDB(path string, change func(*bolt.Tx) error) error {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	if err := db.Update(change); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// newState lays out an empty state as Persist does.
func newState(tx *bolt.Tx) error {
	meta, err := tx.CreateBucket([]byte("polite"))
	if err != nil {
		return err
	}
	if _, err := tx.CreateBucket([]byte("keys")); err != nil {
		return err
	}
	if err := meta.Put([]byte("format"), []byte("polite limiter.Memory state")); err != nil {
		return err
	}
	return meta.Put([]byte("version"), []byte("2"))
}

// Whatever a key's value in the file holds, Persist restores it or
// refuses the file; it never panics.
func FuzzPersistValue(f *testing.F) {
	for _, seed := range []string{
		`{"quiet_at": 4102444800000000000}`,
		`{"bucket": {"tokens": 0.5, "at": 1}, "last": 1, "paused_until": 4102444800000000000, "pause_reason": "retry-after", "quiet_at": 4102444800000000000}`,
		`{"windows": [{"limit": 2, "starts": [1, 2]}], "quiet_at": 4102444800000000000}`,
		`null`, `{}`, `{"quiet_at": `, `[]`, `{"bucket": {"tokens": "NaN"}}`,
	} {
		f.Add([]byte("a.com"), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if len(key) == 0 || len(key) > bolt.MaxKeySize {
			return
		}
		path := filepath.Join(t.TempDir(), "state")
		require.NoError(t, withDB(path, func(tx *bolt.Tx) error {
			if err := newState(tx); err != nil {
				return err
			}
			return tx.Bucket([]byte("keys")).Put(key, value)
		}))
		m := limiter.NewMemory()
		if err := m.Persist(path); err != nil {
			require.ErrorIs(t, err, limiter.ErrStateDamaged)
			assert.Zero(t, m.Len())
			return
		}
		m.StateAt(limiter.Request{Key: string(key)}, time.Now())
		require.NoError(t, m.Close())
	})
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
	assert.LessOrEqual(t, res.Wait, 2*time.Second, "the rule's own interval, not the hour")
}
