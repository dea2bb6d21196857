package model

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestRecordJSONRoundTrip(t *testing.T) {
	id, _ := ParseID("search:main")
	gs := NewGraphSource(id, "db:Bm25Index", []string{"mydb:main"}, Object{"k1": json.Number("1.2")}, 1700000000)
	gs.Index = &Value{V: 42, Payload: Object{"address": "idx", "t": json.Number("42")}}
	led := NewLedger(ID{"mydb", "main"}, 0)
	*led.Head = RefValue("c5", 5)
	led.SourceBranch, led.Branches, led.Retracted = "trunk", 2, true
	for _, r := range []*Record{gs, led} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Record
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		b2, _ := json.Marshal(&back)
		if string(b) != string(b2) {
			t.Fatalf("round trip changed the record:\n%s\n%s", b, b2)
		}
	}
	b, _ := json.Marshal(gs)
	const want = `{"id":"search:main","kind":"graph_source","name":"search","branch":"main","retracted":false,"source_type":"db:Bm25Index","dependencies":["mydb:main"],"created_at":1700000000,"index":{"v":42,"payload":{"address":"idx","t":42}},"status":{"v":1,"payload":{"state":"ready"}},"config":{"v":1,"payload":{"k1":1.2}}}`
	if string(b) != want {
		t.Fatalf("record JSON =\n%s\nwant\n%s", b, want)
	}
}

func TestRecordJSONRejects(t *testing.T) {
	for in, why := range map[string]string{
		`{"id":"a:b:c","kind":"ledger"}`:        "invalid id",
		`{"id":"a","kind":"table"}`:             "kind",
		`{"id":"a","name":"b","kind":"ledger"}`: "disagree",
		`{"id":"a","kind":"ledger","bogus":1}`:  "unknown field",
		`{"id":"a","kind":"graph_source","head":{"v":0},"index":{"v":0},"status":{"v":1,"payload":{"state":"ready"}},"config":{"v":0}}`:                           "has no head",
		`{"id":"a","kind":"ledger","head":{"v":3,"payload":{"address":"x","t":2}},"index":{"v":0},"status":{"v":1,"payload":{"state":"ready"}},"config":{"v":0}}`: "differs",
		`{"id":"a","kind":"ledger","head":{"v":0},"index":{"v":0},"status":{"v":1},"config":{"v":0}}`:                                                             "status cannot be unborn",
	} {
		var r Record
		err := json.Unmarshal([]byte(in), &r)
		if err == nil || !strings.Contains(err.Error(), why) || Code(err) != InvalidArgument {
			t.Errorf("Unmarshal(%s) error = %v; want InvalidArgument saying %q", in, err, why)
		}
	}
}

func FuzzRecordJSON(f *testing.F) {
	f.Add(`{"id":"mydb:main","kind":"ledger","name":"mydb","branch":"main","retracted":false,"head":{"v":5,"payload":{"address":"c","t":5}},"index":{"v":0},"status":{"v":1,"payload":{"state":"ready"}},"config":{"v":0}}`)
	f.Add(`{"id":"s:main","kind":"graph_source","index":{"v":0},"status":{"v":2,"payload":{"state":"retracted"}},"config":{"v":1,"payload":{"a":[1,{"b":null}]}}}`)
	f.Fuzz(func(t *testing.T, in string) {
		var r Record
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			var se *json.SyntaxError
			if Code(err) != InvalidArgument && !errors.As(err, &se) {
				t.Fatalf("error %v is neither InvalidArgument nor a syntax error", err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("decoded record is invalid: %v", err)
		}
		b, err := json.Marshal(&r)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var back Record
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("re-decode %s: %v", b, err)
		}
	})
}

func TestCode(t *testing.T) {
	if Code(nil) != Unknown || Code(errors.New("x")) != Unknown {
		t.Fatal("Code of a plain error is not Unknown")
	}
	wrapped := errors.Join(errors.New("ctx"), ErrThrottled)
	if Code(wrapped) != Throttled {
		t.Fatalf("Code(%v) = %v", wrapped, Code(wrapped))
	}
}

// Every code after Unknown has a sentinel that Code maps back to it, up to
// the last named code (internal/nswire relies on the run being unbroken).
func TestSentinel(t *testing.T) {
	if Unknown.Sentinel() != nil {
		t.Fatalf("Unknown.Sentinel() = %v, want nil", Unknown.Sentinel())
	}
	for c := Unknown + 1; int(c) < len(codeNames); c++ {
		s := c.Sentinel()
		if s == nil || Code(s) != c {
			t.Fatalf("%v.Sentinel() = %v, whose code is %v", c, s, Code(s))
		}
	}
	if InvalidArgument.Sentinel() != ErrInvalidArgument {
		t.Fatalf("InvalidArgument.Sentinel() = %v, want ErrInvalidArgument", InvalidArgument.Sentinel())
	}
	if c := ErrorCode(len(codeNames)); c.Sentinel() != nil {
		t.Fatalf("%v.Sentinel() = %v, want nil", c, c.Sentinel())
	}
}
