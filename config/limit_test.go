package config_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

// TestDefaultLimit checks the built-in default's pace, and that a caller
// who changes the limit it got does not change the next caller's.
func TestDefaultLimit(t *testing.T) {
	def := config.DefaultLimit()
	assert.Equal(t, config.Limit{RequestsPerSecond: 1, Burst: 1}, def)
	def.RequestsPerSecond, def.Quotas = 5, append(def.Quotas, config.Quota{Requests: 1, Window: time.Second})
	assert.Equal(t, config.Limit{RequestsPerSecond: 1, Burst: 1}, config.DefaultLimit())
}

func TestLimitValidateAccepts(t *testing.T) {
	tests := []struct {
		name  string
		limit config.Limit
	}{
		{"default", config.DefaultLimit()},
		{"rate and burst", config.Limit{RequestsPerSecond: 2.5, Burst: 3}},
		{"min_delay alone", config.Limit{MinDelay: time.Second}},
		{"every rule", config.Limit{
			RequestsPerSecond: 1, Burst: 1, MinDelay: time.Second, Jitter: time.Second,
			MaxConcurrent: 2, Quotas: []config.Quota{{Requests: 30, Window: time.Hour}, {Requests: 100, Window: 24 * time.Hour}},
			Adaptive: true,
		}},
		{"disabled alone", config.Limit{Disabled: true}},
		{"nothing: the default's pace", config.Limit{}},
		{"a rate without a burst", config.Limit{RequestsPerSecond: 2}},
		{"a cap alone", config.Limit{MaxConcurrent: 2}},
		{"a quota alone", config.Limit{Quotas: []config.Quota{{Requests: 100, Window: 24 * time.Hour}}}},
		{"adaptive alone", config.Limit{Adaptive: true}},
		{"a burst alone, for the default's rate", config.Limit{Burst: 3}},
		{"disabled with a rate", config.Limit{Disabled: true, RequestsPerSecond: 1, Burst: 1}},
		{"slowest rate", config.Limit{RequestsPerSecond: 1e-6, Burst: 1}},
		{"slowest rate, bucket refilled within the bound", config.Limit{RequestsPerSecond: 1e-6, Burst: 31}},
		{"longest min_delay and jitter", config.Limit{MinDelay: 24 * time.Hour, Jitter: 24 * time.Hour}},
		{"longest quota window", config.Limit{MinDelay: time.Second, Quotas: []config.Quota{{Requests: 1, Window: 366 * 24 * time.Hour}}}},
		{"adaptive start and maximum", config.Limit{MinDelay: time.Second, Adaptive: true, AdaptiveStartDelay: 5 * time.Second, AdaptiveMaxDelay: time.Minute}},
		{"adaptive start above the default maximum", config.Limit{MinDelay: time.Second, Adaptive: true, AdaptiveStartDelay: 2 * time.Minute}},
		{"longest adaptive delays", config.Limit{MinDelay: time.Second, AdaptiveStartDelay: 24 * time.Hour, AdaptiveMaxDelay: 24 * time.Hour}},
		{"error statuses", config.Limit{MinDelay: time.Second, ErrorStatuses: []int{0, 408, 500, 520, 599}}},
		{"no error statuses", config.Limit{MinDelay: time.Second, ErrorStatuses: []int{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NoError(t, tt.limit.Validate("example.com"))
		})
	}
}

func TestLimitValidateRejects(t *testing.T) {
	ok := config.Limit{RequestsPerSecond: 1, Burst: 1}
	with := func(change func(*config.Limit)) config.Limit {
		l := ok
		change(&l)
		return l
	}
	tests := []struct {
		name  string
		limit config.Limit
		field string
	}{
		{"negative rate", with(func(l *config.Limit) { l.RequestsPerSecond = -1 }), "requests_per_second"},
		{"NaN rate", with(func(l *config.Limit) { l.RequestsPerSecond = math.NaN() }), "requests_per_second"},
		{"infinite rate", with(func(l *config.Limit) { l.RequestsPerSecond = math.Inf(1) }), "requests_per_second"},
		{"negative burst", with(func(l *config.Limit) { l.Burst = -3 }), "burst_capacity"},
		{"burst without rate", config.Limit{Burst: 2, MinDelay: time.Second}, "burst_capacity"},
		{"negative min_delay", with(func(l *config.Limit) { l.MinDelay = -time.Second }), "min_delay"},
		{"negative jitter", with(func(l *config.Limit) { l.Jitter = -time.Nanosecond }), "jitter"},
		{"negative max_concurrent", with(func(l *config.Limit) { l.MaxConcurrent = -1 }), "max_concurrent"},
		{"negative target_concurrency", with(func(l *config.Limit) { l.TargetConcurrency = -1 }), "target_concurrency"},
		{"negative adaptive_start_delay", with(func(l *config.Limit) { l.AdaptiveStartDelay = -time.Second }), "adaptive_start_delay"},
		{"adaptive_start_delay over a day", with(func(l *config.Limit) { l.AdaptiveStartDelay = 25 * time.Hour }), "adaptive_start_delay"},
		{"negative adaptive_max_delay", with(func(l *config.Limit) { l.AdaptiveMaxDelay = -time.Second }), "adaptive_max_delay"},
		{"adaptive_max_delay over a day", with(func(l *config.Limit) { l.AdaptiveMaxDelay = 25 * time.Hour }), "adaptive_max_delay"},
		{"adaptive start above its maximum", with(func(l *config.Limit) { l.AdaptiveStartDelay, l.AdaptiveMaxDelay = time.Minute, time.Second }), "adaptive_start_delay"},
		{"a success among error statuses", with(func(l *config.Limit) { l.ErrorStatuses = []int{502, 200} }), "error_statuses[1]"},
		{"a redirect among error statuses", with(func(l *config.Limit) { l.ErrorStatuses = []int{301} }), "error_statuses[0]"},
		{"no such status", with(func(l *config.Limit) { l.ErrorStatuses = []int{500, 600} }), "error_statuses[1]"},
		{"negative status", with(func(l *config.Limit) { l.ErrorStatuses = []int{-1} }), "error_statuses[0]"},
		{"quota of zero requests", with(func(l *config.Limit) {
			l.Quotas = []config.Quota{{Requests: 0, Window: time.Hour}}
		}), "quotas[0].requests"},
		{"quota of zero window", with(func(l *config.Limit) {
			l.Quotas = []config.Quota{{Requests: 30, Window: time.Hour}, {Requests: 1, Window: 0}}
		}), "quotas[1].window"},
		{"quota of negative window", with(func(l *config.Limit) {
			l.Quotas = []config.Quota{{Requests: 1, Window: -time.Second}}
		}), "quotas[0].window"},
		{"min_delay alone but negative", config.Limit{MinDelay: -time.Second}, "min_delay"},
		{"disabled does not excuse a bad field", config.Limit{Disabled: true, MaxConcurrent: -2}, "max_concurrent"},
		// Absurd values: waits that overflow, keys that never expire.
		{"rate below one per 11.6 days", with(func(l *config.Limit) { l.RequestsPerSecond = 9.9e-7 }), "requests_per_second"},
		{"rate of 1e-10", with(func(l *config.Limit) { l.RequestsPerSecond = 1e-10 }), "requests_per_second"},
		{"rate of 1e-300", with(func(l *config.Limit) { l.RequestsPerSecond = 1e-300 }), "requests_per_second"},
		{"bucket refilling in more than 366 days", with(func(l *config.Limit) { l.RequestsPerSecond, l.Burst = 1e-6, 32 }), "burst_capacity"},
		{"min_delay over a day", with(func(l *config.Limit) { l.MinDelay = 24*time.Hour + time.Nanosecond }), "min_delay"},
		{"jitter over a day", with(func(l *config.Limit) { l.Jitter = 25 * time.Hour }), "jitter"},
		{"quota window over 366 days", with(func(l *config.Limit) {
			l.Quotas = []config.Quota{{Requests: 1, Window: 367 * 24 * time.Hour}}
		}), "quotas[0].window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.limit.Validate("example.com")
			var fe *config.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "example.com", fe.Domain)
			assert.Equal(t, tt.field, fe.Field)
			assert.Error(t, fe.Err)
			assert.Contains(t, err.Error(), `"example.com"`)
			assert.Contains(t, err.Error(), tt.field)
			assert.Regexp(t, `^config: `, err.Error())
		})
	}
}

func TestFieldErrorUnwraps(t *testing.T) {
	cause := errors.New("cause")
	err := error(&config.FieldError{Domain: "a.com", Field: "jitter", Err: cause})
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, `config: domain "a.com": jitter: cause`, err.Error())
}

func TestLimitValidateNamesTheBound(t *testing.T) {
	tests := []struct {
		limit config.Limit
		want  string
	}{
		{config.Limit{RequestsPerSecond: 1e-10, Burst: 1}, `config: domain "a.com": requests_per_second: must be at least 1e-06 (one request per 277h46m40s), got 1e-10`},
		{config.Limit{RequestsPerSecond: 0.001, Burst: 40000}, `config: domain "a.com": burst_capacity: 40000 refills in more than 8784h0m0s at requests_per_second 0.001`},
		{config.Limit{MinDelay: 48 * time.Hour}, `config: domain "a.com": min_delay: must be at most 24h0m0s, got 48h0m0s`},
		{config.Limit{MinDelay: time.Second, Quotas: []config.Quota{{Requests: 1, Window: 10000 * time.Hour}}}, `config: domain "a.com": quotas[0].window: must be at most 8784h0m0s, got 10000h0m0s`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.EqualError(t, tt.limit.Validate("a.com"), tt.want)
		})
	}
}

func TestLimitInherit(t *testing.T) {
	def := config.Limit{RequestsPerSecond: 5, Burst: 3, MinDelay: time.Second, Jitter: time.Second, MaxConcurrent: 4}
	tests := []struct {
		name        string
		limit, want config.Limit
	}{
		{"the zero limit is the default's pace", config.Limit{}, config.Limit{RequestsPerSecond: 5, Burst: 3, MinDelay: time.Second}},
		{"a cap at the default's pace", config.Limit{MaxConcurrent: 2}, config.Limit{RequestsPerSecond: 5, Burst: 3, MinDelay: time.Second, MaxConcurrent: 2}},
		{"a burst of its own", config.Limit{Burst: 7}, config.Limit{RequestsPerSecond: 5, Burst: 7, MinDelay: time.Second}},
		{"a rate without a burst has burst 1", config.Limit{RequestsPerSecond: 2}, config.Limit{RequestsPerSecond: 2, Burst: 1}},
		{"a min delay of its own", config.Limit{MinDelay: 2 * time.Second}, config.Limit{MinDelay: 2 * time.Second}},
		{"disabled", config.Limit{Disabled: true}, config.Limit{Disabled: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.limit.Inherit(def))
		})
	}
}

func TestLimitJSONSignalFields(t *testing.T) {
	tests := []struct {
		name, json string
		want       config.Limit
	}{
		{"adaptive delays", `{"min_delay": "1s", "adaptive": true, "adaptive_start_delay": "5s", "adaptive_max_delay": "2m"}`,
			config.Limit{MinDelay: time.Second, Adaptive: true, AdaptiveStartDelay: 5 * time.Second, AdaptiveMaxDelay: 2 * time.Minute}},
		{"error statuses", `{"min_delay": "1s", "error_statuses": [502, 0]}`, config.Limit{MinDelay: time.Second, ErrorStatuses: []int{502, 0}}},
		{"no error statuses", `{"min_delay": "1s", "error_statuses": []}`, config.Limit{MinDelay: time.Second, ErrorStatuses: []int{}}},
		{"error statuses left out", `{"min_delay": "1s"}`, config.Limit{MinDelay: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got config.Limit
			require.NoError(t, got.UnmarshalJSON([]byte(tt.json)))
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want.ErrorStatuses == nil, got.ErrorStatuses == nil, "[] and absent stay apart")
			out, err := got.MarshalJSON()
			require.NoError(t, err)
			var again config.Limit
			require.NoError(t, again.UnmarshalJSON(out), "%s", out)
			assert.Equal(t, got, again, "round trip through %s", out)
		})
	}
	var l config.Limit
	err := l.UnmarshalJSON([]byte(`{"adaptive_max_delay": "a minute"}`))
	assert.ErrorContains(t, err, "adaptive_max_delay")
}
