package config_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/polite-go/polite/config"
)

// TestLoadSizeLimit checks that Load reads at most a bounded number of
// bytes: a file that is too large, or a device that never ends, is an error
// naming the file and the limit, returned at once.
func TestLoadSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	padded := `{"version": "1.0"` + strings.Repeat(" ", 1<<20) + `}`
	require.NoError(t, os.WriteFile(big, []byte(padded), 0o600))
	fits := filepath.Join(dir, "fits.json")
	require.NoError(t, os.WriteFile(fits, []byte(padded[:1<<20-1]+"}"), 0o600))

	for _, path := range []string{big, "/dev/zero", "/dev/urandom"} {
		t.Run(path, func(t *testing.T) {
			if _, err := os.Stat(path); err != nil {
				t.Skip(err)
			}
			start := time.Now()
			f, err := config.Load(path)
			require.Nil(t, f)
			require.Error(t, err)
			assert.Equal(t, "config: read "+path+": larger than 1 MiB", err.Error())
			var pe *fs.PathError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, path, pe.Path)
			assert.Less(t, time.Since(start), 10*time.Second)
		})
	}
	t.Run("exactly the limit", func(t *testing.T) {
		f, err := config.Load(fits)
		require.NoError(t, err)
		assert.Equal(t, "1.0", f.Version)
	})
}
