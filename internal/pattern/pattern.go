// Package pattern reads the domain patterns of a configuration,
// "*.example.com", and finds the entry that applies to a key.
package pattern

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"unicode"
)

// prefix starts a name that is a pattern.
const prefix = "*."

// Check reports what is wrong with a configured domain name: it must not
// be empty, and a name with a "*" must be a pattern: "*." and a host name
// (letters, digits, "-", "_" and non-ASCII letters in dot-separated
// labels, a trailing dot allowed), which no key function's key can hold
// otherwise. A name with no "*" is a key, which the key function may
// write as it likes.
func Check(name string) error {
	switch {
	case name == "":
		return errors.New("domain name is empty")
	case !strings.Contains(name, "*"):
		return nil
	}
	parent, ok := Parent(name)
	if !ok {
		return errors.New(`a "*" only starts a pattern, "*." and a host name, such as "*.example.com"`)
	}
	if !hostName(strings.TrimSuffix(parent, ".")) {
		return fmt.Errorf("a pattern is \"*.\" and a host name, such as \"*.example.com\": %q is none", parent)
	}
	return nil
}

// hostName reports whether name, with no trailing dot, is dot-separated
// labels of letters, digits, "-" and "_".
func hostName(name string) bool {
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || strings.IndexFunc(label, notInLabel) >= 0 {
			return false
		}
	}
	return true
}

// notInLabel reports whether r has no place in a host name's label: it is
// none of an ASCII letter or digit, "-", "_", or a non-ASCII letter, mark
// or digit (of an internationalised name).
func notInLabel(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
		return false
	case r > unicode.MaxASCII:
		return !unicode.In(r, unicode.L, unicode.M, unicode.N)
	}
	return true
}

// Parent returns the name under which the pattern name gives its limit
// ("example.com" for "*.example.com"), and false if name is no pattern.
func Parent(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" || strings.Contains(rest, "*") || strings.HasPrefix(rest, ".") {
		return "", false
	}
	return rest, true
}

// Of returns the pattern that names every key under parent.
func Of(parent string) string { return prefix + parent }

// Table holds values for exact keys and for patterns. The zero Table is
// empty; a Table is not changed after it is filled, and may then be read
// concurrently.
type Table[V any] struct {
	exact map[string]V
	under map[string]V // a pattern's value by its parent name
}

// Set gives v to name, a key or a pattern.
func (t *Table[V]) Set(name string, v V) {
	m := &t.exact
	if parent, ok := Parent(name); ok {
		name, m = parent, &t.under
	}
	if *m == nil {
		*m = make(map[string]V)
	}
	(*m)[name] = v
}

// Lookup returns key's value: its own, else that of the most specific
// pattern it falls under (the one with the longest parent), else false.
func (t *Table[V]) Lookup(key string) (V, bool) {
	if v, ok := t.exact[key]; ok {
		return v, true
	}
	if len(t.under) > 0 {
		for i := strings.IndexByte(key, '.'); i >= 0; {
			if v, ok := t.under[key[i+1:]]; ok {
				return v, true
			}
			next := strings.IndexByte(key[i+1:], '.')
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
	var zero V
	return zero, false
}

// Get returns the value set for name, a key or a pattern.
func (t *Table[V]) Get(name string) (V, bool) {
	m := t.exact
	if parent, ok := Parent(name); ok {
		name, m = parent, t.under
	}
	v, ok := m[name]
	return v, ok
}

// Clone returns a copy of t, which Set may change without changing t.
func (t *Table[V]) Clone() *Table[V] {
	return &Table[V]{exact: maps.Clone(t.exact), under: maps.Clone(t.under)}
}

// Range calls f for every name and its value, patterns written "*.name",
// until f returns false.
func (t *Table[V]) Range(f func(name string, v V) bool) {
	for name, v := range t.exact {
		if !f(name, v) {
			return
		}
	}
	for parent, v := range t.under {
		if !f(prefix+parent, v) {
			return
		}
	}
}
