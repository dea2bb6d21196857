package jsonld

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"nameservice.dev/nameservice/internal/testing/fixturetest"
	"nameservice.dev/nameservice/model"
)

// fixtureRoot holds the ns@v2 fixtures.
var fixtureRoot = fixturetest.NSv2()

// fixtureFile is one file of a fixture record, with the parts it holds in
// layout B.
type fixtureFile struct {
	path  string
	data  []byte
	parts Part
}

// fixtureRecords returns, per case, each record's main and index files.
func fixtureRecords(t *testing.T) map[string][][2]*fixtureFile {
	t.Helper()
	cases, err := os.ReadDir(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][][2]*fixtureFile{}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		mains, _ := filepath.Glob(filepath.Join(fixtureRoot, c.Name(), "ns@v2", "*", "*.json"))
		for _, m := range mains {
			if strings.HasSuffix(m, ".index.json") {
				continue
			}
			pair := [2]*fixtureFile{read(t, m, Identity|HeadPart|StatusPart|ConfigPart), nil}
			if ix := strings.TrimSuffix(m, ".json") + ".index.json"; exists(ix) {
				pair[1] = read(t, ix, IndexPart)
			}
			out[c.Name()] = append(out[c.Name()], pair)
		}
	}
	if len(out) < 7 {
		t.Fatalf("found %d fixture cases under %s, want at least 7", len(out), fixtureRoot)
	}
	return out
}

func read(t *testing.T, path string, parts Part) *fixtureFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return &fixtureFile{path: path, data: b, parts: parts}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func decodePair(t *testing.T, pair [2]*fixtureFile) (*model.Record, *File, *File) {
	t.Helper()
	main, err := Decode(pair[0].data)
	if err != nil {
		t.Fatalf("%s: %v", pair[0].path, err)
	}
	var index *File
	if pair[1] != nil {
		if index, err = Decode(pair[1].data); err != nil {
			t.Fatalf("%s: %v", pair[1].path, err)
		}
	}
	id, ok, err := main.RecordID()
	if err != nil || !ok {
		t.Fatalf("%s: no record ID (%v)", pair[0].path, err)
	}
	rec, err := Assemble(id, main, index)
	if err != nil {
		t.Fatalf("%s: %v", pair[0].path, err)
	}
	return rec, main, index
}

func TestFixturesDecode(t *testing.T) {
	for name, pairs := range fixtureRecords(t) {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(fixtureRoot, name, "expected.json"))
			if err != nil {
				t.Fatal(err)
			}
			var expected []*model.Record
			if err := json.Unmarshal(raw, &expected); err != nil {
				t.Fatal(err)
			}
			byID := map[string]*model.Record{}
			for _, e := range expected {
				byID[e.ID.String()] = e
			}
			for _, pair := range pairs {
				got, _, _ := decodePair(t, pair)
				want := byID[got.ID.String()]
				if want == nil {
					t.Fatalf("%s: record %s not in expected.json", pair[0].path, got.ID)
				}
				assertSameRecord(t, want, got)
			}
		})
	}
}

// assertSameRecord compares records by their record JSON.
func assertSameRecord(t *testing.T, want, got *model.Record) {
	t.Helper()
	w, g := *want, *got
	w.CreatedAt, g.CreatedAt = 0, 0
	wj, _ := json.Marshal(&w)
	gj, _ := json.Marshal(&g)
	if !bytes.Equal(wj, gj) {
		t.Errorf("record %s:\nwant %s\n got %s", want.ID, wj, gj)
	}
}

// TestFlureeV4ByteIdentical re-encodes every Fluree v4 fixture file in the
// fluree-v4 dialect from the record read and the file it replaces: the bytes
// must be Fluree's own. The one exception is the graph-source index after
// its value changes, which gains "@type": "f:ContentId" (Fluree's S3
// backend requires it): checked in TestFlureeV4GraphIndexType.
func TestFlureeV4ByteIdentical(t *testing.T) {
	for name, pairs := range fixtureRecords(t) {
		if !strings.HasPrefix(name, "fluree-v4") {
			continue
		}
		for _, pair := range pairs {
			rec, main, index := decodePair(t, pair)
			encodeSame(t, rec, pair[0], main, FlureeV4)
			if pair[1] != nil {
				encodeSame(t, rec, pair[1], index, FlureeV4)
			}
		}
	}
}

func encodeSame(t *testing.T, rec *model.Record, f *fixtureFile, prev *File, d Dialect) {
	t.Helper()
	got, err := Encode(rec, EncodeOptions{Dialect: d, Parts: f.parts, Prev: prev})
	if err != nil {
		t.Fatalf("%s: %v", f.path, err)
	}
	if !bytes.Equal(got, f.data) {
		t.Errorf("%s: re-encoded file differs\n--- want\n%s\n--- got\n%s", f.path, f.data, got)
	}
}

// TestSpecByteIdentical does the same for the spec-dialect fixture.
func TestSpecByteIdentical(t *testing.T) {
	for _, pair := range fixtureRecords(t)["seed-dialect"] {
		rec, main, index := decodePair(t, pair)
		for _, f := range []struct {
			ff   *fixtureFile
			prev *File
		}{{pair[0], main}, {pair[1], index}} {
			got, err := Encode(rec, EncodeOptions{Dialect: Spec, Parts: f.ff.parts, Prev: f.prev})
			if err != nil {
				t.Fatal(err)
			}
			// The spec writer ends files with a newline, writes statusV and
			// configV, and gives the index file its @id.
			back, err := Decode(got)
			if err != nil {
				t.Fatalf("%s: %v\n%s", f.ff.path, err, got)
			}
			if f.ff.parts == IndexPart {
				if back.Index == nil || !back.Index.Equal(*rec.Index) || back.ID != rec.ID.String() {
					t.Errorf("%s: index file re-encoded as\n%s", f.ff.path, got)
				}
				continue
			}
			if !bytes.Contains(got, []byte(`"db:ledgerIndex": {`)) {
				t.Errorf("%s: inline index not kept:\n%s", f.ff.path, got)
			}
		}
	}
}

// TestBranchFixturesByteIdentical re-encodes the branch fixtures in their
// own dialect, from the record alone and with the file replaced: the bytes
// must be the same (f:sourceBranch and f:branchPoint as Fluree writes them,
// {source, t: 0} at the source's head, {source, commitCid, t} at a commit).
func TestBranchFixturesByteIdentical(t *testing.T) {
	cases := fixtureRecords(t)
	for name, d := range map[string]Dialect{"spec-branch": Spec, "fluree-v4-branch": FlureeV4} {
		if len(cases[name]) < 2 {
			t.Fatalf("fixture %s has %d records", name, len(cases[name]))
		}
		for _, pair := range cases[name] {
			rec, main, _ := decodePair(t, pair)
			encodeSame(t, rec, pair[0], main, d)
			if name == "spec-branch" {
				encodeSame(t, rec, pair[0], nil, d)
			}
		}
	}
}

func TestFlureeV4GraphIndexType(t *testing.T) {
	pair := fixtureRecords(t)["fluree-v4-graph-source"][0]
	rec, _, index := decodePair(t, pair)
	next := model.RefValue("bagnew", 43)
	rec.Index = &next
	got, err := Encode(rec, EncodeOptions{Dialect: FlureeV4, Parts: IndexPart, Prev: index})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "@context": {
    "f": "https://ns.flur.ee/db#"
  },
  "@id": "my-search:main",
  "f:graphSourceIndex": {
    "@type": "f:ContentId",
    "f:graphSourceIndexCid": "bagnew"
  },
  "f:graphSourceIndexT": 43
}`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestFixturesRoundTrip writes every fixture record in both dialects, with
// and without the file it replaces, and reads it back unchanged.
func TestFixturesRoundTrip(t *testing.T) {
	for _, pairs := range fixtureRecords(t) {
		for _, pair := range pairs {
			rec, main, index := decodePair(t, pair)
			for _, d := range []Dialect{Spec, FlureeV4} {
				for _, withPrev := range []bool{false, true} {
					pm, pi := main, index
					if !withPrev {
						pm, pi = nil, nil
					}
					assertSameRecord(t, rec, roundTrip(t, rec, d, pm, pi))
				}
			}
		}
	}
}

func roundTrip(t *testing.T, rec *model.Record, d Dialect, prevMain, prevIndex *File) *model.Record {
	t.Helper()
	mb, err := Encode(rec, EncodeOptions{Dialect: d, Parts: Identity | HeadPart | StatusPart | ConfigPart, Prev: prevMain})
	if err != nil {
		t.Fatal(err)
	}
	ib, err := Encode(rec, EncodeOptions{Dialect: d, Parts: IndexPart, Prev: prevIndex})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(mb)
	if err != nil {
		t.Fatalf("%v\n%s", err, mb)
	}
	i, err := Decode(ib)
	if err != nil {
		t.Fatalf("%v\n%s", err, ib)
	}
	got, err := Assemble(rec.ID, m, i)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, mb, ib)
	}
	return got
}
