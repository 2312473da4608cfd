package polite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite"
	"github.com/polite-go/polite/config"
)

// TestPartialLimitsInherit checks that a limit which leaves its pace out
// takes the default's, and that a rate without a burst has burst 1.
func TestPartialLimitsInherit(t *testing.T) {
	quota := []config.Quota{{Requests: 100, Window: 24 * time.Hour}}
	tests := []struct {
		name     string
		def      *config.Limit // nil: no WithDefault
		limit    config.Limit
		want     config.Limit
		wantDefl config.Limit
	}{
		{"a rate alone", nil, config.Limit{RequestsPerSecond: 2}, config.Limit{RequestsPerSecond: 2, Burst: 1}, config.Limit{RequestsPerSecond: 1, Burst: 1}},
		{"a cap alone", nil, config.Limit{MaxConcurrent: 2}, config.Limit{RequestsPerSecond: 1, Burst: 1, MaxConcurrent: 2}, config.Limit{RequestsPerSecond: 1, Burst: 1}},
		{"a quota alone", nil, config.Limit{Quotas: quota}, config.Limit{RequestsPerSecond: 1, Burst: 1, Quotas: quota}, config.Limit{RequestsPerSecond: 1, Burst: 1}},
		{"adaptive alone", nil, config.Limit{Adaptive: true}, config.Limit{RequestsPerSecond: 1, Burst: 1, Adaptive: true}, config.Limit{RequestsPerSecond: 1, Burst: 1}},
		{"the zero default is the built-in one", &config.Limit{}, config.Limit{MaxConcurrent: 1},
			config.Limit{RequestsPerSecond: 1, Burst: 1, MaxConcurrent: 1}, config.Limit{RequestsPerSecond: 1, Burst: 1}},
		{"a cap under a default of min delay", &config.Limit{MinDelay: time.Second}, config.Limit{MaxConcurrent: 3},
			config.Limit{MinDelay: time.Second, MaxConcurrent: 3}, config.Limit{MinDelay: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := []polite.Option{polite.WithDomain("example.com", tt.limit)}
			if tt.def != nil {
				opts = append(opts, polite.WithDefault(*tt.def))
			}
			tr, err := polite.NewTransport(nil, opts...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, tr.Limit("example.com"))
			assert.Equal(t, tt.wantDefl, tr.Limit("other.org"))
		})
	}
}

// TestPartialLimitsFromJSON checks a file whose domains give one field
// each, through WithConfig.
func TestPartialLimitsFromJSON(t *testing.T) {
	f, err := config.Parse([]byte(`{
		"default_config": {"requests_per_second": 2},
		"domains": {
			"cap.com": {"max_concurrent": 2},
			"quota.com": {"quotas": [{"requests": 100, "window": "24h"}]},
			"adaptive.com": {"adaptive": true}
		}
	}`))
	require.NoError(t, err)
	tr, err := polite.NewTransport(nil, polite.WithConfig(f))
	require.NoError(t, err)
	pace := config.Limit{RequestsPerSecond: 2, Burst: 1}
	assert.Equal(t, pace, tr.Limit("other.org"))
	withCap := pace
	withCap.MaxConcurrent = 2
	assert.Equal(t, withCap, tr.Limit("www.cap.com"))
	withQuota := pace
	withQuota.Quotas = []config.Quota{{Requests: 100, Window: 24 * time.Hour}}
	assert.Equal(t, withQuota, tr.Limit("quota.com"))
	adaptive := pace
	adaptive.Adaptive = true
	assert.Equal(t, adaptive, tr.Limit("adaptive.com"))
}
