package statefile

import (
	"fmt"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// Load implements [limiter.StateStore]: it calls restore with each key the
// file holds, then removes the keys restore does not keep. If, with them
// gone, more than half the pages the file has used would be free, it
// compacts the file instead, as etcd's defrag does: it copies the keys
// kept to a new file beside it and renames that over it (over the file a
// symbolic link names, which stays a link), so that the file gives back
// the space of the keys forgotten. A crash leaves the old file or the new
// one, each whole, at worst with keys restore did not keep, which the next
// Load removes. A compaction that fails leaves the file as it was, less
// those keys.
func (f *File) Load(restore func(key, state []byte) (keep bool, err error)) error {
	damage, err := f.load(restore)
	switch {
	case damage != nil:
		return damaged(f.path, damage)
	case err != nil:
		return fmt.Errorf("statefile: %s: %w", f.path, err)
	}
	return nil
}

// load does what Load does. It returns what it found damaged, never
// crashing on it, or the error writing the file met.
func (f *File) load(restore func(key, state []byte) (bool, error)) (damage, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer damageIsAnError(&damage)
	var fresh bool
	if damage = f.db.View(func(tx *bolt.Tx) (err error) { fresh, err = checkFormat(tx); return err }); damage != nil {
		return damage, nil
	}
	if fresh {
		return nil, f.db.Update(createBuckets)
	}
	var kept keySet
	var keptBytes, droppedBytes int64
	var compacted *bolt.DB
	damage = f.db.View(func(tx *bolt.Tx) error {
		var err error
		if kept, keptBytes, droppedBytes, err = restoreAll(tx, restore); err != nil {
			return err
		}
		if sparse, live := f.sparse(tx, keptBytes, droppedBytes); sparse {
			compacted = f.compact(tx, kept, live) // nil if it failed
		}
		return nil
	})
	switch {
	case damage != nil:
		return damage, nil
	case compacted != nil:
		f.db.Close() // the old file, whose pages nothing reads any more
		f.db = compacted
		return nil, nil
	case droppedBytes == 0:
		return nil, nil
	}
	return nil, f.removeDropped(kept)
}

// keySet holds, for each key of a file in order, whether it is kept.
type keySet []uint64

func (s *keySet) add(i int) {
	for len(*s) <= i/64 {
		*s = append(*s, 0)
	}
	(*s)[i/64] |= 1 << (i % 64)
}

func (s keySet) has(i int) bool { return i/64 < len(s) && s[i/64]&(1<<(i%64)) != 0 }

// leafElementSize is what bbolt adds to a key and its value in a page.
const leafElementSize = 16

// restoreAll passes each key of tx to restore, and returns the keys it
// keeps, with the bytes in pages of the keys it keeps and of those it does
// not.
func restoreAll(tx *bolt.Tx, restore func(key, state []byte) (bool, error)) (kept keySet, keptBytes, droppedBytes int64, err error) {
	i := 0
	err = tx.Bucket(keysBucket).ForEach(func(k, v []byte) error {
		keep, err := restore(k, v)
		if err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		if keep {
			kept.add(i)
			keptBytes += int64(len(k) + len(v) + leafElementSize)
		} else {
			droppedBytes += int64(len(k) + len(v) + leafElementSize)
		}
		i++
		return nil
	})
	return kept, keptBytes, droppedBytes, err
}

// removeBatch is how many keys removeDropped removes in one transaction,
// which holds in memory the pages it changes.
const removeBatch = 10000

// removeDropped removes the keys that kept does not hold, removeBatch at
// a time.
func (f *File) removeDropped(kept keySet) error {
	var dropped [][]byte
	err := f.db.View(func(tx *bolt.Tx) error {
		i := 0
		return tx.Bucket(keysBucket).ForEach(func(k, _ []byte) error {
			if !kept.has(i) {
				dropped = append(dropped, append([]byte(nil), k...))
			}
			i++
			return nil
		})
	})
	if err != nil {
		return err
	}
	for len(dropped) > 0 {
		batch := dropped[:min(removeBatch, len(dropped))]
		dropped = dropped[len(batch):]
		err := f.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(keysBucket)
			for _, k := range batch {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
