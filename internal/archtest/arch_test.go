// Package archtest checks the architecture's rules: with go list, that the
// import arrows point one way, cmd -> nameservice -> drivers/registry ->
// driver -> model, and that the commands' helper and the test-only packages are
// imported only by their own; with the type checker, that every call of a
// driver is made by the one layer, package nameservice's layer.go and
// capabilities.go.
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
	// model is the model and the errors, driver the contract written in
	// them: of ours, model may use only the JSON engine and the message
	// helper it is built on, and driver only model besides, so a driver
	// outside this module pulls in neither the portable API nor a driver.
	for path, allowed := range map[string][]string{
		module + "/model":  {module + "/internal/jsonx", module + "/internal/text"},
		module + "/driver": {module + "/model", module + "/internal/jsonx", module + "/internal/text"},
	} {
		p, ok := pkgs[path]
		if !ok {
			t.Fatalf("no package %s in go list's answer", path)
		}
		for _, dep := range ours(p.Deps) {
			if !slices.Contains(allowed, dep) {
				t.Errorf("%s depends on %s; of ours it may use only %s", path, dep, strings.Join(allowed, ", "))
			}
		}
	}
	if !slices.Contains(pkgs[module+"/driver"].Imports, module+"/model") {
		t.Errorf("driver does not import model; the check above would prove nothing of it")
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

// driverKits are the packages drivers are built from, which call the
// driver they serve (the object-store protocol's records, whose branch
// protocol resets a head through them): parts of a driver, beneath the layer.
var driverKits = []string{module + "/internal/objstore"}

// layerFiles are the files of the root package that make the driver's
// calls: the one layer between callers and a driver.
var layerFiles = []string{"layer.go", "capabilities.go"}

// TestOneLayer: no non-test code of the module calls a method of the
// driver contract or of an optional capability (any interface of package
// driver) on a driver, except the one layer (layerFiles of the root
// package), so every call is checked, traced and marked there. Calls are
// found by type, not by name: a method of an interface of package driver,
// called on that interface, or on a type that implements driver.Driver
// (a concrete driver), is a violation. Excepted, because a driver is built
// from them: the packages under drivers/ (a driver calls itself and the
// registry opens and closes drivers), driverKits, and package driver (the
// contract's own helpers); the test-only packages under internal/testing/
// (TestImportedOnlyBy keeps them out of the product). Tests are not checked: a test drives a driver beneath the
// layer on purpose (a foreign writer, a fault injected between the two).
// What one backend alone offers is reached by NameService.As, outside
// the contract, and is not checked here.
func TestOneLayer(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedFiles}
	pkgs, err := packages.Load(cfg, module+"/...")
	if err != nil {
		t.Fatal(err)
	}
	contract := contractOf(t, pkgs)
	layerCalls := 0
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("load %s: %v", p.PkgPath, e)
		}
		if p.PkgPath == module+"/driver" || isDriver(p.PkgPath) || p.PkgPath == module+"/drivers" ||
			slices.Contains(driverKits, p.PkgPath) || within(p.PkgPath, "internal/testing") {
			continue
		}
		for _, f := range p.Syntax {
			file := p.Fset.Position(f.Pos()).Filename
			inLayer := p.PkgPath == module && slices.ContainsFunc(layerFiles, func(n string) bool { return strings.HasSuffix(file, "/"+n) })
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				s := p.TypesInfo.Selections[sel]
				if s == nil || s.Kind() != types.MethodVal || !contract.calledOn(sel.Sel.Name, s.Recv()) {
					return true
				}
				if inLayer {
					layerCalls++
				} else {
					t.Errorf("%s: %s called on %s, not through the layer (%s of package nameservice)",
						p.Fset.Position(sel.Pos()), sel.Sel.Name, types.TypeString(s.Recv(), nil), strings.Join(layerFiles, ", "))
				}
				return true
			})
		}
	}
	if layerCalls < 10 {
		t.Fatalf("found %d driver calls in the layer, want at least 10 (one per method of the contract); the check would prove nothing", layerCalls)
	}
}

// contract is what TestOneLayer looks for: the methods of package driver's
// interfaces and the Driver interface itself.
type contract struct {
	methods map[string]bool
	driver  *types.Interface
}

// contractOf reads the interfaces of package driver.
func contractOf(t *testing.T, pkgs []*packages.Package) contract {
	t.Helper()
	i := slices.IndexFunc(pkgs, func(p *packages.Package) bool { return p.PkgPath == module+"/driver" })
	if i < 0 {
		t.Fatal("package driver not loaded")
	}
	c := contract{methods: map[string]bool{}}
	scope := pkgs[i].Types.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		it, ok := tn.Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		for m := range it.Methods() {
			c.methods[m.Name()] = true
		}
		if name == "Driver" {
			c.driver = it
		}
	}
	if c.driver == nil || len(c.methods) < 15 {
		t.Fatalf("package driver: Driver %v, %d methods; the check would prove nothing", c.driver, len(c.methods))
	}
	return c
}

// calledOn reports whether calling method on a value of type recv is a
// call of a driver: recv is an interface of package driver, or a driver.
func (c contract) calledOn(method string, recv types.Type) bool {
	if !c.methods[method] {
		return false
	}
	if n, ok := recv.(*types.Named); ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == module+"/driver" {
		if _, isInterface := n.Underlying().(*types.Interface); isInterface {
			return true
		}
	}
	return types.Implements(recv, c.driver) || types.Implements(types.NewPointer(recv), c.driver)
}
