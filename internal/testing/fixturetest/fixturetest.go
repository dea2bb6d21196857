// Package fixturetest holds what the drivers' fixture tests share: a test
// per fixture case (Run), reading a case's expected.json, listing every
// record of a driver, and comparing records the way testdata/ns-v2/README.md
// says.
package fixturetest

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// NSv2 returns the directory of the ns@v2 fixture cases, testdata/ns-v2 at
// the module root, found by walking up from the working directory to
// go.mod. Outside a module it returns the relative path, so the caller's
// read fails naming it.
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
	cmpopts.IgnoreFields(model.Meta{}, "CreatedAt"),
	cmp.FilterPath(func(p cmp.Path) bool {
		f, ok := p.Last().(cmp.StructField)
		return !ok || f.Name() != "Dependencies"
	}, cmpopts.EquateEmpty()),
	cmp.Comparer(func(a, b model.Object) bool { return a.Equal(b) }),
}

// ReadExpected decodes the records of a case's expected.json.
func ReadExpected(t testing.TB, path string) []*model.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*model.Record
	if err := json.Unmarshal(b, &recs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// ListAll returns every record d lists with opts, page by page.
func ListAll(t testing.TB, d driver.Driver, opts driver.ListOptions) []*model.Record {
	t.Helper()
	var out []*model.Record
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

// minCases is how many fixture cases Run expects at least: fewer means the
// fixtures were not found.
const minCases = 7

// Put stores the files of the fixture case name (slash paths under the
// case's directory, "ns@v2/..." as keys, their bytes as values) where a
// driver reads them, and returns that driver.
type Put func(t *testing.T, name string, files map[string][]byte) driver.Driver

// Run runs a test per fixture case: put stores the case's files, and the
// driver it returns must list, and get one by one, exactly the records of
// the case's expected.json.
func Run(t *testing.T, put Put) {
	root := NSv2()
	cases, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		n++
		t.Run(c.Name(), func(t *testing.T) {
			dir := filepath.Join(root, c.Name())
			d := put(t, c.Name(), caseFiles(t, dir))
			got := ListAll(t, d, driver.ListOptions{IncludeRetracted: true})
			want := ReadExpected(t, filepath.Join(dir, "expected.json"))
			if diff := cmp.Diff(want, got, RecordCmp...); diff != "" {
				t.Errorf("records differ from expected.json (-want +got):\n%s", diff)
			}
			for _, w := range want {
				r, err := d.Get(context.Background(), w.ID)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(w, r, RecordCmp...); diff != "" {
					t.Errorf("Get %s (-want +got):\n%s", w.ID, diff)
				}
			}
		})
	}
	if n < minCases {
		t.Fatalf("%d fixture cases in %s, want at least %d", n, root, minCases)
	}
}

// caseFiles reads the ns@v2 tree of the case at dir.
func caseFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	fsys := os.DirFS(dir)
	err := fs.WalkDir(fsys, "ns@v2", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		files[p], err = fs.ReadFile(fsys, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
