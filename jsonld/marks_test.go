package jsonld

import (
	"slices"
	"strings"
	"testing"

	"nameservice.dev/nameservice/model"
)

// TestIncarnationAndTombstone: f:incarnation and f:purged round-trip in
// both dialects, a write without Incarnation keeps Prev's token, and a
// write that is not a tombstone drops Prev's f:purged.
func TestIncarnationAndTombstone(t *testing.T) {
	rec := model.NewLedger(model.ID{Name: "db", Branch: "main"}, 1)
	for _, d := range []Dialect{Spec, FlureeV4} {
		b, err := Encode(rec, EncodeOptions{Dialect: d, Parts: mainParts, Incarnation: "tok1"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"`+d.prefix()+`:incarnation": "tok1"`) {
			t.Fatalf("%s: no %s:incarnation in\n%s", d, d.prefix(), b)
		}
		f := mustDecode(t, string(b))
		if f.Incarnation != "tok1" || f.Purged {
			t.Fatalf("%s: decoded incarnation %q purged %v", d, f.Incarnation, f.Purged)
		}
		h := model.RefValue("c", 2)
		rec2 := rec.Clone()
		rec2.Head = &h
		b, err = Encode(rec2, EncodeOptions{Dialect: d, Parts: mainParts, Prev: f})
		if err != nil {
			t.Fatal(err)
		}
		if f2 := mustDecode(t, string(b)); f2.Incarnation != "tok1" || f2.Head.V != 2 {
			t.Fatalf("%s: rewrite lost the token or the head: %q %v", d, f2.Incarnation, f2.Head)
		}
		tomb, err := Encode(rec, EncodeOptions{Dialect: d, Parts: 0, Incarnation: "tok1", Tombstone: true})
		if err != nil {
			t.Fatal(err)
		}
		tf := mustDecode(t, string(tomb))
		if !tf.Purged || tf.Incarnation != "tok1" || tf.Index != nil || tf.Head != nil {
			t.Fatalf("%s: tombstone decoded as %+v\n%s", d, tf, tomb)
		}
		ix := model.RefValue("i", 1)
		rec2.Index = &ix
		b, err = Encode(rec2, EncodeOptions{Dialect: d, Parts: IndexPart, Prev: tf, Incarnation: "tok2"})
		if err != nil {
			t.Fatal(err)
		}
		if f3 := mustDecode(t, string(b)); f3.Purged || f3.Incarnation != "tok2" || f3.Index.V != 1 {
			t.Fatalf("%s: write over a tombstone: purged %v token %q index %v", d, f3.Purged, f3.Incarnation, f3.Index)
		}
	}
	if _, err := Decode([]byte(`{"@context":{"f":"` + Vocab + `"},"f:purged":"yes"}`)); err == nil {
		t.Fatal("a non-boolean f:purged decoded")
	}
	if _, err := Decode([]byte(`{"@context":{"f":"` + Vocab + `"},"f:incarnation":3}`)); err == nil {
		t.Fatal("a non-string f:incarnation decoded")
	}
}

// TestLayoutCInlineValues: a layout-C status file created with every
// concern inline gives them to Assemble until a concern file of the record
// holds one, which then wins.
func TestLayoutCInlineValues(t *testing.T) {
	rec := model.NewLedger(model.ID{Name: "db", Branch: "main"}, 1)
	h, ix, cfg := model.RefValue("c", 2), model.RefValue("i", 1), model.Value{V: 2, Payload: model.Object{"k": "v"}}
	rec.Head, rec.Index, rec.Config = &h, &ix, &cfg
	for _, d := range []Dialect{Spec, FlureeV4} {
		b, err := Encode(rec, EncodeOptions{Dialect: d, Parts: Identity | StatusPart | HeadPart | IndexPart | ConfigPart})
		if err != nil {
			t.Fatal(err)
		}
		def := mustDecode(t, string(b))
		assertSameRecord(t, rec, mustAssemble(t, def, nil, nil, nil))
		next := rec.Clone()
		h3, ix2, cfg3 := model.RefValue("c", 3), model.RefValue("i", 2), model.Value{V: 3, Payload: model.Object{"k": "w"}}
		next.Head, next.Index, next.Config = &h3, &ix2, &cfg3
		var others []*File
		for _, p := range []Part{HeadPart, IndexPart, ConfigPart} {
			b, err := Encode(next, EncodeOptions{Dialect: d, Parts: p})
			if err != nil {
				t.Fatal(err)
			}
			others = append(others, mustDecode(t, string(b)))
		}
		assertSameRecord(t, next, mustAssemble(t, def, others...))
	}
}

// TestPurgeTimes: f:purgedAt and f:collectUntil round-trip on a tombstone
// in both dialects, a write that sets none drops Prev's, and a value that
// is not an integer does not decode.
func TestPurgeTimes(t *testing.T) {
	rec := &model.Record{ID: model.ID{Name: "db", Branch: "main"}}
	for _, d := range []Dialect{Spec, FlureeV4} {
		b, err := Encode(rec, EncodeOptions{Dialect: d, Incarnation: "tok", Tombstone: true, PurgedAt: 1700000000123, CollectUntil: 1700000060000})
		if err != nil {
			t.Fatal(err)
		}
		f := mustDecode(t, string(b))
		if !f.Purged || f.PurgedAt != 1700000000123 || f.CollectUntil != 1700000060000 {
			t.Fatalf("%s: decoded purged %v at %d until %d\n%s", d, f.Purged, f.PurgedAt, f.CollectUntil, b)
		}
		again, err := Encode(rec, EncodeOptions{Dialect: d, Tombstone: true, Prev: f, PurgedAt: 5})
		if err != nil {
			t.Fatal(err)
		}
		if g := mustDecode(t, string(again)); g.PurgedAt != 5 || g.CollectUntil != 0 || g.Incarnation != "tok" {
			t.Fatalf("%s: re-sealed file has purgedAt %d collectUntil %d token %q\n%s", d, g.PurgedAt, g.CollectUntil, g.Incarnation, again)
		}
		live := model.NewLedger(rec.ID, 1)
		b, err = Encode(live, EncodeOptions{Dialect: d, Parts: mainParts, Prev: f, Incarnation: "tok2"})
		if err != nil {
			t.Fatal(err)
		}
		if g := mustDecode(t, string(b)); g.Purged || g.PurgedAt != 0 || g.CollectUntil != 0 {
			t.Fatalf("%s: a record written over a mark kept its marks\n%s", d, b)
		}
	}
	if _, err := Decode([]byte(`{"@context":{"f":"` + Vocab + `"},"f:purgedAt":"soon"}`)); err == nil {
		t.Fatal("a non-integer f:purgedAt decoded")
	}
}

// TestWriteIDs: f:writeIDs round-trips in both dialects, a write with a
// WriteID puts it first and keeps the newest MaxWriteIDs entries, one
// without keeps Prev's (a seal too), and a value that is not a list of
// strings does not decode.
func TestWriteIDs(t *testing.T) {
	rec := model.NewLedger(model.ID{Name: "db", Branch: "main"}, 1)
	for _, d := range []Dialect{Spec, FlureeV4} {
		var prev *File
		for i, id := range []string{"a@1", "b@2", "c@3", "d@4"} {
			b, err := Encode(rec, EncodeOptions{Dialect: d, Parts: mainParts, Prev: prev, Incarnation: "tok", WriteID: id})
			if err != nil {
				t.Fatal(err)
			}
			prev = mustDecode(t, string(b))
			if prev.WriteIDs[0] != id || len(prev.WriteIDs) != min(i+1, MaxWriteIDs) {
				t.Fatalf("%s: after writing %s: f:writeIDs %q\n%s", d, id, prev.WriteIDs, b)
			}
		}
		if want := []string{"d@4", "c@3", "b@2"}; !slices.Equal(prev.WriteIDs, want) {
			t.Fatalf("%s: f:writeIDs %q, want %q", d, prev.WriteIDs, want)
		}
		h := model.RefValue("c", 2)
		next := rec.Clone()
		next.Head = &h
		b, err := Encode(next, EncodeOptions{Dialect: d, Parts: mainParts, Prev: prev})
		if err != nil {
			t.Fatal(err)
		}
		if f := mustDecode(t, string(b)); !slices.Equal(f.WriteIDs, prev.WriteIDs) {
			t.Fatalf("%s: a write without a WriteID changed f:writeIDs to %q", d, f.WriteIDs)
		}
		b, err = Encode(next, EncodeOptions{Dialect: d, Parts: mainParts, Prev: prev, Tombstone: true, PurgedAt: 1})
		if err != nil {
			t.Fatal(err)
		}
		if f := mustDecode(t, string(b)); !f.Purged || !slices.Equal(f.WriteIDs, prev.WriteIDs) {
			t.Fatalf("%s: a seal lost f:writeIDs: %q", d, f.WriteIDs)
		}
	}
	if _, err := Decode([]byte(`{"@context":{"f":"` + Vocab + `"},"f:writeIDs":[1]}`)); err == nil {
		t.Fatal("a list of numbers as f:writeIDs decoded")
	}
}
