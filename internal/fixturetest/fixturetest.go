// Package fixturetest holds what the drivers' fixture tests share: reading
// a case's expected.json, listing every record of a driver, and comparing
// records the way testdata/ns-v2/README.md says.
package fixturetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"nameservice.dev/nameservice/driver"
)

// NSv2 returns the directory of the ns@v2 fixture cases, testdata/ns-v2 at
// the module root, which it finds by walking up from the working directory
// (a package's directory under go test) to go.mod: the fixtures live once in
// the repository and every package's tests read them where they are, from a
// checkout at any path. Outside a module it returns the relative path, so
// the caller's read fails naming it.
func NSv2() string {
	const rel = "testdata/ns-v2"
	dir, err := os.Getwd()
	if err != nil {
		return rel
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, rel)
		}
		up := filepath.Dir(dir)
		if up == dir {
			return rel
		}
		dir = up
	}
}

// RecordCmp compares records as the fixtures README says: created_at
// excepted, and a key absent from the expected record must be absent, null,
// empty or zero in the actual one (absent and zero are one in Go), except
// dependencies, whose empty list and absence differ.
var RecordCmp = []cmp.Option{
	cmpopts.IgnoreFields(driver.Meta{}, "CreatedAt"),
	cmp.FilterPath(func(p cmp.Path) bool { return !isDependencies(p) }, cmpopts.EquateEmpty()),
	cmp.Comparer(func(a, b driver.Object) bool { return a.Equal(b) }),
}

// ReadExpected decodes the records of a case's expected.json.
func ReadExpected(t testing.TB, path string) []*driver.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*driver.Record
	if err := json.Unmarshal(b, &recs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// ListAll returns every record d lists with opts, page by page.
func ListAll(t testing.TB, d driver.Driver, opts driver.ListOptions) []*driver.Record {
	t.Helper()
	var out []*driver.Record
	for {
		page, err := d.List(context.Background(), opts)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		out = append(out, page.Records...)
		if page.NextPageToken == "" {
			return out
		}
		opts.PageToken = page.NextPageToken
	}
}

func isDependencies(p cmp.Path) bool {
	f, ok := p.Last().(cmp.StructField)
	return ok && f.Name() == "Dependencies"
}
