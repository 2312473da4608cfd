package main

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSavePath(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, c := range []struct {
		url, dir, name string
	}{
		{"http://Example.com/", "example.com", "index.html"},
		{"http://example.com", "example.com", "index.html"},
		{"https://example.com:8443/a/b/c.txt", "example.com_8443", "a_b_c.txt"},
		{"http://example.com/docs/", "example.com", "docs_index.html"},
		{"http://example.com/search?q=go&page=2", "example.com", "search_q_go_page_2"},
		{"http://example.com/../../etc/passwd", "example.com", "_.._.._etc_passwd"},
		{"http://example.com/%2e%2e%2f%2e%2e%2fetc", "example.com", "_.._.._etc"},
		{"http://example.com/..", "example.com", "_"},
		{"http://example.com/.hidden", "example.com", "_.hidden"},
		{"http://example.com/a%00b%ffc", "example.com", "a_b_c"},
		{"http://example.com/a\\b", "example.com", "a_b"},
		{"http://example.com/CON", "example.com", "_CON"},
		{"http://example.com/nul.txt", "example.com", "_nul.txt"},
		{"http://example.com/trailing.", "example.com", "trailing"},
		{"http://[::1]:8080/x", "__1_8080", "x"},
		{"http://xn--mnchen-3ya.de/stra%C3%9Fe", "xn--mnchen-3ya.de", "straße"},
		{"http://example.com/" + long + ".html", "example.com", strings.Repeat("a", maxName-hashLen-1-5) + "-HASH.html"},
	} {
		t.Run(c.url, func(t *testing.T) {
			u, err := url.Parse(c.url)
			require.NoError(t, err)
			dir, name := savePath(u)
			assert.Equal(t, c.dir, dir)
			if strings.Contains(c.name, "HASH") {
				assert.Regexp(t, "^"+strings.Replace(c.name, "HASH", "[0-9a-f]{12}", 1)+"$", name)
				assert.LessOrEqual(t, len(name), maxName)
				return
			}
			assert.Equal(t, c.name, name)
		})
	}
}

func TestSavePathLongNamesStayDistinct(t *testing.T) {
	a, _ := url.Parse("http://example.com/" + strings.Repeat("x", 500) + "?a")
	b, _ := url.Parse("http://example.com/" + strings.Repeat("x", 500) + "?b")
	_, na := savePath(a)
	_, nb := savePath(b)
	assert.NotEqual(t, na, nb)
}

// checkElement checks that s is one safe path element.
func checkElement(t *testing.T, s string) {
	t.Helper()
	assert.NotEmpty(t, s)
	assert.LessOrEqual(t, len(s), maxName)
	assert.True(t, filepath.IsLocal(s), "%q is not local", s)
	assert.False(t, strings.HasPrefix(s, "."), "%q starts with a dot", s)
	assert.False(t, strings.ContainsAny(s, `/\:`+"\x00"), "%q has a separator", s)
	assert.True(t, utf8.ValidString(s), "%q is not UTF-8", s)
	assert.False(t, isReservedName(s), "%q is reserved", s)
}

func FuzzSavePath(f *testing.F) {
	for _, seed := range []string{
		"http://example.com/", "http://example.com/../../x", "http://[::1]:1/%2e%2e/%2f",
		"http://a/" + strings.Repeat("%e2%82%ac", 100), "http://a/..%5c..%5cwin.ini", "http://a/?" + strings.Repeat("z", 400),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		dir, name := savePath(u)
		checkElement(t, dir)
		checkElement(t, name)
	})
}

// TestFetchOut saves bodies of tricky URLs and checks that every file
// lands inside the directory, once per URL, with the right content.
func TestFetchOut(t *testing.T) {
	s := newSite(t, nil)
	paths := []string{
		"/", "/a/b/c.txt", "/%2e%2e/%2e%2e/%2e%2e/escape", "/..%2f..%2fescape2", "/x?y=../../z",
		"/" + strings.Repeat("long", 100), "/CON", "/odd%20name%00%ff%e2%80%ae", "/a_b_c.txt",
		"/dup", "/dup", "/.env",
	}
	var urls []string
	for _, p := range paths {
		urls = append(urls, s.URL+p)
	}
	base := t.TempDir()
	out := filepath.Join(base, "out")
	o := runPolite(t, "", append([]string{"fetch", "-rate", "100", "-burst", "20", "-out", out}, urls...)...)
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)

	entries, err := os.ReadDir(base)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing written beside the directory")
	var bodies []string
	require.NoError(t, filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, err := filepath.Rel(out, path)
		require.NoError(t, err)
		require.True(t, filepath.IsLocal(rel) || rel == ".", "%s is outside", path)
		if !d.IsDir() {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			bodies = append(bodies, string(b))
			assert.Contains(t, o.stderr, "-> "+filepath.ToSlash(rel))
		}
		return nil
	}))
	var want []string
	for _, r := range s.requests() {
		want = append(want, "body of "+r)
	}
	assert.ElementsMatch(t, want, bodies, "one file per URL")
	require.Len(t, bodies, len(paths)-1, "the duplicate is fetched once")
	assert.Contains(t, o.stderr, "1 duplicate listed before, skipped")

	// A second run into the same directory overwrites nothing.
	o = runPolite(t, "", "fetch", "-out", out, s.URL+"/a/b/c.txt")
	require.Equal(t, exitOK, o.code, "stderr: %s", o.stderr)
	host := strings.ReplaceAll(strings.TrimPrefix(s.URL, "http://"), ":", "_")
	for _, name := range []string{"a_b_c.txt", "a_b_c-2.txt", "a_b_c-3.txt"} {
		_, err := os.Stat(filepath.Join(out, host, name))
		assert.NoError(t, err, name)
	}
}

// TestFetchOutSymlink checks that a symbolic link in the directory does
// not lead a body outside it.
func TestFetchOutSymlink(t *testing.T) {
	s := newSite(t, nil)
	base := t.TempDir()
	out, outside := filepath.Join(base, "out"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	host := strings.ReplaceAll(strings.TrimPrefix(s.URL, "http://"), ":", "_")
	require.NoError(t, os.Symlink(outside, filepath.Join(out, host)))

	o := runPolite(t, "", "fetch", "-out", out, s.URL+"/secret")
	assert.Equal(t, exitFailed, o.code, "stderr: %s", o.stderr)
	assert.Contains(t, o.stderr, "saving the body")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written through the link")
}

// TestSaverRemovesPartialFile checks that a body cut short leaves no file.
func TestSaverRemovesPartialFile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		fmt.Fprint(w, "only part")
	}))
	defer srv.Close()
	dir := t.TempDir()
	sv, err := newSaver(dir)
	require.NoError(t, err)
	defer sv.Close()
	resp, err := http.Get(srv.URL + "/cut")
	require.NoError(t, err)
	defer resp.Body.Close()
	_, _, err = sv.save(resp.Request.URL, resp.Body)
	require.Error(t, err)
	var files []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	assert.Empty(t, files)
}
