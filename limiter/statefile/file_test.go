package statefile

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/polite-go/polite/limiter"
)

// persistedMemory returns a Memory that keeps its state in a File of its
// own, with the File.
func persistedMemory(t *testing.T) (*limiter.Memory, *File) {
	t.Helper()
	f, err := Open(filepath.Join(t.TempDir(), "state"))
	require.NoError(t, err)
	m := limiter.NewMemory()
	require.NoError(t, m.Persist(f))
	t.Cleanup(func() { m.Close() })
	return m, f
}

func stored(t *testing.T, f *File, key string) bool {
	t.Helper()
	return storedValue(t, f, key) != nil
}

// storedValue is a copy of the value the file holds for key, or nil.
func storedValue(t *testing.T, f *File, key string) []byte {
	t.Helper()
	var value []byte
	require.NoError(t, f.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(keysBucket).Get([]byte(key)); v != nil {
			value = append([]byte{}, v...)
		}
		return nil
	}))
	return value
}

// The commit after one change writes that key alone, a few pages, however
// many keys the file holds.
func TestCommitWritesOnlyWhatChanged(t *testing.T) {
	m, f := persistedMemory(t)
	rule := limiter.Rule{Rate: 0.001, Burst: 1}
	for i := range 10000 {
		m.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("domain%d.example", i), Rule: &rule})
	}
	require.NoError(t, m.Commit())

	key := "domain5000.example"
	value := storedValue(t, f, key)
	before := f.db.Stats()
	m.Reserve(context.Background(), limiter.Request{Key: key, Rule: &rule})
	require.NoError(t, m.Commit())
	after := f.db.Stats()
	written := after.TxStats.GetWrite() - before.TxStats.GetWrite()
	assert.NotEqual(t, value, storedValue(t, f, key), "the change is in the file")
	assert.Positive(t, written)
	assert.LessOrEqual(t, written, int64(8), "pages written for one key of 10,000")
}

// savingFile is a File that says when a Save begins, on saving if it
// has room.
type savingFile struct {
	*File
	saving chan struct{}
}

func (f savingFile) Save(states map[string][]byte) error {
	select {
	case f.saving <- struct{}{}:
	default:
	}
	return f.File.Save(states)
}

// A request goes while a commit waits for the disk: the commit holds no
// key's lock while it writes.
func TestRequestsDoNotWaitForTheDisk(t *testing.T) {
	opened, err := Open(filepath.Join(t.TempDir(), "state"))
	require.NoError(t, err)
	f := savingFile{opened, make(chan struct{}, 1)}
	m := limiter.NewMemory()
	require.NoError(t, m.Persist(f))
	t.Cleanup(func() { m.Close() })
	r := limiter.Request{Key: "a.com", Rule: &limiter.Rule{Rate: 1000, Burst: 1}}

	blocker, err := f.db.Begin(true) // the disk stands still
	require.NoError(t, err)
	// Changed only now, so that no commit, the background one either,
	// writes it before the disk stands still.
	m.Reserve(context.Background(), r)
	committed := make(chan error)
	go func() { committed <- m.Commit() }()
	<-f.saving // the commit took its batch

	reserved := make(chan struct{})
	go func() {
		for range 100 {
			m.Reserve(context.Background(), r)
		}
		close(reserved)
	}()
	select {
	case <-reserved:
	case <-time.After(10 * time.Second):
		t.Fatal("requests waited for the commit")
	}
	select {
	case <-committed:
		t.Fatal("the commit went through a write transaction held open")
	default:
	}
	require.NoError(t, blocker.Rollback())
	require.NoError(t, <-committed)
	require.NoError(t, m.Commit(), "the requests made during the commit go with the next")
	assert.True(t, stored(t, f.File, "a.com"))
}

// Without a call to Commit, a change reaches the file within about a
// second; a key that has recovered leaves it once the Memory drops it.
func TestChangesReachTheFileOnTheirOwn(t *testing.T) {
	m, f := persistedMemory(t)
	const gap = 3 * time.Second
	reserved := time.Now()
	m.Reserve(context.Background(), limiter.Request{Key: "a.com", Rule: &limiter.Rule{MinDelay: gap}})
	require.Eventually(t, func() bool { return stored(t, f, "a.com") }, gap, 10*time.Millisecond)

	time.Sleep(time.Until(reserved.Add(gap + 100*time.Millisecond))) // a.com recovers
	for i := range 5000 {                                            // new keys make the Memory drop those that recovered
		m.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("domain%d.example", i), Rule: &limiter.Rule{Rate: 1}})
	}
	require.NoError(t, m.Commit())
	assert.False(t, stored(t, f, "a.com"), "a dropped key leaves the file")
}

// Opening a file removes from it the keys that have recovered since, and
// keeps the others.
func TestLoadRemovesRecoveredKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	f, err := Open(path)
	require.NoError(t, err)
	m := limiter.NewMemory()
	require.NoError(t, m.Persist(f))
	now := time.Now()
	m.ReserveAt(limiter.Request{Key: "quick.example", Rule: &limiter.Rule{MinDelay: time.Second}}, now)
	m.ReserveAt(limiter.Request{Key: "slow.example", Rule: &limiter.Rule{MinDelay: time.Hour}}, now)
	require.NoError(t, m.Commit())
	require.True(t, stored(t, f, "quick.example"), "until a second from now")
	require.NoError(t, m.Close())

	time.Sleep(time.Until(now.Add(time.Second + 10*time.Millisecond))) // quick.example recovers
	again, err := Open(path)
	require.NoError(t, err)
	m = limiter.NewMemory()
	require.NoError(t, m.Persist(again))
	t.Cleanup(func() { m.Close() })
	assert.False(t, stored(t, again, "quick.example"))
	assert.True(t, stored(t, again, "slow.example"))
}
