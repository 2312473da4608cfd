package statefile

import (
	"fmt"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// fillPercent is how full a commit fills the pages it writes.
const fillPercent = 0.9

// Save implements [limiter.StateStore]: it writes states in one
// transaction, in the order of their keys, so that a B+tree's nodes fill
// one after the other.
func (f *File) Save(states map[string][]byte) error {
	keys := slices.Sorted(maps.Keys(states))
	err := f.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(keysBucket)
		// A commit that adds many keys fills its pages, most of which no
		// later commit changes.
		b.FillPercent = fillPercent
		for _, key := range keys {
			var err error
			switch state := states[key]; {
			case len(key) == 0 || len(key) > bolt.MaxKeySize:
				continue
			case state == nil:
				err = b.Delete([]byte(key))
			default:
				err = b.Put([]byte(key), state)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("statefile: %s: %w", f.path, err)
	}
	return nil
}
