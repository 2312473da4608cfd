package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sort"

	"github.com/polite-go/polite/internal/pattern"
)

// File is a whole pacing configuration: the default limit, the limits of
// named domains, and the limits of the server and global scopes. Its JSON
// form is
//
//	{
//	  "version": "1.0",
//	  "default_config": {"requests_per_second": 1.0, "burst_capacity": 1},
//	  "domains": {
//	    "example.com": {"requests_per_second": 2.0, "burst_capacity": 2},
//	    "*.blogspot.com": {"min_delay": "2s"}
//	  },
//	  "server_config": {"requests_per_second": 4.0, "burst_capacity": 4},
//	  "global_config": {"requests_per_second": 20.0, "burst_capacity": 20}
//	}
//
// In JSON, a field that a limit leaves out is taken from default_config,
// and a field that default_config leaves out from the built-in
// DefaultLimit (1 request a second, burst 1, no other rule); a requests_per_second of 0
// given without a burst_capacity has no burst. Then Limit.Inherit applies,
// so {"max_concurrent": 2}, {"quotas": [...]} and {"adaptive": true} are
// each a whole limit at the default's pace. Parse returns every limit
// with all that filled in.
//
// A File is a plain value; do not change it while a Transport uses it.
type File struct {
	// Version is the file format's version, "1.0".
	Version string
	// Default paces every domain not in Domains; DefaultLimit when the file
	// has no default_config. Its fields are the ones Domains' limits leave out.
	Default Limit
	// Domains maps a domain, as the key function names it, to its limit.
	// A name "*.example.com" is a pattern: it gives its limit to every key
	// under example.com (not to example.com itself), each paced on its own.
	// A key's own entry beats a pattern, and a longer pattern a shorter one.
	// A name with a "*" that is not "*." and a host name is refused here;
	// the Transport that takes the file (polite.WithConfig, SetConfig) also
	// refuses a name its key function never makes a key of: under the
	// default DomainKey, "*.example.com" (every host under it is keyed
	// "example.com": write that), but not "*.blogspot.com".
	Domains map[string]Limit
	// Server, when set, paces every request also by the server it goes to,
	// shared by all the domains on that server (see polite.WithServerLimit).
	// A scope's limit takes nothing from the default: {"max_concurrent": 16}
	// caps the requests in flight and sets no pace.
	Server *Limit
	// Global, when set, paces every request also by one key shared by all
	// domains (see polite.WithGlobalLimit); it takes nothing from the
	// default either.
	Global *Limit
}

type fileJSON struct {
	Version string                     `json:"version,omitempty"`
	Default *json.RawMessage           `json:"default_config,omitempty"`
	Domains map[string]json.RawMessage `json:"domains,omitempty"`
	Server  *json.RawMessage           `json:"server_config,omitempty"`
	Global  *json.RawMessage           `json:"global_config,omitempty"`
}

// Load reads and validates the JSON file at path. It reads at most 1 MiB:
// a larger file, or a device that never ends such as /dev/zero, is an
// *fs.PathError naming the file and the limit. A named pipe is read until its writer
// closes it; one that no process writes to reads as empty.
func Load(path string) (*File, error) {
	data, err := readFile(path, maxFileSize)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// maxFileSize is the most Load reads; a real configuration is a few KiB.
const maxFileSize = 1 << 20

// readFile reads the file at path, failing once it has read more than
// limit bytes.
func readFile(path string, limit int64) ([]byte, error) {
	file, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	tooLarge := &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d MiB", limit>>20)}
	if info, err := file.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > limit {
		return nil, tooLarge
	}
	data, err := io.ReadAll(io.LimitReader(file, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, tooLarge
	}
	return data, nil
}

// Parse reads and validates a configuration in JSON. Unknown fields, keys
// given twice in one object (a domain, default_config, a field), wrong types
// and invalid limits are errors naming the domain and the field.
func Parse(data []byte) (*File, error) {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) == nil {
		for _, name := range sortedKeys(top) {
			if !slices.Contains(topFields, name) {
				return nil, fmt.Errorf("config: %s: unknown field", name)
			}
		}
	}
	if err := checkDuplicateKeys(data); err != nil {
		return nil, err
	}
	var raw fileJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		if err == io.EOF {
			return nil, errors.New("config: empty input, want a JSON object")
		}
		return nil, fmt.Errorf("config: %w", describeDecodeError(atPosition(data, err)))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("config: unexpected data after the JSON object")
	}
	f := &File{Version: raw.Version, Default: DefaultLimit()}
	if raw.Default != nil {
		if err := decodeLimit("default_config", *raw.Default, DefaultLimit(), &f.Default); err != nil {
			return nil, err
		}
	}
	var err error
	if f.Server, err = decodeScope("server_config", raw.Server); err != nil {
		return nil, err
	}
	if f.Global, err = decodeScope("global_config", raw.Global); err != nil {
		return nil, err
	}
	if len(raw.Domains) > 0 {
		f.Domains = make(map[string]Limit, len(raw.Domains))
	}
	for _, domain := range sortedKeys(raw.Domains) {
		var l Limit
		if err := decodeLimit(domain, raw.Domains[domain], f.Default, &l); err != nil {
			return nil, err
		}
		f.Domains[domain] = l
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// checkDuplicateKeys reports the first key given twice in one object of
// data: as a *FieldError inside a limit or among the domains, where the
// domain is known; as an error naming the key at the top level.
func checkDuplicateKeys(data []byte) error {
	path := duplicateKey(data)
	switch {
	case path == nil:
		return nil
	case len(path) == 1:
		return fmt.Errorf("config: %s: %w", path[0], errDuplicateKey)
	case path[0] == "default_config" || path[0] == "server_config" || path[0] == "global_config":
		return &FieldError{Domain: path[0], Field: joinPath(path[1:]), Err: errDuplicateKey}
	case path[0] == "domains" && len(path) == 2:
		return &FieldError{Domain: path[1], Field: "domains", Err: errDuplicateKey}
	case path[0] == "domains":
		return &FieldError{Domain: path[1], Field: joinPath(path[2:]), Err: errDuplicateKey}
	}
	return fmt.Errorf("config: %s: %w", joinPath(path), errDuplicateKey)
}

// decodeLimit reads the limit of domain from data, taking from def each
// field it leaves out, and then what Limit.Inherit takes.
func decodeLimit(domain string, data []byte, def Limit, l *Limit) error {
	err := json.Unmarshal(data, l)
	if err == nil {
		err = inheritAbsent(l, data, def)
	}
	if err == nil {
		*l = l.Inherit(def)
		return nil
	}
	var fe *fieldErr
	if errors.As(err, &fe) {
		return &FieldError{Domain: domain, Field: fe.field, Err: fe.err}
	}
	return &FieldError{Domain: domain, Field: "(limit)", Err: err}
}

// decodeScope reads the limit of a scope, named as its field is; nil if the
// file leaves it out. It takes nothing from default_config.
func decodeScope(field string, data *json.RawMessage) (*Limit, error) {
	if data == nil {
		return nil, nil
	}
	l := new(Limit)
	if err := decodeLimit(field, *data, Limit{}, l); err != nil {
		return nil, err
	}
	return l, nil
}

// Validate checks the default, every domain's limit, in domain order, and
// the server's and the global limits. A domain name with a "*" must be a
// pattern: "*." and a host name.
func (f *File) Validate() error {
	if err := f.Default.Validate("default_config"); err != nil {
		return err
	}
	for _, domain := range sortedKeys(f.Domains) {
		if domain == "" {
			return &FieldError{Domain: domain, Field: "domains", Err: errEmptyDomain}
		}
		if err := pattern.Check(domain); err != nil {
			return &FieldError{Domain: domain, Field: "domains", Err: err}
		}
		if err := f.Domains[domain].Validate(domain); err != nil {
			return err
		}
	}
	if f.Server != nil {
		if err := f.Server.Validate("server_config"); err != nil {
			return err
		}
	}
	if f.Global != nil {
		if err := f.Global.Validate("global_config"); err != nil {
			return err
		}
	}
	return nil
}

// MarshalJSON writes f in the file format that Parse reads.
func (f File) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Version string           `json:"version,omitempty"`
		Default Limit            `json:"default_config"`
		Domains map[string]Limit `json:"domains,omitempty"`
		Server  *Limit           `json:"server_config,omitempty"`
		Global  *Limit           `json:"global_config,omitempty"`
	}{f.Version, f.Default, f.Domains, f.Server, f.Global})
}

// topFields are the fields of a file's top-level object.
var topFields = []string{"version", "default_config", "domains", "server_config", "global_config"}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
