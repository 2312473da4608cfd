package limiter

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// importJSON replaces a state file in JSON at path, as an earlier version
// wrote it, by a store holding the same keys. Any other file, or none, is
// left as it is. The store is built beside the file, then renamed over it
// (over the file a symbolic link names, which stays a link), so that a
// crash leaves either the JSON or the store.
func importJSON(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("limiter: state file: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	if first, err := r.Peek(1); err != nil || first[0] != '{' {
		return nil
	}
	in, err := readJSON(r)
	if err == nil {
		err = upgradeKeys(in.Keys)
	}
	if err == nil {
		err = checkKeys(in.Keys)
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v; move it away to start afresh", ErrStateDamaged, path, err)
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("limiter: state file: %w", err)
	}
	if err := writeStore(target+".import", in.Keys); err != nil {
		return fmt.Errorf("limiter: importing state file %s: %w", path, err)
	}
	if err := os.Rename(target+".import", target); err != nil {
		return fmt.Errorf("limiter: importing state file %s: %w", path, err)
	}
	return nil
}

// savedState is the JSON state file an earlier version wrote.
type savedState struct {
	Format  string                     `json:"format"`
	Version int                        `json:"version"`
	SavedAt json.RawMessage            `json:"saved_at"`
	Keys    map[string]json.RawMessage `json:"keys"`
}

// jsonVersion is the version of the JSON state file importJSON reads.
const jsonVersion = 1

func readJSON(r *bufio.Reader) (*savedState, error) {
	var in savedState
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, err
	}
	switch {
	case in.Format != stateFormat:
		return nil, fmt.Errorf("not a limiter state (format %q)", in.Format)
	case in.Version != jsonVersion:
		return nil, fmt.Errorf("version %d, and this build imports version %d", in.Version, jsonVersion)
	}
	return &in, nil
}

// upgradeKeys turns each key's quota windows, each with its starts, as
// version 1 kept them, into the one history of starts a state keeps now.
func upgradeKeys(keys map[string]json.RawMessage) error {
	for key, value := range keys {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(value, &fields); err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
		windows, ok := fields["windows"]
		if !ok {
			continue
		}
		var saved []struct{ Starts []int64 }
		if err := json.Unmarshal(windows, &saved); err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
		var starts []int64
		for _, w := range saved {
			starts = append(starts, w.Starts...)
		}
		slices.Sort(starts)
		delete(fields, "windows")
		fields["starts"], _ = json.Marshal(slices.Compact(starts))
		keys[key], _ = json.Marshal(fields)
	}
	return nil
}

// checkKeys checks that each of keys holds a state Persist restores.
func checkKeys(keys map[string]json.RawMessage) error {
	m := NewMemory()
	for key, value := range keys {
		var saved savedKey
		err := json.Unmarshal(value, &saved)
		if err == nil {
			_, err = m.restore(saved)
		}
		if err != nil {
			return fmt.Errorf("key %q: %w", key, err)
		}
	}
	return nil
}

// writeStore writes a new store at path holding keys, each key's value as
// it is.
func writeStore(path string, keys map[string]json.RawMessage) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockWait})
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := createBuckets(tx); err != nil {
			return err
		}
		b := tx.Bucket(keysBucket)
		for key, value := range keys {
			if len(key) == 0 || len(key) > bolt.MaxKeySize {
				continue
			}
			if err := b.Put([]byte(key), value); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
