package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

// FuzzParse checks that no input makes Parse panic, and that whatever it
// accepts is valid and survives a round trip through MarshalJSON.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"seed001.json", "all_rules.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(data)
	}
	for _, s := range []string{
		``, `{}`, `null`, `[]`, `{} {}`, `{"version": "1.0"}]`,
		`{"default_config": {"requests_per_second": 1e-320, "burst_capacity": 9223372036854775807}}`,
		`{"domains": {"": {"min_delay": "1s"}}}`,
		`{"domains": {"a.com": {"min_delay": "-0s", "jitter": "2562047h47m16.854775807s", "disabled": true}}}`,
		`{"domains": {"a.com": {"min_delay": "1s", "quotas": [{"requests": 1, "window": "1ns"}]}}}`,
		`{"Default_Config": {"Requests_Per_Second": 2, "BURST_CAPACITY": 2}}`,
		`{"domains": {"a.com": {"min_delay": "1s"}, "a.com": {"min_delay": "2s"}}}`,
		`{"default_config": {"min_delay": "1s"}, "default_config": null}`,
		`{"domains": {"a.com": {"min_delay": "1s", "quotas": [{"requests": 1, "window": "1s", "requests": 2}]}}}`,
		`{"domains": {"a.com": {"min_delay": "1s"}, "A.com": {"min_delay": "1s"}}}`,
		`{"domains": {"a.com": {"min_delay": "1s", "adaptive": true, "adaptive_start_delay": "5s", "adaptive_max_delay": "1m"}}}`,
		`{"domains": {"a.com": {"min_delay": "1s", "error_statuses": []}, "b.com": {"min_delay": "1s", "error_statuses": [0, 502, 1e3]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parsed, err := config.Parse(data)
		if err != nil {
			require.Nil(t, parsed)
			require.Regexp(t, `^config: `, err.Error())
			return
		}
		require.NoError(t, parsed.Validate())
		out, err := json.Marshal(parsed)
		require.NoError(t, err)
		back, err := config.Parse(out)
		require.NoError(t, err, "%s", out)
		require.Equal(t, parsed, back, "%s", out)
	})
}
