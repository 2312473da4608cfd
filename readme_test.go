package polite_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readmeImports are the packages a README snippet may use without
// importing them, by the name it calls them.
var readmeImports = map[string]string{
	"context":      "context",
	"errors":       "errors",
	"fmt":          "fmt",
	"http":         "net/http",
	"httptest":     "net/http/httptest",
	"io":           "io",
	"log":          "log",
	"os":           "os",
	"signal":       "os/signal",
	"time":         "time",
	"redis":        "github.com/redis/go-redis/v9",
	"prometheus":   "github.com/prometheus/client_golang/prometheus",
	"promhttp":     "github.com/prometheus/client_golang/prometheus/promhttp",
	"polite":       "github.com/polite-go/polite",
	"config":       "github.com/polite-go/polite/config",
	"frontier":     "github.com/polite-go/polite/frontier",
	"limiter":      "github.com/polite-go/polite/limiter",
	"robots":       "github.com/polite-go/polite/robots",
	"stats":        "github.com/polite-go/polite/stats",
	"redislimiter": "github.com/polite-go/polite/limiter/redislimiter",
	"metrics":      "github.com/polite-go/polite/metrics",
}

// readmeSnippet is one ```go block of the README, and the line its code
// starts on.
type readmeSnippet struct {
	code string
	line int
}

// TestReadmeSnippets compiles every ```go block of the README as written,
// each as a program of its own (go vet: the compiler's type check and
// vet's), against the modules of this work tree. A block of statements
// becomes the body of main, with the packages it names imported
// (readmeImports) and its variables used; a block of declarations stands at
// the top level; a block with a package clause is a whole file. Errors
// name the README's lines.
func TestReadmeSnippets(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err, "the go command compiles the README's snippets")
	root, err := filepath.Abs(".")
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	snippets := readmeSnippets(string(readme))
	require.NotEmpty(t, snippets, "the README has no ```go block")

	dir := t.TempDir()
	writeReadmeWorkspace(t, goCmd, root, dir)
	for i, s := range snippets {
		src, err := readmeProgram(s)
		require.NoError(t, err, "README.md:%d: the ```go block does not parse", s.line)
		pkg := filepath.Join(dir, fmt.Sprintf("snippet%d", i+1))
		require.NoError(t, os.Mkdir(pkg, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(pkg, "main.go"), []byte(src), 0o644))
	}
	cmd := exec.Command(goCmd, "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(dir, "go.work"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the README's Go snippets do not compile as written:\n%s", out)
}

// readmeSnippets returns the ```go blocks of readme.
func readmeSnippets(readme string) []readmeSnippet {
	var snippets []readmeSnippet
	block := regexp.MustCompile("(?ms)^```go\n(.*?)^```$")
	for _, m := range block.FindAllStringSubmatchIndex(readme, -1) {
		snippets = append(snippets, readmeSnippet{
			code: readme[m[2]:m[3]],
			line: strings.Count(readme[:m[2]], "\n") + 1,
		})
	}
	return snippets
}

// writeReadmeWorkspace writes into dir a module for the snippets and a
// go.work that uses it and the modules of root's go.work, with its
// replace directives and sums.
func writeReadmeWorkspace(t *testing.T, goCmd, root, dir string) {
	t.Helper()
	cmd := exec.Command(goCmd, "work", "edit", "-json", filepath.Join(root, "go.work"))
	out, err := cmd.Output()
	require.NoError(t, err, "go work edit -json")
	var work struct {
		Go      string
		Use     []struct{ DiskPath string }
		Replace []struct {
			Old struct{ Path, Version string }
			New struct{ Path string }
		}
	}
	require.NoError(t, json.Unmarshal(out, &work))
	abs := func(p string) string { return strconv.Quote(filepath.Join(root, p)) }
	var b strings.Builder
	fmt.Fprintf(&b, "go %s\n\nuse .\n", work.Go)
	for _, u := range work.Use {
		fmt.Fprintf(&b, "use %s\n", abs(u.DiskPath))
	}
	for _, r := range work.Replace {
		fmt.Fprintf(&b, "replace %s %s => %s\n", r.Old.Path, r.Old.Version, abs(r.New.Path))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.work"), []byte(b.String()), 0o644))
	mod := fmt.Sprintf("module example.com/readme\n\ngo %s\n", work.Go)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644))
	sums, err := os.ReadFile(filepath.Join(root, "go.work.sum"))
	if err == nil {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "go.work.sum"), sums, 0o644))
	}
}

// readmeProgram returns the program that holds s as written.
func readmeProgram(s readmeSnippet) (string, error) {
	lineDirective := fmt.Sprintf("//line README.md:%d\n", s.line)
	if strings.HasPrefix(strings.TrimSpace(s.code), "package ") {
		return lineDirective + s.code, nil
	}
	imports := snippetImports(s.code)
	head := "package main\n\nimport (\n"
	for _, p := range imports {
		head += fmt.Sprintf("\t%q\n", p)
	}
	head += ")\n\n"
	decls := head + lineDirective + s.code
	if f, err := parser.ParseFile(token.NewFileSet(), "", decls, 0); err == nil {
		if !slices.ContainsFunc(f.Decls, isMain) {
			decls += "\nfunc main() {}\n"
		}
		return decls, nil
	}
	prog := head + "func main() {\n" + lineDirective + s.code + "}\n"
	f, err := parser.ParseFile(token.NewFileSet(), "", prog, 0)
	if err != nil {
		return "", err
	}
	main := f.Decls[len(f.Decls)-1].(*ast.FuncDecl)
	uses := ""
	for _, name := range declaredNames(main.Body) {
		uses += "\t_ = " + name + "\n"
	}
	return head + "func main() {\n" + lineDirective + s.code + "//line README-uses:1\n" + uses + "}\n", nil
}

// isMain reports whether d declares func main.
func isMain(d ast.Decl) bool {
	fn, ok := d.(*ast.FuncDecl)
	return ok && fn.Recv == nil && fn.Name.Name == "main"
}

// snippetImports returns the import paths of the packages code names, as
// "pkg." for a name of readmeImports, sorted.
func snippetImports(code string) []string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	src := []byte(code)
	s.Init(fset.AddFile("", fset.Base(), len(src)), src, nil, 0)
	var paths []string
	prev := ""
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.PERIOD && readmeImports[prev] != "" && !slices.Contains(paths, readmeImports[prev]) {
			paths = append(paths, readmeImports[prev])
		}
		prev = ""
		if tok == token.IDENT {
			prev = lit
		}
	}
	slices.Sort(paths)
	return paths
}

// declaredNames returns the names that body's own statements declare
// (":=" and var), which a snippet may leave unused.
func declaredNames(body *ast.BlockStmt) []string {
	var names []string
	add := func(id *ast.Ident) {
		if id.Name != "_" && !slices.Contains(names, id.Name) {
			names = append(names, id.Name)
		}
	}
	for _, st := range body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.DeclStmt:
			if gd, ok := st.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				for _, spec := range gd.Specs {
					for _, id := range spec.(*ast.ValueSpec).Names {
						add(id)
					}
				}
			}
		}
	}
	return names
}
