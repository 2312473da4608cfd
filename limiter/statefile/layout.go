package statefile

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The file's layout: a bucket that names its format and version, and a
// bucket of keys, each key's bytes as they are, its value the key's state
// as limiter.Memory encodes it.
var (
	metaBucket = []byte("polite")
	keysBucket = []byte("keys")
	formatKey  = []byte("format")
	versionKey = []byte("version")
)

const (
	format  = "polite limiter.Memory state"
	version = "3"
)

// checkFormat creates a new file's buckets, and checks that an existing
// one is a limiter state this build reads.
func checkFormat(tx *bolt.Tx) error {
	meta := tx.Bucket(metaBucket)
	if meta == nil {
		if name, _ := tx.Cursor().First(); name != nil {
			return errors.New("not a limiter state")
		}
		return createBuckets(tx)
	}
	switch f, v := string(meta.Get(formatKey)), string(meta.Get(versionKey)); {
	case f != format:
		return fmt.Errorf("not a limiter state (format %q)", f)
	case v != version:
		return fmt.Errorf("version %s, and this build reads version %s", v, version)
	case tx.Bucket(keysBucket) == nil:
		return errors.New("no keys bucket")
	}
	return nil
}

// createBuckets lays out a new file.
func createBuckets(tx *bolt.Tx) error {
	meta, err := tx.CreateBucket(metaBucket)
	if err != nil {
		return err
	}
	if _, err = tx.CreateBucket(keysBucket); err != nil {
		return err
	}
	if err = meta.Put(formatKey, []byte(format)); err != nil {
		return err
	}
	return meta.Put(versionKey, []byte(version))
}
