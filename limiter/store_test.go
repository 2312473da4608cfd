package limiter

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

func persistedMemory(t *testing.T) *Memory {
	t.Helper()
	m := NewMemory()
	require.NoError(t, m.Persist(filepath.Join(t.TempDir(), "state")))
	t.Cleanup(func() { m.Close() })
	return m
}

func stored(t *testing.T, m *Memory, key string) bool {
	t.Helper()
	return storedValue(t, m, key) != nil
}

// storedValue is a copy of the value the file holds for key, or nil.
func storedValue(t *testing.T, m *Memory, key string) []byte {
	t.Helper()
	var value []byte
	require.NoError(t, m.persist.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(keysBucket).Get([]byte(key)); v != nil {
			value = append([]byte{}, v...)
		}
		return nil
	}))
	return value
}

// The commit after one change writes that key alone, a few pages, however
// many keys the store holds.
func TestCommitWritesOnlyWhatChanged(t *testing.T) {
	m := persistedMemory(t)
	rule := Rule{Rate: 0.001, Burst: 1}
	for i := range 10000 {
		m.Reserve(context.Background(), Request{Key: fmt.Sprintf("domain%d.example", i), Rule: &rule})
	}
	require.NoError(t, m.Commit())
	require.Zero(t, m.Changed())

	key := "domain5000.example"
	value := storedValue(t, m, key)
	before := m.persist.db.Stats()
	m.Reserve(context.Background(), Request{Key: key, Rule: &rule})
	require.NoError(t, m.Commit())
	after := m.persist.db.Stats()
	written := after.TxStats.GetWrite() - before.TxStats.GetWrite()
	assert.NotEqual(t, value, storedValue(t, m, key), "the change is in the file")
	assert.Positive(t, written)
	assert.LessOrEqual(t, written, int64(8), "pages written for one key of 10,000")
	assert.Zero(t, m.Changed())
}

// A request goes while a commit waits for the disk: the commit holds no
// key's lock while it writes.
func TestRequestsDoNotWaitForTheDisk(t *testing.T) {
	m := persistedMemory(t)
	r := Request{Key: "a.com", Rule: &Rule{Rate: 1000, Burst: 1}}

	blocker, err := m.persist.db.Begin(true) // the disk stands still
	require.NoError(t, err)
	// Changed only now, so that no commit, the background one either,
	// writes it before the disk stands still.
	m.Reserve(context.Background(), r)
	committed := make(chan error)
	go func() { committed <- m.Commit() }()
	require.Eventually(t, func() bool { return m.Changed() == 0 }, 10*time.Second, time.Millisecond, "the commit took its batch")

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
	assert.True(t, stored(t, m, "a.com"))
}

// Without a call to Commit, a change reaches the file within about a
// second; a key that has recovered leaves it once the Memory drops it.
func TestChangesReachTheFileOnTheirOwn(t *testing.T) {
	m := persistedMemory(t)
	const gap = 3 * time.Second
	reserved := time.Now()
	m.Reserve(context.Background(), Request{Key: "a.com", Rule: &Rule{MinDelay: gap}})
	require.Eventually(t, func() bool { return stored(t, m, "a.com") }, gap, 10*time.Millisecond)

	time.Sleep(time.Until(reserved.Add(gap + 100*time.Millisecond))) // a.com recovers
	for i := range 5000 {                                            // new keys make the Memory drop those that recovered
		m.Reserve(context.Background(), Request{Key: fmt.Sprintf("domain%d.example", i), Rule: &Rule{Rate: 1}})
	}
	require.NoError(t, m.Commit())
	assert.False(t, stored(t, m, "a.com"), "a dropped key leaves the file")
}
