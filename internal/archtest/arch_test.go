// Package archtest checks the architecture's rules: with go list, that the
// import arrows point one way, cmd -> nameservice -> drivers/registry ->
// driver, and that the commands' helper and the test-only packages are
// imported only by their own; with the type checker, that every write
// reaches a driver through package guard.
package archtest

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/types"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const module = "nameservice.dev/nameservice"

// pkg is what go list -json says of one package of the module.
type pkg struct {
	ImportPath   string
	Imports      []string // direct, non-test imports
	TestImports  []string // direct imports of its in-package _test.go files
	XTestImports []string // direct imports of its _test.go files in package x_test
	Deps         []string // every package it depends on, transitively
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
	// driver is the contract: of ours it may use only the JSON engine and
	// the message helper its model types are built on.
	for _, dep := range ours(pkgs[module+"/driver"].Deps) {
		if dep != module+"/internal/jsonx" && dep != module+"/internal/text" {
			t.Errorf("driver depends on %s; it may import only internal/jsonx and internal/text of ours", dep)
		}
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

// TestImportedOnlyBy checks the packages only some may import in non-test
// files: internal/cli, the commands' shared main and usage error, is the
// commands'; the packages under internal/testing/ are the tests' (and each
// other's), never the product's.
func TestImportedOnlyBy(t *testing.T) {
	pkgs := listModule(t)
	for _, rule := range []struct {
		pkg, by  string // directories under the module
		minUsers int    // importers, tests included, below which the check proves nothing
	}{
		{"internal/cli", "cmd", 2},
		{"internal/testing", "internal/testing", 10},
	} {
		users := 0
		for path, p := range pkgs {
			if slices.ContainsFunc(p.Imports, func(imp string) bool { return within(imp, rule.pkg) }) && !within(path, rule.by) {
				t.Errorf("%s imports a package of %s in non-test code; only %s may", path, rule.pkg, rule.by)
			}
			if slices.ContainsFunc(slices.Concat(p.Imports, p.TestImports, p.XTestImports), func(imp string) bool { return within(imp, rule.pkg) }) {
				users++
			}
		}
		if users < rule.minUsers {
			t.Errorf("%d packages import %s, want at least %d; the check would prove nothing", users, rule.pkg, rule.minUsers)
		}
	}
}

// within reports whether path is the module's package dir or one below it.
func within(path, dir string) bool {
	dir = module + "/" + dir
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// writeMethods are the driver contract's methods that change a record.
var writeMethods = []string{"Create", "Update", "Retract", "Delete", "CreateBranch", "DropBranch", "ResetHead", "Collect"}

// TestWritesGoThroughTheGuard: no code of the commands or the server calls
// a write method of a driver except through package guard (a
// *guard.Driver, or the portable API), so every rule of the model holds for
// every entry point. Calls are found by type, not by name: a write method
// whose receiver is driver.Driver, another driver interface, or a type of
// a package under drivers/ is a violation.
func TestWritesGoThroughTheGuard(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo}
	pkgs, err := packages.Load(cfg, module+"/server/...", module+"/cmd/...")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("load %s: %v", p.PkgPath, e)
		}
		for _, f := range p.Syntax {
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok || !slices.Contains(writeMethods, sel.Sel.Name) {
					return true
				}
				s := p.TypesInfo.Selections[sel]
				if s == nil || s.Kind() != types.MethodVal {
					return true
				}
				calls++
				if recv := rawDriver(s.Recv()); recv != "" {
					t.Errorf("%s: %s called on %s, not through package guard", p.Fset.Position(sel.Pos()), sel.Sel.Name, recv)
				}
				return true
			})
		}
	}
	if calls == 0 {
		t.Fatal("found no call of a write method in server/ and cmd/; the check would prove nothing")
	}
}

// rawDriver names t when it is a driver that bypasses the guard: an
// interface of package driver, or a type of a package under drivers/.
func rawDriver(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return ""
	}
	path := n.Obj().Pkg().Path()
	if path == module+"/driver" || isDriver(path) {
		return types.TypeString(t, nil)
	}
	return ""
}
