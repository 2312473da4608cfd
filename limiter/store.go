package limiter

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/polite-go/polite/internal/lru"
)

// commitInterval is how often a Memory that Persist set up commits what
// changed: a crash loses at most this much of what it promised.
const commitInterval = time.Second

// lockWait is how long Persist waits for another process to release the
// state before it gives up.
const lockWait = 100 * time.Millisecond

// The store's layout: a bucket that names its format and version, and a
// bucket of keys, each key's bytes as they are, its value a savedKey in
// JSON.
var (
	metaBucket = []byte("polite")
	keysBucket = []byte("keys")
	formatKey  = []byte("format")
	versionKey = []byte("version")
)

const storeVersion = "2"

// fillPercent is how full a commit fills the pages it writes.
const fillPercent = 0.9

// ErrStateInUse is the error Persist returns, wrapped with the file's
// name, when another process (or another Memory) keeps its state in the
// same file.
var ErrStateInUse = errors.New("limiter: state file in use")

// ErrStateDamaged is the error Persist returns, wrapped with the file's
// name and what is wrong, when the state file cannot be read.
var ErrStateDamaged = errors.New("limiter: state file damaged")

// Persist keeps m's state in a database file at path (a bbolt file;
// a symbolic link is followed), so that a restarted process keeps every
// promise the last one made to servers. Call it once, before m is used.
// The file holds the keys m holds, so not a key whose pace had recovered:
// after a restart under a stricter rule, such a key's first request may
// go without the new rule's gap from the last one before the restart.
//
// It first restores what the file holds; a file that does not exist is
// created. A file another process keeps its state in is an error wrapping
// [ErrStateInUse], never shared or overwritten. A file it cannot read is
// an error wrapping [ErrStateDamaged], never a silent fresh start: move the
// file away to start afresh. A state file in JSON, written by an earlier
// version, is imported once and replaced by a database.
//
// From then on, about every second and once more on [Memory.Close], m
// commits the keys that changed since its last commit, in one transaction,
// from a goroutine of its own: a request never waits for the disk. A
// crash, even in the middle of a commit, loses at most the last second and
// leaves the file whole. A commit that fails (a full disk) is tried again
// with the next one; Close reports it. Keys longer than 32 KB, and the
// empty key, are kept in memory only.
func (m *Memory) Persist(path string) error {
	if err := importJSON(path); err != nil {
		return err
	}
	info, statErr := os.Stat(path)
	_, lstatErr := os.Lstat(path)
	db, err := openStore(path)
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return fmt.Errorf("%w: %s is used by another process; give each process a state file of its own", ErrStateInUse, path)
	case err != nil && statErr == nil && info.Size() > 0:
		return fmt.Errorf("%w: %s: %v; move it away to start afresh", ErrStateDamaged, path, err)
	case err != nil: // a new file it could not write
		if errors.Is(lstatErr, os.ErrNotExist) {
			os.Remove(path)
		}
		return fmt.Errorf("limiter: state file %s: %w", path, err)
	}
	if damage, err := m.load(db); damage != nil || err != nil {
		db.Close()
		m.forget() // what it restored
		if damage != nil {
			return fmt.Errorf("%w: %s: %v; move it away to start afresh", ErrStateDamaged, path, damage)
		}
		return fmt.Errorf("limiter: state file %s: %w", path, err)
	}
	st := &store{db: db, path: path, stop: make(chan struct{}), done: make(chan struct{})}
	for i := range m.shards {
		m.shards[i].changed = map[string]struct{}{}
	}
	m.persist = st
	go st.run(m)
	return nil
}

// Commit writes now the keys that changed since the last commit. It
// returns the error the write met, if any; the keys it could not write
// are tried again with the next commit. A Memory that Persist did not set
// up has nothing to commit.
func (m *Memory) Commit() error {
	if m.persist == nil {
		return nil
	}
	return m.persist.commit(m)
}

// Close commits what changed one last time and closes the state file. It
// returns the first error a commit met since Persist, if any, so that a
// state that could not be written is never taken for a saved one. A
// Memory that Persist did not set up has nothing to close. A Memory may
// still be used after Close, in memory only.
func (m *Memory) Close() error {
	st := m.persist
	if st == nil {
		return nil
	}
	st.once.Do(func() {
		close(st.stop)
		<-st.done
		st.commit(m)
		m.stopNoting()
		if err := st.db.Close(); err != nil {
			st.record(fmt.Errorf("limiter: state file %s: %w", st.path, err))
		}
	})
	st.errMu.Lock()
	defer st.errMu.Unlock()
	return st.err
}

// store is the database Persist keeps a Memory's state in.
type store struct {
	db   *bolt.DB
	path string
	stop chan struct{}
	done chan struct{}
	once sync.Once

	commitMu sync.Mutex // one commit at a time

	errMu sync.Mutex
	err   error // the first commit that failed
}

// changedLocked notes that the state of key, one of sh's, changed since
// the last commit.
func (sh *shard) changedLocked(key string) {
	if sh.changed != nil {
		sh.changed[key] = struct{}{}
	}
}

// stopNoting makes m note no more changes, which no commit would write.
func (m *Memory) stopNoting() {
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		sh.changed = nil
		sh.mu.Unlock()
	}
}

// forget drops every key m holds.
func (m *Memory) forget() {
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		sh.keys = lru.List[string, keyState]{}
		sh.mu.Unlock()
	}
}

func (st *store) run(m *Memory) {
	defer close(st.done)
	ticker := time.NewTicker(commitInterval)
	defer ticker.Stop()
	for {
		select {
		case <-st.stop:
			return
		case <-ticker.C:
			st.commit(m)
		}
	}
}

func (st *store) record(err error) {
	st.errMu.Lock()
	defer st.errMu.Unlock()
	if st.err == nil {
		st.err = err
	}
}

// commit writes the keys that changed in one transaction: each key's
// state as it is now, or its removal if m no longer holds it or it has
// fully recovered. It holds a shard's lock only to encode its states,
// never while it writes.
func (st *store) commit(m *Memory) error {
	st.commitMu.Lock()
	defer st.commitMu.Unlock()
	values := map[string][]byte{} // nil removes the key
	for i := range m.shards {
		m.shards[i].encodeChanged(values)
	}
	if len(values) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(values)) // in order, a B+tree's nodes fill one after the other
	err := st.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(keysBucket)
		// A commit that adds many keys fills its pages, most of which no
		// later commit changes.
		b.FillPercent = fillPercent
		for _, key := range keys {
			var err error
			switch value := values[key]; {
			case len(key) == 0 || len(key) > bolt.MaxKeySize:
				continue
			case value == nil:
				err = b.Delete([]byte(key))
			default:
				err = b.Put([]byte(key), value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for _, key := range keys {
			sh := m.shard(key)
			sh.mu.Lock()
			sh.changedLocked(key) // for the next commit
			sh.mu.Unlock()
		}
		err = fmt.Errorf("limiter: state file %s: %w", st.path, err)
		st.record(err)
	}
	return err
}

// encodeChanged adds to values the keys of sh that changed since the last
// commit, each with its state now, or nil if sh no longer holds it or it
// has fully recovered. It holds sh's lock for encodeChunk keys at a time.
func (sh *shard) encodeChanged(values map[string][]byte) {
	sh.mu.Lock()
	keys := slices.Collect(maps.Keys(sh.changed))
	if sh.changed != nil { // nil after Close
		sh.changed = map[string]struct{}{} // not cleared: a cleared map keeps its size, which each commit would walk
	}
	sh.mu.Unlock()
	for chunk := range slices.Chunk(keys, encodeChunk) {
		sh.mu.Lock()
		now := sh.m.sinceEpoch()
		for _, key := range chunk {
			values[key] = nil
			if e := sh.keys.Peek(key); e != nil && e.Value.quietAt > now {
				value, err := json.Marshal(sh.m.save(&e.Value))
				if err != nil {
					panic("limiter: encoding a key's state: " + err.Error()) // a savedKey always encodes
				}
				values[key] = value
			}
		}
		sh.mu.Unlock()
	}
}

// encodeChunk is how many keys a commit encodes under a shard's lock.
const encodeChunk = 256

// openStore opens the bbolt file at path. A damaged file is an error,
// never a crash.
func openStore(path string) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer damageIsAnError(&err)
	return bolt.Open(path, 0o600, &bolt.Options{Timeout: lockWait})
}

// damageIsAnError turns what bbolt does on reading a damaged file, a
// panic or a fault on its memory map, into an error in *err. Defer it.
func damageIsAnError(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%v", r)
	}
}

// load checks db's format, creating its buckets if it is new, and
// restores every key it holds that has not fully recovered; it removes
// those that have. It returns what it found damaged, never crashing on
// it, or the error writing its changes met.
func (m *Memory) load(db *bolt.DB) (damage, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer damageIsAnError(&damage)
	err = db.Update(func(tx *bolt.Tx) error {
		damage = m.loadTx(tx)
		return damage
	})
	return damage, err
}

func (m *Memory) loadTx(tx *bolt.Tx) error {
	if err := checkFormat(tx); err != nil {
		return err
	}
	now := m.sinceEpoch()
	keys := tx.Bucket(keysBucket)
	var quiet [][]byte
	var saved savedKey // one for all keys, less for the collector to do
	err := keys.ForEach(func(k, v []byte) error {
		saved = savedKey{Starts: saved.Starts[:0]}
		if err := json.Unmarshal(v, &saved); err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		s, err := m.restore(saved)
		if err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		if s.quietAt <= now {
			quiet = append(quiet, k)
			return nil
		}
		m.replace(string(k), &s)
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range quiet {
		if err := keys.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// checkFormat creates a new store's buckets, and checks that an existing
// one is a limiter state this build reads.
func checkFormat(tx *bolt.Tx) error {
	meta := tx.Bucket(metaBucket)
	if meta == nil {
		if name, _ := tx.Cursor().First(); name != nil {
			return errors.New("not a limiter state")
		}
		return createBuckets(tx)
	}
	switch format, version := string(meta.Get(formatKey)), string(meta.Get(versionKey)); {
	case format != stateFormat:
		return fmt.Errorf("not a limiter state (format %q)", format)
	case version != storeVersion:
		return fmt.Errorf("version %s, and this build reads version %s", version, storeVersion)
	case tx.Bucket(keysBucket) == nil:
		return errors.New("no keys bucket")
	}
	return nil
}

// createBuckets lays out a new store.
func createBuckets(tx *bolt.Tx) error {
	meta, err := tx.CreateBucket(metaBucket)
	if err != nil {
		return err
	}
	if _, err = tx.CreateBucket(keysBucket); err != nil {
		return err
	}
	if err = meta.Put(formatKey, []byte(stateFormat)); err != nil {
		return err
	}
	return meta.Put(versionKey, []byte(storeVersion))
}
