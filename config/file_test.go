package config_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

func TestLoadSeedExample(t *testing.T) {
	f, err := config.Load(filepath.Join("testdata", "seed001.json"))
	require.NoError(t, err)
	assert.Equal(t, &config.File{
		Version: "1.0",
		Default: config.Limit{RequestsPerSecond: 1, Burst: 1},
		Domains: map[string]config.Limit{
			"javdb.com":   {RequestsPerSecond: 1, Burst: 1},
			"av-wiki.net": {RequestsPerSecond: 2, Burst: 2},
			"chiba-f.com": {RequestsPerSecond: 1, Burst: 1},
		},
	}, f)
}

func TestLoadEveryRule(t *testing.T) {
	f, err := config.Load(filepath.Join("testdata", "all_rules.json"))
	require.NoError(t, err)
	assert.Equal(t, config.Limit{RequestsPerSecond: 0.5, Burst: 2, Jitter: 250 * time.Millisecond}, f.Default)
	assert.Equal(t, config.Limit{
		RequestsPerSecond: 2,
		Burst:             4,
		MinDelay:          1500 * time.Millisecond,
		Jitter:            500 * time.Millisecond,
		MaxConcurrent:     3,
		Quotas:            []config.Quota{{Requests: 30, Window: time.Hour}, {Requests: 100, Window: 24 * time.Hour}},
		Adaptive:          true,
	}, f.Domains["example.com"])
	// What a domain leaves out, it takes from default_config.
	assert.Equal(t, config.Limit{RequestsPerSecond: 0.5, Burst: 2, MinDelay: 10 * time.Second, Jitter: 250 * time.Millisecond}, f.Domains["slow.example.org"])
	assert.Equal(t, config.Limit{RequestsPerSecond: 0.5, Burst: 2, Jitter: 250 * time.Millisecond, Disabled: true}, f.Domains["localhost"])
}

func TestLoadMissingFileNamesPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.json")
	_, err := config.Load(path)
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), path)
}

func TestLoadInvalidFileNamesPathAndField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"domains": {"a.com": {"requests_per_second": -1, "burst_capacity": 1}}}`), 0o600))
	_, err := config.Load(path)
	var fe *config.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "a.com", fe.Domain)
	assert.Equal(t, "requests_per_second", fe.Field)
	assert.Contains(t, err.Error(), path)
}

func TestParseDefaultAbsent(t *testing.T) {
	for _, in := range []string{`{}`, `{"version": "1.0"}`, `{"default_config": null}`, `{"domains": {"a.com": {"min_delay": "1s"}}}`} {
		t.Run(in, func(t *testing.T) {
			f, err := config.Parse([]byte(in))
			require.NoError(t, err)
			assert.Equal(t, config.Limit{RequestsPerSecond: 1, Burst: 1}, f.Default)
		})
	}
}

// TestParseFieldErrors checks that every bad limit in a file is a
// *FieldError naming the domain and the JSON field.
func TestParseFieldErrors(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		domain string
		field  string
	}{
		{"negative rate", `{"domains": {"a.com": {"requests_per_second": -2, "burst_capacity": 1}}}`, "a.com", "requests_per_second"},
		{"negative burst", `{"domains": {"a.com": {"requests_per_second": 1, "burst_capacity": -1}}}`, "a.com", "burst_capacity"},
		{"burst without rate", `{"domains": {"a.com": {"requests_per_second": 0, "burst_capacity": 2, "min_delay": "1s"}}}`, "a.com", "burst_capacity"},
		{"inherited burst too large for the rate", `{"default_config": {"burst_capacity": 100}, "domains": {"a.com": {"requests_per_second": 1e-6}}}`, "a.com", "burst_capacity"},
		{"negative min_delay", `{"domains": {"a.com": {"min_delay": "-1s"}}}`, "a.com", "min_delay"},
		{"negative jitter", `{"domains": {"a.com": {"min_delay": "1s", "jitter": "-5ms"}}}`, "a.com", "jitter"},
		{"negative max_concurrent", `{"domains": {"a.com": {"min_delay": "1s", "max_concurrent": -1}}}`, "a.com", "max_concurrent"},
		{"quota requests", `{"domains": {"a.com": {"min_delay": "1s", "quotas": [{"requests": 0, "window": "1h"}]}}}`, "a.com", "quotas[0].requests"},
		{"quota window zero", `{"domains": {"a.com": {"min_delay": "1s", "quotas": [{"requests": 5, "window": "1h"}, {"requests": 5, "window": "0s"}]}}}`, "a.com", "quotas[1].window"},
		{"quota window missing", `{"domains": {"a.com": {"min_delay": "1s", "quotas": [{"requests": 5}]}}}`, "a.com", "quotas[0].window"},
		{"quota window negative", `{"domains": {"a.com": {"min_delay": "1s", "quotas": [{"requests": 5, "window": "-1h"}]}}}`, "a.com", "quotas[0].window"},
		{"bad default", `{"default_config": {"requests_per_second": 1, "burst_capacity": -1}}`, "default_config", "burst_capacity"},
		{"empty domain", `{"domains": {"": {"requests_per_second": 1, "burst_capacity": 1}}}`, "", "domains"},
		{"unknown field", `{"domains": {"a.com": {"requests_per_second": 1, "burst_capacity": 1, "burst": 2}}}`, "a.com", "burst"},
		{"unknown field in default", `{"default_config": {"rps": 1}}`, "default_config", "rps"},
		{"string for a number", `{"domains": {"a.com": {"requests_per_second": 1, "burst_capacity": "2"}}}`, "a.com", "burst_capacity"},
		{"fraction for an integer", `{"domains": {"a.com": {"requests_per_second": 1, "burst_capacity": 1.5}}}`, "a.com", "burst_capacity"},
		{"string for a rate", `{"domains": {"a.com": {"requests_per_second": "1", "burst_capacity": 1}}}`, "a.com", "requests_per_second"},
		{"number for a duration", `{"domains": {"a.com": {"min_delay": 1000}}}`, "a.com", "min_delay"},
		{"number for a bool", `{"domains": {"a.com": {"disabled": 1}}}`, "a.com", "disabled"},
		{"bad duration", `{"domains": {"a.com": {"min_delay": "1 second"}}}`, "a.com", "min_delay"},
		{"duration without unit", `{"domains": {"a.com": {"jitter": "100", "min_delay": "1s"}}}`, "a.com", "jitter"},
		{"bad quota window", `{"domains": {"a.com": {"min_delay": "1s", "quotas": [{"requests": 1, "window": "1d"}]}}}`, "a.com", "quotas[0].window"},
		{"object for quotas", `{"domains": {"a.com": {"min_delay": "1s", "quotas": {"requests": 1}}}}`, "a.com", "quotas"},
		{"rate out of range", `{"domains": {"a.com": {"requests_per_second": 1e400, "burst_capacity": 1}}}`, "a.com", "requests_per_second"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.in))
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe, "got %v", err)
			assert.Equal(t, tt.domain, fe.Domain)
			assert.Equal(t, tt.field, fe.Field)
			assert.Contains(t, err.Error(), tt.field)
			assert.Regexp(t, `^config: `, err.Error())
			assert.NotContains(t, err.Error(), "limitJSON", "internal type names leak into the message")
		})
	}
}

func TestParseEmptyDomainIsAnError(t *testing.T) {
	_, err := config.Parse([]byte(`{"domains": {"": {"min_delay": "1s"}}}`))
	assert.ErrorContains(t, err, "domain name is empty")
}

func TestParseReportsDomainsInOrder(t *testing.T) {
	in := `{"domains": {"b.com": {"burst_capacity": 1}, "a.com": {"jitter": "-1s"}}}`
	for range 20 {
		_, err := config.Parse([]byte(in))
		var fe *config.FieldError
		require.ErrorAs(t, err, &fe)
		require.Equal(t, "a.com", fe.Domain)
	}
}

// TestParseSyntaxErrors covers input that is not one JSON object of the
// file format.
func TestParseSyntaxErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "empty"},
		{"blank", " \n\t", "empty"},
		{"not JSON", `version: 1`, "config: line 1, column 1: invalid character"},
		{"truncated", "{\n  \"version\": \"1.0\"", "config: line 2, column 19: unexpected EOF"},
		{"bad value on line 3", "{\n  \"default_config\": {\n    \"burst_capacity\": x\n  }\n}", "config: line 3, column 23: invalid character 'x'"},
		{"array", `[]`, "want object"},
		{"string", `"x"`, "want object"},
		{"unknown top-level field", `{"version": "1.0", "default": {}}`, "default"},
		{"wrong top-level type", `{"version": 1}`, "version"},
		{"domains as an array", `{"domains": []}`, "domains"},
		{"limit as a number", `{"domains": {"a.com": 5}}`, "want object"},
		{"second object", `{} {}`, "after the JSON object"},
		{"trailing bracket", `{"version": "1.0"}]`, "after the JSON object"},
		{"trailing brace", `{"version": "1.0"}}`, "after the JSON object"},
		{"trailing word", `{"version": "1.0"} x`, "after the JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := config.Parse([]byte(tt.in))
			require.Error(t, err)
			assert.Nil(t, f)
			assert.Contains(t, err.Error(), tt.want)
			assert.Regexp(t, `^config: `, err.Error())
		})
	}
}

func TestParseAllowsTrailingSpace(t *testing.T) {
	_, err := config.Parse([]byte("{\"version\": \"1.0\"}\n\n"))
	assert.NoError(t, err)
}

func TestFileRoundTrip(t *testing.T) {
	files := []*config.File{
		{Default: config.Limit{RequestsPerSecond: 1, Burst: 1}},
		{Version: "1.0", Default: config.Limit{MinDelay: 3 * time.Second}},
		{
			Version: "1.0",
			Default: config.Limit{RequestsPerSecond: 1.0 / 3, Burst: 2, Jitter: 1500 * time.Microsecond},
			Domains: map[string]config.Limit{
				"example.com": {
					RequestsPerSecond: 12.5, Burst: 7, MinDelay: time.Second + 1, Jitter: 2 * time.Millisecond,
					MaxConcurrent: 4, Quotas: []config.Quota{{Requests: 30, Window: time.Hour}, {Requests: 100, Window: 24 * time.Hour}},
					Adaptive: true, TargetConcurrency: 2.5,
				},
				"localhost":         {Disabled: true},
				"xn--mnchen-3ya.de": {MinDelay: 24 * time.Hour},
			},
		},
	}
	for _, f := range files {
		data, err := json.Marshal(f)
		require.NoError(t, err)
		back, err := config.Parse(data)
		require.NoError(t, err, "%s", data)
		assert.Equal(t, f, back, "%s", data)
	}
}

func TestFileMarshalNames(t *testing.T) {
	data, err := json.Marshal(config.File{
		Version: "1.0",
		Default: config.Limit{RequestsPerSecond: 1, Burst: 1},
		Domains: map[string]config.Limit{"a.com": {
			RequestsPerSecond: 2, Burst: 3, MinDelay: 1500 * time.Millisecond, Jitter: time.Second,
			MaxConcurrent: 1, Quotas: []config.Quota{{Requests: 30, Window: time.Hour}}, Disabled: true, Adaptive: true,
		}},
	})
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"version": "1.0",
		"default_config": {"requests_per_second": 1, "burst_capacity": 1, "min_delay": "0s", "jitter": "0s",
			"max_concurrent": 0, "quotas": [], "disabled": false, "adaptive": false, "target_concurrency": 0,
			"adaptive_start_delay": "0s", "adaptive_max_delay": "0s", "error_statuses": null},
		"domains": {"a.com": {
			"requests_per_second": 2, "burst_capacity": 3, "min_delay": "1.5s", "jitter": "1s",
			"max_concurrent": 1, "quotas": [{"requests": 30, "window": "1h0m0s"}], "disabled": true, "adaptive": true,
			"target_concurrency": 0, "adaptive_start_delay": "0s", "adaptive_max_delay": "0s", "error_statuses": null
		}}
	}`, string(data))
}

func TestLimitUnmarshalIsStrict(t *testing.T) {
	var l config.Limit
	require.NoError(t, json.Unmarshal([]byte(`{"min_delay": "2s", "quotas": [{"requests": 3, "window": "10s"}]}`), &l))
	assert.Equal(t, config.Limit{MinDelay: 2 * time.Second, Quotas: []config.Quota{{Requests: 3, Window: 10 * time.Second}}}, l)
	assert.Error(t, json.Unmarshal([]byte(`{"min_delay": "2s", "extra": 1}`), &l))
}

func TestParseScopes(t *testing.T) {
	f, err := config.Parse([]byte(`{
		"domains": {"*.blogspot.com": {"min_delay": "2s"}},
		"server_config": {"requests_per_second": 4, "burst_capacity": 2},
		"global_config": {"requests_per_second": 20, "burst_capacity": 20, "max_concurrent": 8}
	}`))
	require.NoError(t, err)
	assert.Equal(t, config.Limit{RequestsPerSecond: 1, Burst: 1, MinDelay: 2 * time.Second}, f.Domains["*.blogspot.com"])
	assert.Equal(t, &config.Limit{RequestsPerSecond: 4, Burst: 2}, f.Server)
	assert.Equal(t, &config.Limit{RequestsPerSecond: 20, Burst: 20, MaxConcurrent: 8}, f.Global)

	again, err := json.Marshal(f)
	require.NoError(t, err)
	back, err := config.Parse(again)
	require.NoError(t, err)
	assert.Equal(t, f, back)

	f, err = config.Parse([]byte(`{"default_config": {"requests_per_second": 5}, "global_config": {"max_concurrent": 8}}`))
	require.NoError(t, err)
	assert.Equal(t, &config.Limit{MaxConcurrent: 8}, f.Global, "a scope takes nothing from the default")

	f, err = config.Parse([]byte(`{"server_config": null}`))
	require.NoError(t, err)
	assert.Nil(t, f.Server)
	assert.Nil(t, f.Global)
}

func TestParseScopeErrorsNameTheScope(t *testing.T) {
	tests := []struct{ in, domain, field string }{
		{`{"server_config": {"requests_per_second": -1, "burst_capacity": 1}}`, "server_config", "requests_per_second"},
		{`{"global_config": {"min_delay": "soon"}}`, "global_config", "min_delay"},
		{`{"global_config": {"min_delay": "1s", "min_delay": "2s"}}`, "global_config", "min_delay"},
		{`{"domains": {"*example.com": {"min_delay": "1s"}}}`, "*example.com", "domains"},
		{`{"domains": {"*.": {"min_delay": "1s"}}}`, "*.", "domains"},
		{`{"domains": {"*.*.example.com": {"min_delay": "1s"}}}`, "*.*.example.com", "domains"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.in))
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.domain, fe.Domain)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
}

// TestParseInherits checks that a field a limit leaves out comes from
// default_config, and one default_config leaves out from the built-in
// default, so that a limit of one field means what it says.
func TestParseInherits(t *testing.T) {
	quota := []config.Quota{{Requests: 100, Window: 24 * time.Hour}}
	tests := []struct {
		name, def, domain string
		want              config.Limit
	}{
		{"a rate alone has burst 1", ``, `{"requests_per_second": 2}`, config.Limit{RequestsPerSecond: 2, Burst: 1}},
		{"a cap alone", ``, `{"max_concurrent": 2}`, config.Limit{RequestsPerSecond: 1, Burst: 1, MaxConcurrent: 2}},
		{"a quota alone", ``, `{"quotas": [{"requests": 100, "window": "24h"}]}`, config.Limit{RequestsPerSecond: 1, Burst: 1, Quotas: quota}},
		{"adaptive alone", ``, `{"adaptive": true}`, config.Limit{RequestsPerSecond: 1, Burst: 1, Adaptive: true}},
		{"empty", ``, `{}`, config.Limit{RequestsPerSecond: 1, Burst: 1}},
		{"the default's fields", `{"requests_per_second": 5, "burst_capacity": 3, "jitter": "1s", "max_concurrent": 4}`, `{"max_concurrent": 2}`,
			config.Limit{RequestsPerSecond: 5, Burst: 3, Jitter: time.Second, MaxConcurrent: 2}},
		{"a min_delay beside the default's bucket", `{"requests_per_second": 5, "burst_capacity": 3}`, `{"min_delay": "2s"}`,
			config.Limit{RequestsPerSecond: 5, Burst: 3, MinDelay: 2 * time.Second}},
		{"a min_delay with no bucket", `{"requests_per_second": 5, "burst_capacity": 3}`, `{"requests_per_second": 0, "min_delay": "2s"}`,
			config.Limit{MinDelay: 2 * time.Second}},
		{"a rate keeps the default's burst", `{"requests_per_second": 5, "burst_capacity": 3}`, `{"requests_per_second": 2}`,
			config.Limit{RequestsPerSecond: 2, Burst: 3}},
		{"a default of min_delay alone keeps the built-in bucket", `{"min_delay": "3s"}`, `{"max_concurrent": 1}`,
			config.Limit{RequestsPerSecond: 1, Burst: 1, MinDelay: 3 * time.Second, MaxConcurrent: 1}},
		{"the default's error statuses, none", `{"error_statuses": []}`, `{"max_concurrent": 1}`,
			config.Limit{RequestsPerSecond: 1, Burst: 1, MaxConcurrent: 1, ErrorStatuses: []int{}}},
		{"disabled keeps false from the default", `{"disabled": true}`, `{"disabled": false, "min_delay": "1s"}`,
			config.Limit{RequestsPerSecond: 1, Burst: 1, MinDelay: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := `{"domains": {"a.com": ` + tt.domain + `}}`
			if tt.def != "" {
				in = `{"default_config": ` + tt.def + `, "domains": {"a.com": ` + tt.domain + `}}`
			}
			f, err := config.Parse([]byte(in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, f.Domains["a.com"])
		})
	}
}
