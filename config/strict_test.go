package config_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

// TestParseDuplicateKeysInALimit checks that a key repeated inside a limit,
// at any level, is a *FieldError naming the domain and the key.
func TestParseDuplicateKeysInALimit(t *testing.T) {
	tests := []struct {
		name, in, domain, field string
	}{
		{"domain repeated", `{"domains": {"a.com": {"min_delay": "1s"}, "b.com": {"min_delay": "1s"}, "a.com": {"min_delay": "2s"}}}`, "a.com", "domains"},
		{"domain repeated, same limit", `{"domains": {"a.com": {"min_delay": "1s"}, "a.com": {"min_delay": "1s"}}}`, "a.com", "domains"},
		{"domain repeated through an escape", `{"domains": {"a.com": {"min_delay": "1s"}, "a\u002ecom": {"min_delay": "2s"}}}`, "a.com", "domains"},
		{"field in a domain", `{"domains": {"a.com": {"min_delay": "1s", "jitter": "1s", "min_delay": "2s"}}}`, "a.com", "min_delay"},
		{"field in a domain, escaped", `{"domains": {"a.com": {"min_delay": "1s", "min\u005fdelay": "2s"}}}`, "a.com", "min_delay"},
		{"field in the default", `{"default_config": {"requests_per_second": 1, "burst_capacity": 1, "requests_per_second": 5}}`, "default_config", "requests_per_second"},
		{"field in a quota", `{"domains": {"a.com": {"min_delay": "1s", "quotas": [{"requests": 1, "window": "1h"}, {"requests": 2, "window": "1h", "requests": 3}]}}}`, "a.com", "quotas[1].requests"},
		{"key inside an unknown field", `{"domains": {"a.com": {"min_delay": "1s", "extra": {"x": 1, "x": 2}}}}`, "a.com", "extra.x"},
		{"key in an object in an array", `{"default_config": {"min_delay": "1s", "quotas": [[{"a": 1, "a": 1}]]}}`, "default_config", "quotas[0][0].a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := config.Parse([]byte(tt.in))
			require.Nil(t, f)
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe, "got %v", err)
			assert.Equal(t, tt.domain, fe.Domain)
			assert.Equal(t, tt.field, fe.Field)
			assert.Regexp(t, `^config: domain "`+tt.domain+`": `, err.Error())
			assert.Contains(t, err.Error(), "duplicate key")
		})
	}
}

// TestParseDuplicateTopLevelKeys checks that a top-level key given twice
// is an error naming it, like an unknown top-level key.
func TestParseDuplicateTopLevelKeys(t *testing.T) {
	for _, in := range []struct{ name, json, key string }{
		{"default_config", `{"default_config": {"min_delay": "1s"}, "default_config": {"min_delay": "2s"}}`, "default_config"},
		{"default_config null then set", `{"default_config": null, "default_config": {"min_delay": "2s"}}`, "default_config"},
		{"domains", `{"domains": {"a.com": {"min_delay": "1s"}}, "domains": {"b.com": {"min_delay": "1s"}}}`, "domains"},
		{"version", `{"version": "1.0", "version": "1.0"}`, "version"},
	} {
		t.Run(in.name, func(t *testing.T) {
			f, err := config.Parse([]byte(in.json))
			require.Nil(t, f)
			require.EqualError(t, err, "config: "+in.key+": duplicate key")
		})
	}
}

// TestParseSameKeyInDifferentObjects checks that only a key repeated in
// one object is an error, and that case-exact names are unchanged: a key
// that differs only in case is an unknown field, not a duplicate.
func TestParseSameKeyInDifferentObjects(t *testing.T) {
	f, err := config.Parse([]byte(`{
		"default_config": {"min_delay": "1s", "quotas": [{"requests": 1, "window": "1s"}, {"requests": 1, "window": "1s"}]},
		"domains": {"a.com": {"min_delay": "1s"}, "b.com": {"min_delay": "1s"}, "A.com": {"min_delay": "3s"}}
	}`))
	require.NoError(t, err)
	assert.Len(t, f.Domains, 3, "Example.com beside example.com is for the Transport to refuse, as before")

	_, err = config.Parse([]byte(`{"domains": {"a.com": {"min_delay": "1s", "Min_delay": "2s"}}}`))
	var fe *config.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Min_delay", fe.Field)
	assert.ErrorContains(t, err, "unknown field")
}

func TestLimitUnmarshalRejectsDuplicateKeys(t *testing.T) {
	var l config.Limit
	err := json.Unmarshal([]byte(`{"min_delay": "2s", "quotas": [{"requests": 3, "window": "10s", "window": "1s"}]}`), &l)
	require.ErrorContains(t, err, "quotas[0].window: duplicate key")
	assert.Equal(t, config.Limit{}, l, "left unchanged")
}
