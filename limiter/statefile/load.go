package statefile

import (
	"fmt"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// Load implements [limiter.StateStore]: it calls restore with each key the
// file holds, in one transaction, and removes those restore does not
// keep. Then, if more than half the pages the file has used are free, it
// copies the keys it holds to a new file, which it renames over the old
// one: the file gives back the space of the keys forgotten since the
// last compaction. A compaction that fails leaves the file as it was.
func (f *File) Load(restore func(key, state []byte) (keep bool, err error)) error {
	damage, err := f.load(restore)
	switch {
	case damage != nil:
		return damaged(f.path, damage)
	case err != nil:
		return fmt.Errorf("statefile: %s: %w", f.path, err)
	}
	f.compactIfSparse()
	return nil
}

// load checks the file's format, creating its buckets if it is new, and
// passes each key to restore, removing those it does not keep. It returns
// what it found damaged, never crashing on it, or the error writing its
// changes met.
func (f *File) load(restore func(key, state []byte) (bool, error)) (damage, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer damageIsAnError(&damage)
	err = f.db.Update(func(tx *bolt.Tx) error {
		damage = loadTx(tx, restore)
		return damage
	})
	return damage, err
}

func loadTx(tx *bolt.Tx, restore func(key, state []byte) (bool, error)) error {
	if err := checkFormat(tx); err != nil {
		return err
	}
	keys := tx.Bucket(keysBucket)
	var dropped [][]byte
	err := keys.ForEach(func(k, v []byte) error {
		keep, err := restore(k, v)
		if err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		if !keep {
			dropped = append(dropped, k)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range dropped {
		if err := keys.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
