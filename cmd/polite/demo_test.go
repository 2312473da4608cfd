package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemo runs the demo end to end: it must finish in time, fetch every
// page of every domain, and show the 429s and the pause they caused.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo takes about 10s; skipped with -short")
	}
	o := runPolite(t, "", "demo")
	t.Logf("polite demo took %s", o.took)
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	assert.Less(t, o.took, 60*time.Second, "the README promises under 30s; 60s leaves room for a loaded machine")

	rows := map[string][]string{}
	for _, line := range lines(o.stdout) {
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.HasSuffix(fields[0], ".test") && len(fields) >= 10 {
			rows[fields[0]] = fields
		}
	}
	for _, d := range demoDomains {
		row, ok := rows[d.name]
		require.True(t, ok, "no row for %s in:\n%s", d.name, o.stdout)
		requests, err := strconv.Atoi(row[1])
		require.NoError(t, err)
		retries, err := strconv.Atoi(row[6])
		require.NoError(t, err)
		assert.Equal(t, d.pages+retries, requests, "%s: every page once, and each 429 again", d.name)
		if d.throttle == 0 {
			assert.Zero(t, retries, d.name)
			continue
		}
		assert.Equal(t, requests/d.throttle, retries, "%s: every %dth request throttled, and retried", d.name, d.throttle)
		paused, err := time.ParseDuration(row[5])
		require.NoError(t, err)
		assert.Positive(t, paused, "%s: a 429 with Retry-After pauses the domain", d.name)
	}
}
