package config_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

func TestParseFieldNamesAreCaseExact(t *testing.T) {
	tests := []struct {
		name, json, field string
	}{
		{"limit field", `{"domains": {"a.com": {"Requests_Per_Second": 1, "burst_capacity": 1}}}`, "Requests_Per_Second"},
		{"quota field", `{"domains": {"a.com": {"requests_per_second": 1, "burst_capacity": 1, "quotas": [{"Requests": 1, "window": "1s"}]}}}`, "quotas[0].Requests"},
		{"default field", `{"default_config": {"requests_per_second": 1, "BURST_capacity": 1}}`, "BURST_capacity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.json))
			var fe *config.FieldError
			require.True(t, errors.As(err, &fe), "got %v", err)
			assert.Equal(t, tt.field, fe.Field)
		})
	}
	_, err := config.Parse([]byte(`{"Domains": {}}`))
	require.ErrorContains(t, err, "Domains: unknown field")
}

func TestQuotaSizeIsCapped(t *testing.T) {
	l := config.Limit{RequestsPerSecond: 1, Burst: 1, Quotas: []config.Quota{{Requests: 1_000_000 + 1, Window: 1}}}
	var fe *config.FieldError
	require.True(t, errors.As(l.Validate("a.com"), &fe))
	assert.Equal(t, "quotas[0].requests", fe.Field)
	l.Quotas[0].Requests = 1_000_000
	assert.NoError(t, l.Validate("a.com"))
}
