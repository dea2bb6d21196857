// Package archtest checks the import rules of design.md §4 with go list:
// the arrows point one way, cmd -> nameservice -> drivers/registry -> driver.
package archtest

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "nameservice.dev/nameservice"

// pkg is what go list -json says of one package of the module.
type pkg struct {
	ImportPath string
	Imports    []string // direct, non-test imports
	Deps       []string // every package it depends on, transitively
}

// listModule returns every package of the module, by import path.
func listModule(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages of %s; the check would prove nothing", len(pkgs), module)
	}
	return pkgs
}

// ours returns the packages of the module in list.
func ours(list []string) []string {
	var out []string
	for _, p := range list {
		if p == module || strings.HasPrefix(p, module+"/") {
			out = append(out, p)
		}
	}
	return out
}

// isDriver reports whether path is a backend's driver package (or one
// below it), not the registry.
func isDriver(path string) bool {
	return strings.HasPrefix(path, module+"/drivers/") && path != module+"/drivers/all"
}

func driverOf(path string) string {
	rest := strings.TrimPrefix(path, module+"/drivers/")
	name, _, _ := strings.Cut(rest, "/")
	return name
}

func TestImports(t *testing.T) {
	pkgs := listModule(t)
	root := module
	if _, ok := pkgs[module+"/driver"]; !ok {
		t.Fatal("no driver package in go list's answer")
	}
	if got := ours(pkgs[module+"/driver"].Deps); len(got) != 0 {
		t.Errorf("driver depends on %v; it must import nothing of ours", got)
	}
	for _, recipe := range []string{module + "/lease", module + "/subscribe", module + "/jsonld"} {
		if slices.Contains(pkgs[root].Deps, recipe) {
			t.Errorf("the root package depends on %s; it keeps the portable API only", recipe)
		}
	}
	drivers := 0
	for path, p := range pkgs {
		if !isDriver(path) {
			continue
		}
		drivers++
		if slices.Contains(p.Deps, root) {
			t.Errorf("%s depends on the portable package %s", path, root)
		}
		for _, dep := range ours(p.Deps) {
			if isDriver(dep) && driverOf(dep) != driverOf(path) {
				t.Errorf("%s depends on another driver, %s", path, dep)
			}
		}
	}
	if drivers < 6 {
		t.Errorf("found %d driver packages, want at least 6 (mem, fs, dynamodb, s3etag, blob, docstore)", drivers)
	}
	if c, ok := pkgs[module+"/conformance"]; ok {
		for _, dep := range ours(c.Deps) {
			if isDriver(dep) {
				t.Errorf("conformance depends on the concrete driver %s", dep)
			}
		}
	}
}

// TestCommandsOnly checks that internal/cli, the commands' shared main and
// usage error, stays theirs: no library package depends on it.
func TestCommandsOnly(t *testing.T) {
	pkgs := listModule(t)
	cli := module + "/internal/cli"
	users := 0
	for path, p := range pkgs {
		if !slices.Contains(p.Imports, cli) {
			continue
		}
		users++
		if !strings.HasPrefix(path, module+"/cmd/") {
			t.Errorf("%s imports %s; only commands may", path, cli)
		}
	}
	if users < 2 {
		t.Errorf("%d packages import %s, want ns and ns-migrate at least", users, cli)
	}
}
