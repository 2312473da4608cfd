package statefile

import (
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// A file smaller than compactMin is never compacted: too little to give
// back.
const compactMin = 1 << 20

// compactTxSize is how many bytes of keys and states a compaction copies
// in one transaction, so that it never holds a whole file's pages in
// memory.
const compactTxSize = 4 << 20

// compactIfSparse gives back the space of forgotten keys, as etcd's
// defrag does: when more than half the pages the file has used are free,
// it copies the keys to a new file beside it and renames that over it
// (over the file a symbolic link names, which stays a link). A crash
// leaves the old file or the new, each whole. A compaction that fails
// leaves the file as it was, for the next Open to try again.
func (f *File) compactIfSparse() {
	if !f.sparse() {
		return
	}
	target, err := filepath.EvalSymlinks(f.path)
	if err != nil {
		return
	}
	compacted := target + ".compact"
	db, err := compactTo(f.db, compacted)
	if err != nil {
		return
	}
	if err := os.Rename(compacted, target); err != nil {
		db.Close()
		os.Remove(compacted)
		return
	}
	f.db.Close() // the old file, whose pages nothing reads any more
	f.db = db
}

// sparse reports whether more than half the pages f's file has used are
// free: the keys it holds would fit in less than half of them. The room
// the file keeps to grow into does not count.
func (f *File) sparse() bool {
	info, err := os.Stat(f.path)
	if err != nil || info.Size() < compactMin {
		return false
	}
	var used, free int64
	f.db.View(func(tx *bolt.Tx) error {
		stats := f.db.Stats()
		used = tx.Size()
		free = int64(stats.FreePageN+stats.PendingPageN) * int64(f.db.Info().PageSize)
		return nil
	})
	return 2*free > used
}

// compactTo copies what src holds to a new file at path, and returns it
// open.
func compactTo(src *bolt.DB, path string) (*bolt.DB, error) {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) { // what a crash left of the last compaction
		return nil, err
	}
	dst, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	if err := bolt.Compact(dst, src, compactTxSize); err != nil {
		dst.Close()
		os.Remove(path)
		return nil, err
	}
	return dst, nil
}
