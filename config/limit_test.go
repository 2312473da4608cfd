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

func TestLimitValidateAccepts(t *testing.T) {
	tests := []struct {
		name  string
		limit config.Limit
	}{
		{"default", config.Limit{RequestsPerSecond: 1, Burst: 1}},
		{"rate and burst", config.Limit{RequestsPerSecond: 2.5, Burst: 3}},
		{"min_delay alone", config.Limit{MinDelay: time.Second}},
		{"every rule", config.Limit{
			RequestsPerSecond: 1, Burst: 1, MinDelay: time.Second, Jitter: time.Second,
			MaxConcurrent: 2, Quotas: []config.Quota{{Requests: 30, Window: time.Hour}, {Requests: 100, Window: 24 * time.Hour}},
			Adaptive: true,
		}},
		{"disabled alone", config.Limit{Disabled: true}},
		{"disabled with a rate", config.Limit{Disabled: true, RequestsPerSecond: 1, Burst: 1}},
		{"tiny rate", config.Limit{RequestsPerSecond: 1e-9, Burst: 1}},
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
		{"zero rate and nothing else", config.Limit{}, "requests_per_second"},
		{"zero burst", with(func(l *config.Limit) { l.Burst = 0 }), "burst_capacity"},
		{"negative burst", with(func(l *config.Limit) { l.Burst = -3 }), "burst_capacity"},
		{"burst without rate", config.Limit{Burst: 2, MinDelay: time.Second}, "burst_capacity"},
		{"negative min_delay", with(func(l *config.Limit) { l.MinDelay = -time.Second }), "min_delay"},
		{"negative jitter", with(func(l *config.Limit) { l.Jitter = -time.Nanosecond }), "jitter"},
		{"negative max_concurrent", with(func(l *config.Limit) { l.MaxConcurrent = -1 }), "max_concurrent"},
		{"negative target_concurrency", with(func(l *config.Limit) { l.TargetConcurrency = -1 }), "target_concurrency"},
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
