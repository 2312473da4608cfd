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

// checkFormat checks that the file is a limiter state this build reads,
// or a new file, empty.
func checkFormat(tx *bolt.Tx) (fresh bool, err error) {
	meta := tx.Bucket(metaBucket)
	if meta == nil {
		if name, _ := tx.Cursor().First(); name != nil {
			return false, errors.New("not a limiter state")
		}
		return true, nil
	}
	switch f, v := string(meta.Get(formatKey)), string(meta.Get(versionKey)); {
	case f != format:
		return false, fmt.Errorf("not a limiter state (format %q)", f)
	case v != version:
		return false, fmt.Errorf("version %s, and this build reads version %s", v, version)
	case tx.Bucket(keysBucket) == nil:
		return false, errors.New("no keys bucket")
	}
	return false, nil
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
