//go:build unix

package config_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

// TestLoadFIFOWithoutWriter checks that a named pipe no one writes to
// reads as empty instead of blocking forever.
func TestLoadFIFOWithoutWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := config.Load(path)
		done <- err
	}()
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "empty input")
		assert.ErrorContains(t, err, path)
	case <-time.After(10 * time.Second):
		// Unblock the reader so the test ends.
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err == nil {
			w.Close()
		}
		t.Fatal("Load blocked on a named pipe without a writer")
	}
}

// TestLoadFIFOWithWriter checks that a pipe that is written to, as with
// a shell's process substitution, is read whole.
func TestLoadFIFOWithWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	// A reader of our own keeps the pipe, and what is written to it, alive
	// whether Load opens it before or after the writer closes it.
	keep, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	defer keep.Close()
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	go func() {
		w.WriteString(`{"version": `)
		time.Sleep(50 * time.Millisecond)
		w.WriteString(`"1.0"}`)
		w.Close()
	}()
	f, err := config.Load(path)
	require.NoError(t, err)
	assert.Equal(t, "1.0", f.Version)
}
