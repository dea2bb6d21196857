package jsonld

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice/model"
)

const mainParts = Identity | HeadPart | StatusPart | ConfigPart

func mustDecode(t *testing.T, s string) *File {
	t.Helper()
	f, err := Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, s)
	}
	return f
}

func mustAssemble(t *testing.T, def *File, others ...*File) *model.Record {
	t.Helper()
	id, ok, err := def.RecordID()
	if err != nil || !ok {
		t.Fatalf("record id: ok=%v err=%v", ok, err)
	}
	rec, err := Assemble(id, def, others...)
	if err != nil {
		t.Fatalf("assemble: %v", err)
	}
	return rec
}

// TestPrefixes: the same record spelt with any prefix bound to the
// vocabulary, full IRIs, @vocab, a string @context, or an array @context.
func TestPrefixes(t *testing.T) {
	body := func(p string) string {
		return `"@id": "mydb:main", "@type": ["` + p + `LedgerSource"], "` + p + `ledger": {"@id": "mydb"},
		"` + p + `branch": "main", "` + p + `commitCid": "bafy1", "` + p + `t": 7, "` + p + `status": "ready",
		"` + p + `statusV": 3, "` + p + `configV": 0}`
	}
	files := map[string]string{
		"db":        `{"@context": {"db": "https://ns.flur.ee/db#"}, ` + body("db:"),
		"f":         `{"@context": {"f": "https://ns.flur.ee/db#"}, ` + body("f:"),
		"fluree":    `{"@context": {"fluree": "https://ns.flur.ee/db#"}, ` + body("fluree:"),
		"full IRIs": `{` + body("https://ns.flur.ee/db#"),
		"@vocab":    `{"@context": {"@vocab": "https://ns.flur.ee/db#"}, ` + body(""),
		"string":    `{"@context": "https://ns.flur.ee/db#", ` + body(""),
		"array":     `{"@context": ["https://example.org/ctx", {"x": {"@id": "https://ns.flur.ee/db#"}}], ` + body("x:"),
	}
	want := model.NewLedger(model.ID{Name: "mydb", Branch: "main"}, 0)
	h := model.RefValue("bafy1", 7)
	want.Head = &h
	want.Status.V = 3
	for name, s := range files {
		t.Run(name, func(t *testing.T) {
			assertSameRecord(t, want, mustAssemble(t, mustDecode(t, s)))
		})
	}
}

func TestOlderLedgerCommitForm(t *testing.T) {
	f := mustDecode(t, `{"@context": {"f": "https://ns.flur.ee/db#"}, "@id": "a:main", "@type": ["f:Database"],
		"f:ledger": {"@id": "a"}, "f:branch": "main", "f:ledgerCommit": {"@id": "fluree:file://c/t3.json"},
		"f:t": 3, "f:status": "ready", "f:defaultContext": {"@id": "fluree:file://ctx.json"}}`)
	rec := mustAssemble(t, f)
	if ref, _ := rec.Head.Ref(); ref.Address != "fluree:file://c/t3.json" || rec.Head.V != 3 {
		t.Errorf("head = %v", rec.Head)
	}
	// configV is absent but a config field is present: v1.
	if rec.Config.V != 1 || rec.Config.Payload.String("default_context") != "fluree:file://ctx.json" {
		t.Errorf("config = %v", rec.Config)
	}
}

func TestDefaults(t *testing.T) {
	// No statusV: 1. No config field: config_v 0, unborn.
	f := mustDecode(t, `{"@context": {"f": "https://ns.flur.ee/db#"}, "@id": "a:b", "@type": ["f:LedgerSource"],
		"f:ledger": {"@id": "a"}, "f:branch": "b", "f:t": 0, "f:status": "ready"}`)
	rec := mustAssemble(t, f)
	if rec.Status.V != 1 || rec.Config.V != 0 || rec.Config.Payload != nil || rec.Head.V != 0 {
		t.Errorf("defaults: %+v %v %v", rec.Status, rec.Config, rec.Head)
	}
	// configMeta alone: config_v 1.
	f = mustDecode(t, `{"@context": {"f": "https://ns.flur.ee/db#"}, "@id": "a:b", "@type": ["f:LedgerSource"],
		"f:ledger": {"@id": "a"}, "f:branch": "b", "f:t": 0, "f:status": "ready", "f:configMeta": {"x": 1}}`)
	rec = mustAssemble(t, f)
	if rec.Config.V != 1 || !rec.Config.Payload.Equal(model.Object{"x": json.Number("1")}) {
		t.Errorf("config = %v", rec.Config)
	}
}

func TestIndexMergeRule(t *testing.T) {
	main := func(inlineT int) *File {
		return mustDecode(t, `{"@context": {"db": "https://ns.flur.ee/db#"}, "@id": "a:main",
			"@type": ["db:LedgerSource"], "db:ledger": {"@id": "a"}, "db:branch": "main",
			"db:ledgerIndex": {"@id": "inline", "db:t": `+itoa(inlineT)+`}, "db:status": "ready"}`)
	}
	sidecar := mustDecode(t, `{"@context": {"db": "https://ns.flur.ee/db#"}, "db:ledgerIndex": {"@id": "sidecar", "db:t": 5}}`)
	for _, c := range []struct {
		inline int
		want   string
	}{{4, "sidecar"}, {5, "sidecar"}, {6, "inline"}} {
		rec := mustAssemble(t, main(c.inline), sidecar)
		if ref, _ := rec.Index.Ref(); ref.Address != c.want {
			t.Errorf("inline t %d, sidecar t 5: got %s, want %s", c.inline, ref.Address, c.want)
		}
	}
	if ref, _ := mustAssemble(t, main(2)).Index.Ref(); ref.Address != "inline" {
		t.Errorf("inline alone: got %s", ref.Address)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestUnknownMembersSurvive: a read-modify-write keeps every member the
// codec does not know, nested ones and other vocabularies included.
func TestUnknownMembersSurvive(t *testing.T) {
	src := `{"@context": {"f": "https://ns.flur.ee/db#", "ex": "https://example.org/"},
		"@id": "a:main", "@type": ["f:LedgerSource", "ex:Audited"], "f:ledger": {"@id": "a"}, "f:branch": "main",
		"f:commitCid": "c1", "f:t": 1, "f:status": "ready", "f:statusV": 1, "f:configV": 0,
		"f:futureField": {"f:nested": [1, 2.50, {"k": null}]}, "ex:owner": "team-a", "plain": true}`
	prev := mustDecode(t, src)
	rec := mustAssemble(t, prev)
	h := model.RefValue("c2", 2)
	rec.Head = &h
	for _, d := range []Dialect{Spec, FlureeV4} {
		out, err := Encode(rec, EncodeOptions{Dialect: d, Parts: mainParts, Prev: prev})
		if err != nil {
			t.Fatal(err)
		}
		back := mustDecode(t, string(out))
		got := mustAssemble(t, back)
		assertSameRecord(t, rec, got)
		p := d.prefix()
		for _, want := range []string{`"` + p + `:futureField": {`, `"f:nested": [`, `2.50`, `"ex:owner": "team-a"`,
			`"ex": "https://example.org/"`, `"ex:Audited"`, `"plain": true`} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("%s: %s lost:\n%s", d, want, out)
			}
		}
		// And again: a second rewrite is byte-identical (deterministic).
		again, err := Encode(got, EncodeOptions{Dialect: d, Parts: mainParts, Prev: back})
		if err != nil || !bytes.Equal(again, out) {
			t.Errorf("%s: second rewrite differs (%v):\n%s\n%s", d, err, out, again)
		}
	}
}

func TestEncodeDeterministic(t *testing.T) {
	rec := model.NewLedger(model.ID{Name: "a", Branch: "main"}, 1700000000)
	rec.Status = &model.Value{V: 4, Payload: model.Object{"state": "indexing", "z": "1", "a": json.Number("2"), "m": map[string]any{"y": true, "b": false}}}
	rec.Config = &model.Value{V: 2, Payload: model.Object{"default_context": "ctx", "config_id": "cid", "index_threshold": json.Number("10")}}
	var first []byte
	for i := 0; i < 20; i++ {
		out, err := Encode(rec, EncodeOptions{Dialect: Spec, Parts: mainParts})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = out
		} else if !bytes.Equal(out, first) {
			t.Fatalf("encoding differs between runs:\n%s\n%s", first, out)
		}
	}
	want := `{
  "@context": {
    "db": "https://ns.flur.ee/db#"
  },
  "@id": "a:main",
  "@type": [
    "db:Database",
    "db:LedgerSource"
  ],
  "db:ledger": {
    "@id": "a"
  },
  "db:branch": "main",
  "db:t": 0,
  "db:status": "indexing",
  "db:statusV": 4,
  "db:statusMeta": {
    "a": 2,
    "m": {
      "b": false,
      "y": true
    },
    "z": "1"
  },
  "db:configV": 2,
  "db:defaultContextCid": "ctx",
  "db:configCid": "cid",
  "db:configMeta": {
    "index_threshold": 10
  },
  "db:createdAt": 1700000000
}
`
	if string(first) != want {
		t.Errorf("got\n%s\nwant\n%s", first, want)
	}
}

// TestRoundTripRecords: records the fixtures do not cover survive both
// dialects.
func TestRoundTripRecords(t *testing.T) {
	id := model.ID{Name: "tenant/x", Branch: "release/v1"}
	retracted := model.NewLedger(id, 5)
	retracted.Retracted = true
	retracted.Status = &model.Value{V: 2, Payload: model.RetractedStatus(timeAt(9))}
	// Retracted flag without a retracted status, and the reverse.
	flagOnly := model.NewLedger(id, 0)
	flagOnly.Retracted = true
	stateOnly := model.NewLedger(id, 0)
	stateOnly.Status = &model.Value{V: 2, Payload: model.Object{"state": "retracted"}}
	// A config whose default_context is not a string stays in configMeta.
	odd := model.NewLedger(id, 0)
	odd.Config = &model.Value{V: 3, Payload: model.Object{"default_context": map[string]any{"@id": "x"}, "config_id": "c"}}
	gs := model.NewGraphSource(id, "db:R2rmlMapping", []string{"a:main", "b:main"}, model.Object{"k": "<&>"}, 0)
	ix := model.RefValue("fluree:s3://x", 9)
	gs.Index = &ix
	gs.Status = &model.Value{V: 7, Payload: model.Object{"state": "syncing", "progress": json.Number("0.5")}}
	gsUnborn := model.NewGraphSource(id, "https://example.org/Custom", nil, nil, 0)
	for name, rec := range map[string]*model.Record{
		"retracted": retracted, "flag only": flagOnly, "state only": stateOnly, "odd config": odd,
		"graph source": gs, "graph source unborn config": gsUnborn,
	} {
		for _, d := range []Dialect{Spec, FlureeV4} {
			t.Run(name+"/"+string(d), func(t *testing.T) {
				assertSameRecord(t, rec, roundTrip(t, rec, d, nil, nil))
			})
		}
	}
}

func TestLayoutCFiles(t *testing.T) {
	// Layout C: identity and status in one file, each other concern alone.
	rec := model.NewGraphSource(model.ID{Name: "s", Branch: "main"}, "db:Bm25Index", []string{"l:main"}, model.Object{"k1": "1"}, 0)
	ix := model.RefValue("i", 3)
	rec.Index = &ix
	for _, d := range []Dialect{Spec, FlureeV4} {
		var files []*File
		for _, parts := range []Part{Identity | StatusPart, HeadPart, IndexPart, ConfigPart} {
			b, err := Encode(rec, EncodeOptions{Dialect: d, Parts: parts})
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, mustDecode(t, string(b)))
		}
		assertSameRecord(t, rec, mustAssemble(t, files[0], files[1:]...))
	}
}

func TestMalformed(t *testing.T) {
	const ctx = `"@context": {"f": "https://ns.flur.ee/db#"}, "@id": "a:main", "@type": ["f:LedgerSource"], `
	bad := map[string]string{
		"not JSON":          `{"@id": `,
		"array":             `[1]`,
		"trailing data":     `{} {}`,
		"duplicate key":     `{"a": 1, "a": 2}`,
		"same IRI twice":    `{"@context": {"f": "https://ns.flur.ee/db#", "g": "https://ns.flur.ee/db#"}, "f:t": 1, "g:t": 2}`,
		"t not integer":     `{` + ctx + `"f:t": "x", "f:status": "ready"}`,
		"t fractional":      `{` + ctx + `"f:t": 1.5, "f:status": "ready"}`,
		"t without commit":  `{` + ctx + `"f:t": 4, "f:status": "ready"}`,
		"status not string": `{` + ctx + `"f:status": 3}`,
		"statusV alone":     `{` + ctx + `"f:statusV": 2}`,
		"statusMeta array":  `{` + ctx + `"f:status": "ready", "f:statusMeta": []}`,
		"config not JSON":   `{` + ctx + `"f:status": "ready", "f:graphSourceConfig": {"@value": "{"}}`,
		"config array":      `{` + ctx + `"f:status": "ready", "f:graphSourceConfig": {"@value": "[]"}}`,
		"two commits":       `{` + ctx + `"f:commitCid": "a", "f:ledgerCommit": {"@id": "b"}, "f:t": 1, "f:status": "ready"}`,
		"two indexes":       `{` + ctx + `"f:ledgerIndex": {"f:cid": "a", "f:t": 1}, "f:indexAddress": "b", "f:indexT": 1, "f:status": "ready"}`,
		"@id number":        `{"@id": 5}`,
		"type number":       `{"@type": [5]}`,
		"bad context":       `{"@context": 5}`,
		"deps not strings":  `{` + ctx + `"f:graphSourceDependencies": [1], "f:status": "ready"}`,
		"retracted string":  `{` + ctx + `"f:retracted": "yes", "f:status": "ready"}`,
		// Issue 14, item 6: a repeated key inside a member, or bad UTF-8, is
		// a corrupt file, not one whose last value silently wins.
		"nested duplicate key": `{` + ctx + `"f:status": "ready", "f:statusMeta": {"a": 1, "a": 2}}`,
		"bad UTF-8 value":      `{` + ctx + `"f:status": "ready", "f:statusMeta": {"a": "` + "\xff" + `"}}`,
		"bad UTF-8 key":        `{` + ctx + `"f:status": "ready", "x` + "\xfe" + `": 1}`,
		// Graphs beside an index without an address once panicked (nil map).
		"graphs of no index": `{` + ctx + `"f:status": "ready", "f:ledgerIndex": {}, "f:indexGraphs": {"@value": "{}"}}`,
	}
	for name, s := range bad {
		_, err := Decode([]byte(s))
		if err == nil {
			// Some problems only show when assembling.
			f, _ := Decode([]byte(s))
			_, err = Assemble(model.ID{Name: "a", Branch: "main"}, f)
		}
		if !errors.Is(err, ErrMalformed) || !errors.Is(err, model.ErrInternal) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

// TestMalformedNamesMember: a member of the wrong kind is named with what
// it is and what it should be.
func TestMalformedNamesMember(t *testing.T) {
	const ctx = `"@context": {"f": "https://ns.flur.ee/db#"}, "@id": "a:main", "@type": ["f:LedgerSource"], `
	for body, want := range map[string]string{
		`"f:t": "x", "f:status": "ready"`:                                                        "t is a JSON string, not an integer",
		`"f:t": 1.5, "f:status": "ready"`:                                                        "t is a JSON number, not an integer",
		`"f:status": ["ready"]`:                                                                  "status is a JSON array, not a string",
		`"f:status": "ready", "f:statusMeta": []`:                                                "statusMeta is a JSON array, not an object",
		`"f:ledgerCommit": {"@id": 5}, "f:t": 1, "f:status": "ready"`:                            `ledgerCommit is a JSON object, not a string or {"@id": string}`,
		`"f:status": "ready", "f:ledgerIndex": {}, "f:indexGraphs": {"@value": "{\"g\": null}"}`: "indexGraphs beside an index without an address",
	} {
		_, err := Decode([]byte(`{` + ctx + body + `}`))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want ErrMalformed saying %q", body, err, want)
		}
	}
}

func TestAssembleChecksNames(t *testing.T) {
	f := mustDecode(t, `{"@context": {"f": "https://ns.flur.ee/db#"}, "@id": "a/b:main", "f:ledger": {"@id": "a/b"}, "f:branch": "main", "f:status": "ready"}`)
	for _, id := range []model.ID{{Name: "a", Branch: "b/main"}, {Name: "a/b", Branch: "dev"}} {
		if _, err := Assemble(id, f); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "a/b:main") {
			t.Errorf("%s: err = %v", id, err)
		}
	}
	f = mustDecode(t, `{"@context": {"f": "https://ns.flur.ee/db#"}, "@id": "x:main", "f:ledger": {"@id": "y"}, "f:status": "ready"}`)
	if _, err := Assemble(model.ID{Name: "x", Branch: "main"}, f); !errors.Is(err, ErrMalformed) {
		t.Errorf("name disagreeing with @id: err = %v", err)
	}
}

func TestWithoutIndex(t *testing.T) {
	f := mustDecode(t, `{"@context": {"db": "https://ns.flur.ee/db#"}, "@id": "a:main", "@type": ["db:LedgerSource"],
		"db:ledger": {"@id": "a"}, "db:branch": "main", "db:ledgerIndex": {"@id": "x", "db:t": 3}, "db:status": "ready", "db:extra": 1}`)
	rec := mustAssemble(t, f)
	out, err := Encode(rec, EncodeOptions{Dialect: Spec, Parts: mainParts, Prev: f.WithoutIndex()})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("ledgerIndex")) || !bytes.Contains(out, []byte(`"db:extra": 1`)) {
		t.Errorf("got\n%s", out)
	}
}

func timeAt(sec int64) time.Time { return time.Unix(sec, 0) }

// TestNullMembers: null values mean absent, never a crash.
func TestNullMembers(t *testing.T) {
	for _, m := range []string{"ledgerIndex", "graphSourceIndex", "t", "status", "statusMeta", "configV", "graphSourceConfig", "ledger", "@type"} {
		key := "f:" + m
		if m == "@type" {
			key = m
		}
		s := `{"@context": {"f": "https://ns.flur.ee/db#"}, "@id": "a:main", "f:status": "ready", "` + key + `": null}`
		if m == "status" {
			s = `{"@context": {"f": "https://ns.flur.ee/db#"}, "@id": "a:main", "f:status": null}`
		}
		f, err := Decode([]byte(s))
		if err != nil {
			continue
		}
		_, _ = Assemble(model.ID{Name: "a", Branch: "main"}, f)
	}
}
