// Package statefile keeps a [limiter.Memory]'s state in a file, so that a
// restarted process keeps the promises the last one made.
package statefile

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/polite-go/polite/limiter"
)

// lockWait is how long Open waits for another process to release the
// file before it gives up.
const lockWait = 100 * time.Millisecond

// growStep is how much a file past 1 MB grows at a time (bbolt's default
// is 16 MB): a file of many keys stays within a megabyte of what they
// need.
const growStep = 1 << 20

// File is a [limiter.StateStore] in a database file (a bbolt file), for
// [limiter.Memory.Persist]:
//
//	f, err := statefile.Open(path)
//	if err != nil {
//		return err
//	}
//	if err := m.Persist(f); err != nil {
//		return err
//	}
//	defer m.Close()
//
// A commit writes only the keys that changed, in one transaction, and a
// crash, even in the middle of one, leaves the file whole. Keys longer
// than 32 KB, and the empty key, are not written: they stay in memory
// only. Loading it removes the keys that recovered since, and gives back
// their space when they held more than half of it (see [File.Load]).
//
// A File is used by one Memory; it is not safe for concurrent use.
type File struct {
	db   *bolt.DB
	path string
}

var _ limiter.StateStore = (*File)(nil)

// Open opens the state file at path (a symbolic link is followed), or
// creates it if it does not exist. A file another process keeps its state
// in is an error wrapping [limiter.ErrStateInUse], never shared or
// overwritten. A file it cannot read is an error wrapping
// [limiter.ErrStateDamaged], never a silent fresh start: move the file
// away to start afresh.
func Open(path string) (*File, error) {
	info, statErr := os.Stat(path)
	_, lstatErr := os.Lstat(path)
	db, err := openDB(path)
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, fmt.Errorf("%w: %s is used by another process; give each process a state file of its own", limiter.ErrStateInUse, path)
	case err != nil && statErr == nil && info.Size() > 0:
		return nil, damaged(path, err)
	case err != nil: // a new file it could not write
		if errors.Is(lstatErr, os.ErrNotExist) {
			os.Remove(path)
		}
		return nil, fmt.Errorf("statefile: %s: %w", path, err)
	}
	removeCompaction(path)
	return &File{db: db, path: path}, nil
}

// Close closes the file.
func (f *File) Close() error {
	if err := f.db.Close(); err != nil {
		return fmt.Errorf("statefile: %s: %w", f.path, err)
	}
	return nil
}

// damaged is the error for the file at path that cannot be read because
// of what.
func damaged(path string, what error) error {
	return fmt.Errorf("%w: %s: %v; move it away to start afresh", limiter.ErrStateDamaged, path, what)
}

// openDB opens the bbolt file at path. A damaged file is an error, never
// a crash.
func openDB(path string) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer damageIsAnError(&err)
	return openBolt(path, 0)
}

// openBolt opens or creates the bbolt file at path, waiting lockWait at
// most for another process to release it, and maps mmapSize bytes of it
// at first (0 for bbolt's default).
func openBolt(path string, mmapSize int) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockWait, InitialMmapSize: mmapSize})
	if err != nil {
		return nil, err
	}
	db.AllocSize = growStep
	return db, nil
}

// damageIsAnError turns what bbolt does on reading a damaged file, a
// panic or a fault on its memory map, into an error in *err. Defer it.
func damageIsAnError(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%v", r)
	}
}
