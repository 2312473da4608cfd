package limiter_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
	"github.com/polite-go/polite/limiter"
)

// A state written by one Memory and read by another, as after a restart,
// means the same: the same waits, pauses, quotas and learned gaps.
func TestStateSurvivesARestart(t *testing.T) {
	c := newClock()
	rule := limiter.Rule{Rate: 1, Burst: 2, Quotas: []config.Quota{{Requests: 5, Window: time.Hour}}}
	before := limiter.NewMemory()
	a := limiter.Request{Key: "a.com", Rule: &rule}
	for range 4 {
		c.reserveAt(before, a, 0)
	}
	before.PauseAt("b.com", time.Hour, c.at(0))
	b := limiter.Request{Key: "b.com", Rule: &rule}
	crawl := limiter.Request{Key: "c.com", Rule: &rule}
	before.ObserveAt(crawl, limiter.Observation{Host: "https://c.com:443", CrawlDelay: 30 * time.Second}, c.at(0))
	c.reserveAt(before, crawl, 0)
	quiet := limiter.Request{Key: "quiet.com", Rule: &rule}
	c.reserveAt(before, quiet, -time.Hour)

	var file bytes.Buffer
	n, err := before.WriteTo(&file)
	require.NoError(t, err)
	assert.Equal(t, int64(file.Len()), n)
	assert.NotContains(t, file.String(), "quiet.com", "a key that has fully recovered is not written")

	after := limiter.NewMemory()
	_, err = after.ReadFrom(&file)
	require.NoError(t, err)
	for _, r := range []limiter.Request{a, b, crawl, quiet} {
		want, got := stateAt(before, r.Key, rule, c.at(ms(10))), stateAt(after, r.Key, rule, c.at(ms(10)))
		assert.InDelta(t, want.Wait, got.Wait, float64(time.Millisecond), r.Key)
		assert.InDelta(t, want.Paused, got.Paused, float64(time.Millisecond), r.Key)
		assert.Equal(t, want.Reason, got.Reason, r.Key)
		assert.Equal(t, want.MinDelay, got.MinDelay, r.Key)
		require.Len(t, got.Quotas, 1)
		assert.Equal(t, want.Quotas[0].Remaining, got.Quotas[0].Remaining, r.Key)
	}
	_, start := c.reserveAt(after, a, ms(10))
	assert.InDelta(t, 3*time.Second, start, float64(time.Millisecond), "the restored bucket and turns")
}

func TestReadFromRefusesWhatItCannotRead(t *testing.T) {
	for name, body := range map[string]string{
		"damaged":          `{"format": "polite limiter.Memory state", "version": 1, "keys": {"a.com": {"quiet_at`,
		"not a state":      `{"format": "something else", "version": 1}`,
		"a later version":  `{"format": "polite limiter.Memory state", "version": 2, "keys": {}}`,
		"an unknown field": `{"format": "polite limiter.Memory state", "version": 1, "keys": {}, "extra": 1}`,
		"an overfull window": `{"format": "polite limiter.Memory state", "version": 1, "keys": {"a.com": {"quiet_at": 1,
			"windows": [{"limit": 1, "starts": [1, 2]}]}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			m := limiter.NewMemory()
			_, err := m.ReadFrom(strings.NewReader(body))
			require.Error(t, err)
			assert.Regexp(t, "^limiter: reading state", err.Error())
			assert.Zero(t, m.Len(), "nothing restored")
		})
	}
}

func TestPersistKeepsTheStateInAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	rule := limiter.Rule{Rate: 0.01, Burst: 1}
	r := limiter.Request{Key: "a.com", Rule: &rule}
	first := limiter.NewMemory()
	require.NoError(t, first.Persist(path))
	_, err := first.Reserve(context.Background(), r)
	require.NoError(t, err)
	require.NoError(t, first.Close())

	second := limiter.NewMemory()
	require.NoError(t, second.Persist(path))
	defer second.Close()
	res, err := second.Reserve(context.Background(), r)
	require.NoError(t, err)
	assert.Greater(t, res.Wait, 99*time.Second, "the restarted process waits its turn")

	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	err = limiter.NewMemory().Persist(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path, "the error names the file")
}

// BenchmarkMemoryWriteTo measures a snapshot of 10,000 domains that have
// not recovered yet, each with a quota window: time per snapshot and
// bytes written.
//
//	go test -run '^$' -bench MemoryWriteTo -benchmem ./limiter
func BenchmarkMemoryWriteTo(b *testing.B) {
	m := limiter.NewMemory()
	rule := limiter.Rule{Rate: 0.001, Burst: 1, Quotas: []config.Quota{{Requests: 100, Window: time.Hour}}}
	for i := range 10000 {
		_, err := m.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("domain%d.example", i), Rule: &rule})
		require.NoError(b, err)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if _, err := m.WriteTo(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/snapshot")
}
