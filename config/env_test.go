package config

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env is a set of environment variables, read as os.LookupEnv reads them.
type env map[string]string

func (e env) lookup(name string) (string, bool) {
	v, ok := e[name]
	return v, ok
}

func TestLimitFromEnvVariables(t *testing.T) {
	base := Limit{RequestsPerSecond: 1, Burst: 1, MaxConcurrent: 4, Quotas: []Quota{{Requests: 100, Window: time.Hour}}}
	tests := []struct {
		name    string
		prefix  string
		env     env
		want    Limit
		wantVar string // the variable the error names
		wantErr string // the whole message, when LimitFromLookup writes it all
		wantPre string // how the message starts, when Validate says why
	}{
		{name: "seed 004", prefix: "APP", env: env{"APP_RATE_LIMIT": "3", "APP_RATE_BURST": "5"},
			want: Limit{RequestsPerSecond: 3, Burst: 5, MaxConcurrent: 4, Quotas: base.Quotas}},
		{name: "nothing set keeps base", prefix: "APP", env: env{"OTHER_RATE_LIMIT": "9"}, want: base},
		{name: "empty is unset", prefix: "APP", env: env{"APP_RATE_LIMIT": "", "APP_MIN_DELAY": "  "}, want: base},
		{name: "every variable", prefix: "CRAWLER_", env: env{"CRAWLER_RATE_LIMIT": " 0.5 ", "CRAWLER_RATE_BURST": "2",
			"CRAWLER_MIN_DELAY": "1.5s", "CRAWLER_JITTER": "250ms", "CRAWLER_MAX_CONCURRENT": "0"},
			want: Limit{RequestsPerSecond: 0.5, Burst: 2, MinDelay: 1500 * time.Millisecond, Jitter: 250 * time.Millisecond, Quotas: base.Quotas}},
		{name: "no prefix", prefix: "", env: env{"RATE_LIMIT": "7", "RATE_BURST": "7"},
			want: Limit{RequestsPerSecond: 7, Burst: 7, MaxConcurrent: 4, Quotas: base.Quotas}},
		{name: "rate off leaves the default's pace", prefix: "APP", env: env{"APP_RATE_LIMIT": "0", "APP_RATE_BURST": "0"},
			want: Limit{MaxConcurrent: 4, Quotas: base.Quotas}},
		{name: "min delay alone", prefix: "APP", env: env{"APP_RATE_LIMIT": "0", "APP_RATE_BURST": "0", "APP_MIN_DELAY": "2s"},
			want: Limit{MinDelay: 2 * time.Second, MaxConcurrent: 4, Quotas: base.Quotas}},

		{name: "rate not a number", prefix: "APP", env: env{"APP_RATE_LIMIT": "fast"},
			wantVar: "APP_RATE_LIMIT", wantErr: `config: APP_RATE_LIMIT="fast": not a number such as 3 or 0.5`},
		{name: "rate infinite", prefix: "APP", env: env{"APP_RATE_LIMIT": "+Inf"}, wantVar: "APP_RATE_LIMIT"},
		{name: "rate NaN", prefix: "APP", env: env{"APP_RATE_LIMIT": "NaN"}, wantVar: "APP_RATE_LIMIT"},
		{name: "rate negative", prefix: "APP", env: env{"APP_RATE_LIMIT": "-1"},
			wantVar: "APP_RATE_LIMIT", wantPre: `config: APP_RATE_LIMIT="-1": `},
		{name: "burst not whole", prefix: "APP", env: env{"APP_RATE_BURST": "2.5"},
			wantVar: "APP_RATE_BURST", wantErr: `config: APP_RATE_BURST="2.5": not a whole number such as 5`},
		{name: "burst negative", prefix: "APP", env: env{"APP_RATE_BURST": "-1"},
			wantVar: "APP_RATE_BURST", wantPre: `config: APP_RATE_BURST="-1": `},
		{name: "delay without unit", prefix: "APP", env: env{"APP_MIN_DELAY": "2"},
			wantVar: "APP_MIN_DELAY", wantErr: `config: APP_MIN_DELAY="2": not a duration such as "250ms" or "1.5s"`},
		{name: "jitter negative", prefix: "APP", env: env{"APP_JITTER": "-1s"}, wantVar: "APP_JITTER"},
		{name: "max concurrent negative", prefix: "APP", env: env{"APP_MAX_CONCURRENT": "-3"}, wantVar: "APP_MAX_CONCURRENT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := limitFromLookup(tt.prefix, base, tt.env.lookup)
			if tt.wantVar == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "config: "+tt.wantVar), err.Error())
			assert.Zero(t, got)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
			}
			assert.True(t, strings.HasPrefix(err.Error(), tt.wantPre), err.Error())
		})
	}
}

func TestLimitFromEnvNamesUnsetVariable(t *testing.T) {
	_, err := limitFromLookup("APP", Limit{RequestsPerSecond: 1, Burst: -1}, env{}.lookup)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "config: APP_RATE_BURST (not set): "), err.Error())
}

func TestLimitFromEnvKeepsQuotaErrors(t *testing.T) {
	base := Limit{RequestsPerSecond: 1, Burst: 1, Quotas: []Quota{{Requests: 0, Window: time.Hour}}}
	_, err := limitFromLookup("APP", base, env{}.lookup)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "quotas[0].requests", fe.Field)
}

func TestLimitFromEnv(t *testing.T) {
	t.Setenv("POLITE_TEST_RATE_LIMIT", "3")
	t.Setenv("POLITE_TEST_RATE_BURST", "5")
	got, err := LimitFromEnv("POLITE_TEST", DefaultLimit())
	require.NoError(t, err)
	assert.Equal(t, Limit{RequestsPerSecond: 3, Burst: 5}, got)
}

func FuzzLimitFromEnv(f *testing.F) {
	f.Add("3", "5", "", "", "")
	f.Add("0.5", "1", "1.5s", "250ms", "2")
	f.Add("NaN", "-1", "2", "-1s", "x")
	f.Add("1e309", "99999999999999999999", "9999999h", "", "0")
	f.Fuzz(func(t *testing.T, rate, burst, minDelay, jitter, maxConcurrent string) {
		vars := env{"F_RATE_LIMIT": rate, "F_RATE_BURST": burst, "F_MIN_DELAY": minDelay, "F_JITTER": jitter, "F_MAX_CONCURRENT": maxConcurrent}
		got, err := limitFromLookup("F", DefaultLimit(), vars.lookup)
		if err != nil {
			field, _, _ := strings.Cut(strings.TrimPrefix(err.Error(), "config: "), ":")
			name, _, _ := strings.Cut(strings.TrimSuffix(field, " (not set)"), "=")
			if _, ok := vars[name]; !ok {
				t.Fatalf("error %v names no variable", err)
			}
			return
		}
		if err := got.Validate("fuzz"); err != nil {
			t.Fatalf("LimitFromLookup returned an invalid limit %+v: %v", got, err)
		}
	})
}

func ExampleLimitFromEnv() {
	os.Setenv("EXAMPLE_RATE_LIMIT", "3")
	os.Setenv("EXAMPLE_RATE_BURST", "5")
	l, err := LimitFromEnv("EXAMPLE", Limit{RequestsPerSecond: 1, Burst: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.RequestsPerSecond, l.Burst)

	os.Setenv("EXAMPLE_RATE_BURST", "lots")
	_, err = LimitFromEnv("EXAMPLE", Limit{RequestsPerSecond: 1, Burst: 1})
	fmt.Println(err)
	// Output:
	// 3 5
	// config: EXAMPLE_RATE_BURST="lots": not a whole number such as 5
}
