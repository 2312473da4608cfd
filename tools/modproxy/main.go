// Command modproxy packs modules of this repository, as their directories
// hold them, into a file-based module proxy, so that the go command can
// install them at a version not yet tagged (GOPROXY=file://DIR):
//
//	modproxy -version v0.2.0 -out DIR PATH=DIR...
//
// Each PATH=DIR adds module PATH, from directory DIR, at the version; its
// zip is made as the go command makes one (golang.org/x/mod/zip), so it
// leaves out nested modules, vendor directories and VCS files.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

func main() {
	version := flag.String("version", "", "the version to pack the modules at, such as v0.2.0")
	out := flag.String("out", "", "the proxy's directory")
	flag.Parse()
	if err := run(*version, *out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(version, out string, modules []string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("-version: want a canonical semantic version such as v0.2.0, got %q", version)
	}
	if out == "" || len(modules) == 0 {
		return fmt.Errorf("usage: modproxy -version VERSION -out DIR PATH=DIR...")
	}
	for _, arg := range modules {
		path, dir, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("%q: want PATH=DIR", arg)
		}
		if err := pack(out, module.Version{Path: path, Version: version}, dir); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// pack adds m, from dir, to the proxy in out: its .info, .mod, .zip and
// an entry in its list.
func pack(out string, m module.Version, dir string) error {
	escaped, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	at := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	base := filepath.Join(at, m.Version)
	goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".mod", goMod, 0o644); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".info", info, 0o644); err != nil {
		return err
	}
	z, err := os.Create(base + ".zip")
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(z, m, dir); err != nil {
		z.Close()
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	list, err := os.OpenFile(filepath.Join(at, "list"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(list, m.Version); err != nil {
		list.Close()
		return err
	}
	return list.Close()
}
