package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// saver writes response bodies under one directory, never outside it: the
// names come from savePath, and every file is opened through an os.Root,
// which refuses to follow a symbolic link out of the directory. It never
// overwrites a file: a name already taken gets "-2", "-3"... before its
// extension. It is safe for concurrent use.
type saver struct {
	root *os.Root
}

// newSaver creates dir if needed and returns a saver into it.
func newSaver(dir string) (*saver, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &saver{root: root}, nil
}

func (s *saver) Close() error { return s.root.Close() }

// maxTries bounds the "-N" suffixes tried for one name.
const maxTries = 10000

// save writes body to a new file for u and returns its name relative to
// the directory. A partly written file is removed.
func (s *saver) save(u *url.URL, body io.Reader) (string, int64, error) {
	dir, name := savePath(u)
	if err := s.root.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 1; i <= maxTries; i++ {
		file := dir + "/" + name
		if i > 1 {
			file = dir + "/" + stem + "-" + strconv.Itoa(i) + ext
		}
		f, err := s.root.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", 0, err
		}
		n, err := io.Copy(f, body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			s.root.Remove(file)
			return "", n, err
		}
		return file, n, nil
	}
	return "", 0, fmt.Errorf("no free name for %s/%s after %d tries", dir, name, maxTries)
}

// Names longer than maxName bytes are cut and given a hash of the URL, so
// that they stay distinct and under every file system's limit.
const (
	maxName = 120
	maxExt  = 12
	hashLen = 12
)

// savePath derives, from u alone, the directory (its host) and the file
// name (its path and query) a body is saved under. Each is one clean path
// element: only letters, digits, '.', '-' and '_', never empty, never
// starting with '.', at most maxName bytes, never a reserved device name
// on Windows. "/" becomes "index.html"; "/a/b/c.txt?x=1" becomes
// "a_b_c.txt_x_1".
func savePath(u *url.URL) (dir, name string) {
	host := u.Hostname()
	if port := u.Port(); port != "" {
		host += "_" + port
	}
	dir = cleanElement(strings.ToLower(host), u.String())

	var parts []string
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		if seg == "" {
			continue
		}
		if dec, err := url.PathUnescape(seg); err == nil {
			seg = dec
		}
		parts = append(parts, seg)
	}
	if len(parts) == 0 || strings.HasSuffix(u.EscapedPath(), "/") {
		parts = append(parts, "index.html")
	}
	name = strings.Join(parts, "_")
	if u.RawQuery != "" {
		name += "_" + u.RawQuery
	}
	return dir, cleanElement(name, u.String())
}

// cleanElement turns s into one safe path element; long names are cut and
// end with a hash of whole, the URL they come from.
func cleanElement(s, whole string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '.' || r == '-' || r == '_':
			b.WriteRune(r)
		case r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.TrimRight(b.String(), ".")
	if out == "" || out[0] == '.' || isReservedName(out) {
		out = "_" + out
	}
	if len(out) <= maxName {
		return out
	}
	ext := path.Ext(out)
	if len(ext) > maxExt || ext == out {
		ext = ""
	}
	sum := sha256.Sum256([]byte(whole))
	suffix := "-" + hex.EncodeToString(sum[:])[:hashLen] + ext
	cut := maxName - len(suffix)
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	return out[:cut] + suffix
}

// isReservedName reports whether Windows reserves name (CON, NUL, COM1...),
// whatever its extension.
func isReservedName(name string) bool {
	base, _, _ := strings.Cut(strings.ToUpper(name), ".")
	switch base {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		return base[3] >= '1' && base[3] <= '9'
	}
	return false
}
