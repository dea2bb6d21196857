package layout

import (
	"errors"
	"strings"
	"testing"

	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

func id(s string) model.ID {
	i, err := model.ParseID(s)
	if err != nil {
		panic(err)
	}
	return i
}

func keys(t *testing.T, l jsonld.Layout, s string) []string {
	t.Helper()
	files, err := Files(l, id(s))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, f.Key)
	}
	return out
}

func TestFiles(t *testing.T) {
	if got := strings.Join(keys(t, jsonld.LayoutB, "mydb"), " "); got != "ns@v2/mydb/main.json ns@v2/mydb/main.index.json" {
		t.Errorf("B: %s", got)
	}
	want := "ns@v2/t/c/release/v1.status.json ns@v2/t/c/release/v1.head.json ns@v2/t/c/release/v1.index.json ns@v2/t/c/release/v1.config.json"
	if got := strings.Join(keys(t, jsonld.LayoutC, "t/c:release/v1"), " "); got != want {
		t.Errorf("C: %s", got)
	}
	files, _ := Files(jsonld.LayoutC, id("x:y"))
	if !files[0].Defining || files[0].Parts != jsonld.Identity|jsonld.StatusPart {
		t.Errorf("C defining file = %+v; identity must live with the status", files[0])
	}
	if _, err := Files(jsonld.LayoutB, model.ID{Name: "a", Branch: "b.index"}); !errors.Is(err, model.ErrInvalidID) {
		t.Errorf("branch b.index: err = %v", err)
	}
}

// TestKeyRoundTrip: every key of a record classifies back to its stem, and
// the record's ID is among the stem's candidates.
func TestKeyRoundTrip(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		for _, s := range []string{"mydb:main", "a/b:main", "a:b/main", "x.indexer:y.configs", "t/c:release/v1.0", "données:branche"} {
			files, err := Files(l, id(s))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				role, st := Classify(l, f.Key)
				want := Secondary
				if f.Defining {
					want = Defining
				}
				if role != want || st != Stem(id(s)) {
					t.Errorf("%s %s: Classify(%s) = %v %q", l, s, f.Key, role, st)
				}
				found := false
				for _, c := range Candidates(st) {
					found = found || c == id(s)
				}
				if !found {
					t.Errorf("%s: %s not among candidates %v", s, id(s), Candidates(st))
				}
			}
		}
	}
}

// TestCollisions: the IDs of reference-behaviour.md defect 10 share a
// path; the layout says so (several candidates), so readers must check @id.
func TestCollisions(t *testing.T) {
	a, b := keys(t, jsonld.LayoutB, "a/b:main"), keys(t, jsonld.LayoutB, "a:b/main")
	if a[0] != b[0] {
		t.Fatalf("expected a shared path, got %s and %s", a[0], b[0])
	}
	if got := Candidates("a/b/main"); len(got) != 2 || got[0] != id("a:b/main") || got[1] != id("a/b:main") {
		t.Errorf("candidates = %v", got)
	}
	// Branch x.index cannot exist, so x's index file is never another
	// record's main file.
	if role, _ := Classify(jsonld.LayoutB, "ns@v2/db/x.index.json"); role != Secondary {
		t.Errorf("x.index.json is %v, want Secondary", role)
	}
	if got := Candidates("db/x.index"); len(got) != 0 {
		t.Errorf("x.index candidates = %v", got)
	}
	if id, ok := PathDefault("a/b/main"); !ok || id.String() != "a/b:main" {
		t.Errorf("PathDefault = %v %v", id, ok)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		l    jsonld.Layout
		key  string
		role Role
	}{
		{jsonld.LayoutB, "ns@v2/db/main.json", Defining},
		{jsonld.LayoutB, "ns@v2/db/main.index.json", Secondary},
		{jsonld.LayoutB, "ns@v2/db/main.json.lock", NotRecord},
		{jsonld.LayoutB, "ns@v2/db/main.json.0123456789abcdef.tmp", NotRecord},
		{jsonld.LayoutB, "ns@v2/db/README", NotRecord},
		{jsonld.LayoutB, "other/db/main.json", NotRecord},
		{jsonld.LayoutB, "ns@v2/db/main.status.json", OtherLayout},
		{jsonld.LayoutB, "ns@v2/db/main.head.json", OtherLayout},
		{jsonld.LayoutC, "ns@v2/db/main.status.json", Defining},
		{jsonld.LayoutC, "ns@v2/db/main.head.json", Secondary},
		{jsonld.LayoutC, "ns@v2/db/main.index.json", Secondary},
		{jsonld.LayoutC, "ns@v2/db/main.json", OtherLayout},
		{jsonld.LayoutC, "ns@v2/db/main.status.json.lock", NotRecord},
	}
	for _, c := range cases {
		if role, _ := Classify(c.l, c.key); role != c.role {
			t.Errorf("%s %s: %v, want %v", c.l, c.key, role, c.role)
		}
	}
}

func TestLongSegments(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	i := model.ID{Name: "t/" + long, Branch: "main"}
	files, err := Files(jsonld.LayoutB, i)
	if err != nil {
		t.Fatal(err)
	}
	for _, seg := range strings.Split(files[0].Key, "/") {
		if len(seg) > 255-len(".0123456789abcdef.tmp") {
			t.Errorf("segment of %d bytes", len(seg))
		}
	}
	_, st := Classify(jsonld.LayoutB, files[0].Key)
	if !Shortened(st) || st != Stem(i) {
		t.Errorf("stem %q: shortened %v", st, Shortened(st))
	}
	other := model.ID{Name: "t/" + long + "x", Branch: "main"}
	if Stem(other) == Stem(i) {
		t.Error("two long segments share a path")
	}
	if Shortened("db/main") {
		t.Error("db/main is not shortened")
	}
}

// match takes the last suffix that fits as the longest: of two suffixes
// of a layout where one ends the other, the shorter must come first.
func TestSuffixOrder(t *testing.T) {
	for l, files := range suffixes {
		for i, a := range files {
			for _, b := range files[i+1:] {
				if strings.HasSuffix(a.Key, b.Key) {
					t.Errorf("layout %v: %q comes before %q, which ends it", l, a.Key, b.Key)
				}
			}
		}
	}
}
