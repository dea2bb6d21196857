package layout

import (
	"slices"
	"strings"
	"testing"

	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// FuzzPathID checks the path <-> ID mapping both ways. From an ID: every
// file of every layout classifies back to its role and to the ID's stem, and
// the ID is among that stem's candidates (or the stem is Shortened). From an
// arbitrary key: Classify never panics, and every candidate of the stem it
// returns is a valid ID whose stem it is.
//
//	go test -fuzz FuzzPathID ./internal/layout/
func FuzzPathID(f *testing.F) {
	for _, s := range []string{"mydb:main", "tenant/customers:release/v1.0", "a.b:c", strings.Repeat("n", 300) + ":main",
		"ns@v2/mydb/main.json", "ns@v2/mydb/main.index.json", "ns@v2/a/b/c.status.json", "ns@v2/x.tmp/y.json", "ns@v2//.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if id, err := model.ParseID(s); err == nil {
			checkID(t, id)
		}
		for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
			role, st := Classify(l, s)
			if role == NotRecord {
				if st != "" {
					t.Fatalf("Classify(%q) = NotRecord with stem %q", s, st)
				}
				continue
			}
			if !strings.HasPrefix(s, Root+"/"+st) {
				t.Fatalf("Classify(%q) stem %q is not the key's", s, st)
			}
			for _, id := range Candidates(st) {
				if err := id.Validate(); err != nil {
					t.Fatalf("Candidates(%q) holds invalid %v: %v", st, id, err)
				}
				if Stem(id) != st && !Shortened(st) {
					t.Fatalf("candidate %v of stem %q has stem %q", id, st, Stem(id))
				}
			}
			if id, ok := PathDefault(st); ok && id.Validate() != nil {
				t.Fatalf("PathDefault(%q) = %v, not valid", st, id)
			}
		}
	})
}

func checkID(t *testing.T, id model.ID) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		files, err := Files(l, id)
		if err != nil {
			t.Fatalf("Files(%v): %v", id, err)
		}
		for _, f := range files {
			role, st := Classify(l, f.Key)
			want := Secondary
			if f.Defining {
				want = Defining
			}
			if role != want || st != Stem(id) {
				t.Fatalf("%v: Classify(%q) = %v %q, want %v %q", id, f.Key, role, st, want, Stem(id))
			}
			if other := Other(l); plain(st) {
				if r, _ := Classify(other, f.Key); r != OtherLayout && r != Defining && r != Secondary {
					t.Fatalf("%v: the other layout calls %q %v", id, f.Key, r)
				}
			}
			if !Shortened(st) && !slices.Contains(Candidates(st), id) {
				t.Fatalf("%v is not among the candidates %v of its stem %q", id, Candidates(st), st)
			}
		}
	}
}
