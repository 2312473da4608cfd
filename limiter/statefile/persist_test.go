package statefile_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/polite-go/polite/limiter"
	"github.com/polite-go/polite/limiter/statefile"
)

// persisted returns a Memory that keeps its state in the file at path,
// closed when the test ends.
func persisted(t testing.TB, path string) *limiter.Memory {
	t.Helper()
	m := limiter.NewMemory()
	require.NoError(t, persist(m, path))
	t.Cleanup(func() { m.Close() })
	return m
}

// waits reports whether m makes a request for key wait under slowRule, as
// it does for a key it holds.
func waits(m *limiter.Memory, key string) bool {
	return m.StateAt(limiter.Request{Key: key, Rule: &slowRule}, time.Now()).Wait > 0
}

func TestPersistRefusesASecondUser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	first := persisted(t, path)
	_, err := first.Reserve(context.Background(), limiter.Request{Key: "a.com", Rule: &slowRule})
	require.NoError(t, err)

	_, err = statefile.Open(path)
	require.ErrorIs(t, err, limiter.ErrStateInUse)
	assert.Contains(t, err.Error(), path, "the error names the file")

	require.NoError(t, first.Close(), "the first keeps its state")
	assert.True(t, waits(persisted(t, path), "a.com"))
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
	assert.Greater(t, res.Wait(), 99*time.Second, "the target holds the state")
}

// A file that is not a state this build reads is an error naming it, and
// nothing is restored: the caller sends nothing.
func TestPersistRefusesWhatItCannotRead(t *testing.T) {
	withKey := func(value []byte) func(path string) error {
		return func(path string) error {
			return withDB(path, func(tx *bolt.Tx) error {
				if err := newState(tx); err != nil {
					return err
				}
				return tx.Bucket([]byte("keys")).Put([]byte("a.com"), value)
			})
		}
	}
	for name, write := range map[string]func(path string) error{
		"garbage": func(path string) error {
			return os.WriteFile(path, []byte("not a database, and long enough to look like one? no."), 0o600)
		},
		"another program's database": func(path string) error {
			return withDB(path, func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err })
		},
		"a value cut short":           withKey([]byte{1, 1}),
		"a value of a later version":  withKey(binary.AppendVarint([]byte{9, 0}, time.Now().Add(time.Hour).UnixNano())),
		"a value with unknown fields": withKey(binary.AppendVarint([]byte{1, 0x80}, time.Now().Add(time.Hour).UnixNano())),
		"a value with bytes past it":  withKey(append(binary.AppendVarint([]byte{1, 0}, time.Now().Add(time.Hour).UnixNano()), 0)),
		"a bucket of no number":       withKey(binary.AppendVarint(binary.LittleEndian.AppendUint64(binary.AppendVarint([]byte{1, 1}, time.Now().Add(time.Hour).UnixNano()), math.Float64bits(math.NaN())), 1)),
		"a later version of the layout": func(path string) error {
			return withDB(path, func(tx *bolt.Tx) error {
				if err := newState(tx); err != nil {
					return err
				}
				return tx.Bucket([]byte("polite")).Put([]byte("version"), []byte("99"))
			})
		},
		"a page overwritten": func(path string) error {
			m := limiter.NewMemory()
			if err := persist(m, path); err != nil {
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
			_, err = f.WriteAt(bytes.Repeat([]byte{0xa5}, 64), 30*4096) // a leaf page's header
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
			err = persist(m, path)
			require.ErrorIs(t, err, limiter.ErrStateDamaged)
			assert.Contains(t, err.Error(), path, "the error names the file")
			assert.Contains(t, err.Error(), "move it away", "the error says what to do")
			assert.False(t, waits(m, "a.com"), "nothing restored")
			for i := range 5000 {
				require.False(t, waits(m, fmt.Sprintf("domain%d.example", i)), "nothing restored")
			}
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

// newState lays out an empty state as Open does.
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
	return meta.Put([]byte("version"), []byte("3"))
}

// Whatever a key's value in the file holds, Persist restores it or
// refuses the file; it never panics.
func FuzzPersistValue(f *testing.F) {
	later := binary.AppendVarint(nil, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	for _, seed := range [][]byte{
		append([]byte{1, 0}, later...),
		binary.AppendVarint(binary.AppendVarint(binary.LittleEndian.AppendUint64(append([]byte{1, 1 | 2}, later...), math.Float64bits(0.5)), 1), 1),
		binary.AppendVarint(binary.AppendVarint(binary.AppendUvarint(append([]byte{1, 8}, later...), 2), 1), 2),
		append(append(append([]byte{1, 4}, later...), later...), 11, 'r', 'e', 't', 'r', 'y', '-', 'a', 'f', 't', 'e', 'r'),
		{}, {1}, {2, 0}, {1, 0xff},
	} {
		f.Add([]byte("a.com"), seed)
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
		if err := persist(m, path); err != nil {
			require.ErrorIs(t, err, limiter.ErrStateDamaged)
			assert.False(t, waits(m, string(key)))
			return
		}
		m.StateAt(limiter.Request{Key: string(key)}, time.Now())
		require.NoError(t, m.Close())
	})
}
