package statefile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/limiter"
)

// A file that held many keys, most of them since forgotten, shrinks when
// it is opened again; it keeps the others, stays a file behind its link,
// and goes on taking commits.
func TestOpenGivesBackTheSpaceOfForgottenKeys(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "state"), filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(target, link))
	const brief = 3 * time.Second // for the commit to write them all, on a slow machine too
	quick := limiter.Rule{MinDelay: brief}
	m := persisted(t, link)
	reserved := time.Now()
	for i := range 20000 {
		m.ReserveAt(limiter.Request{Key: fmt.Sprintf("quick%d.example", i), Rule: &quick}, reserved)
	}
	require.NoError(t, m.Commit())
	for i := range 100 {
		m.Reserve(context.Background(), limiter.Request{Key: fmt.Sprintf("slow%d.example", i), Rule: &slowRule})
	}
	require.NoError(t, m.Close())
	before := fileSize(t, target)
	require.Greater(t, before, int64(1<<20), "the file holds the quick keys")

	time.Sleep(time.Until(reserved.Add(brief + 10*time.Millisecond))) // the quick keys recover
	again := persisted(t, link)
	after := fileSize(t, target)
	t.Logf("the file: %d bytes, then %d", before, after)
	assert.Less(t, after, before/4, "the space of 20,000 keys of 20,100 given back")
	for i := range 100 {
		require.True(t, waits(again, fmt.Sprintf("slow%d.example", i)), "a key kept")
	}
	again.Reserve(context.Background(), limiter.Request{Key: "new.example", Rule: &slowRule})
	require.NoError(t, again.Close())

	info, err := os.Lstat(link)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, info.Mode().Type(), "the link is still a link")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "the file and its link, nothing beside")
	last := persisted(t, link)
	assert.True(t, waits(last, "new.example"), "a commit after the compaction")
	assert.True(t, waits(last, "slow0.example"))
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Size()
}

// What a crash left of a compaction is gone once the file is open again.
func TestOpenRemovesWhatACompactionLeft(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	persisted(t, path).Close()
	require.NoError(t, os.WriteFile(path+".compact", []byte("half a file"), 0o600))
	persisted(t, path)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "the file, nothing beside")
}
