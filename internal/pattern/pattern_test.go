package pattern_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/polite-go/polite/internal/pattern"
)

func TestCheck(t *testing.T) {
	for _, good := range []string{"example.com", "*.example.com", "*.a.b.example.com", "*.com", "anything", "a.com/x", "*.Example.COM.", "*.bücher.de", "*.a_b-c.com"} {
		assert.NoError(t, pattern.Check(good), good)
	}
	for _, bad := range []string{"", "*", "*.", "*example.com", "*..example.com", "*.*.example.com", "*.a*.com", "a.*.com", "example.*",
		"**.x", "*.a.com/x", "*.a.com?q", "*.a.com:8080", "*.a.com#f", "*.a..com", "*.a.com..", "*.a com", "*.[::1]"} {
		assert.Error(t, pattern.Check(bad), bad)
	}
}

func TestTableMostSpecificWins(t *testing.T) {
	var tab pattern.Table[string]
	tab.Set("*.example.com", "pattern")
	tab.Set("*.deep.example.com", "deeper pattern")
	tab.Set("exact.deep.example.com", "exact")
	tests := []struct {
		key, want string
		ok        bool
	}{
		{"example.com", "", false}, // a pattern names what is under it only
		{"a.example.com", "pattern", true},
		{"a.b.example.com", "pattern", true},
		{"deep.example.com", "pattern", true},
		{"x.deep.example.com", "deeper pattern", true},
		{"exact.deep.example.com", "exact", true},
		{"y.exact.deep.example.com", "deeper pattern", true},
		{"notexample.com", "", false},
		{"a.example.org", "", false},
	}
	for _, tt := range tests {
		got, ok := tab.Lookup(tt.key)
		assert.Equal(t, tt.ok, ok, tt.key)
		assert.Equal(t, tt.want, got, tt.key)
	}
}

func TestTableRange(t *testing.T) {
	var tab pattern.Table[int]
	tab.Set("a.com", 1)
	tab.Set("*.b.com", 2)
	got := map[string]int{}
	tab.Range(func(name string, v int) bool { got[name] = v; return true })
	assert.Equal(t, map[string]int{"a.com": 1, "*.b.com": 2}, got)
}
