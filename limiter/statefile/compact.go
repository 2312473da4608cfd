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
const compactTxSize = 1 << 20

// sparse reports whether more than half the pages f's file has used would
// be free once the keys it does not keep are removed, and how many bytes
// of pages those it keeps would take: of the pages in use now, the share
// that the keys and states it keeps take of all (keptBytes and
// droppedBytes). The room the file keeps to grow into does not count.
func (f *File) sparse(tx *bolt.Tx, keptBytes, droppedBytes int64) (sparse bool, live int64) {
	info, err := os.Stat(f.path)
	if err != nil || info.Size() < compactMin {
		return false, 0
	}
	stats := f.db.Stats()
	used := tx.Size()
	live = used - int64(stats.FreePageN+stats.PendingPageN)*int64(f.db.Info().PageSize)
	if all := keptBytes + droppedBytes; all > 0 {
		live = live * keptBytes / all
	}
	return 2*live < used, live
}

// compact copies the keys of tx that kept holds, about live bytes of
// pages, to a new file beside f's, renames it over f's, and returns it
// open; or nil, having removed what it wrote, if it could not.
func (f *File) compact(tx *bolt.Tx, kept keySet, live int64) *bolt.DB {
	target, err := filepath.EvalSymlinks(f.path)
	if err != nil {
		return nil
	}
	path := compactionOf(target)
	// Mapped at about its size from the start, the new file seldom grows
	// past its map: each time it does, bbolt copies to the heap every page
	// its transaction holds.
	dst, err := openBolt(path, int(live+live/8))
	if err != nil {
		return nil
	}
	done := false
	defer func() {
		if !done { // a failure, or a damaged page: a panic on its way to Load
			dst.Close()
			os.Remove(path)
		}
	}()
	if copyKept(tx, kept, dst) != nil || os.Rename(path, target) != nil {
		return nil
	}
	done = true
	return dst
}

// compactionOf is the new file a compaction of the file at target writes.
func compactionOf(target string) string { return target + ".compact" }

// removeCompaction removes what a crash left of a compaction of the file
// at path, which the caller holds.
func removeCompaction(path string) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		os.Remove(compactionOf(target))
	}
}

// copyKept copies to dst, a new file, the layout of a state and the keys
// of tx that kept holds, compactTxSize bytes a transaction.
func copyKept(tx *bolt.Tx, kept keySet, dst *bolt.DB) error {
	out, err := dst.Begin(true)
	if err != nil {
		return err
	}
	defer func() { out.Rollback() }()
	if err := createBuckets(out); err != nil {
		return err
	}
	var size int64
	i := 0
	err = tx.Bucket(keysBucket).ForEach(func(k, v []byte) error {
		defer func() { i++ }()
		if !kept.has(i) {
			return nil
		}
		if size > compactTxSize {
			if err := out.Commit(); err != nil {
				return err
			}
			if out, err = dst.Begin(true); err != nil {
				return err
			}
			size = 0
		}
		b := out.Bucket(keysBucket)
		b.FillPercent = 1 // the keys come in order: full pages
		size += int64(len(k) + len(v))
		return b.Put(k, v)
	})
	if err != nil {
		return err
	}
	return out.Commit()
}
