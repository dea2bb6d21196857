package model

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"nameservice.dev/nameservice/internal/jsonx"
)

func TestObjectMarshalIsStable(t *testing.T) {
	o := Object{"z": 1, "t": json.Number("3"), "a": "x", "address": "addr", "nested": map[string]any{"b": 1, "a": 2}}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"address":"addr","t":3,"a":"x","nested":{"a":2,"b":1},"z":1}`
	if string(b) != want {
		t.Fatalf("marshal = %s, want %s", b, want)
	}
}

func TestParseObjectRejectsNonObjects(t *testing.T) {
	for _, in := range []string{`[1]`, `"s"`, `3`, `{"a":1} x`, `{`} {
		if _, err := ParseObject([]byte(in)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ParseObject(%s) error = %v, want ErrInvalidArgument", in, err)
		}
	}
	if o, err := ParseObject([]byte("null")); o != nil || err != nil {
		t.Errorf("ParseObject(null) = %v, %v", o, err)
	}
}

func TestCloneIsDeep(t *testing.T) {
	o := Object{"m": map[string]any{"k": []any{"v"}}}
	c := o.Clone()
	c["m"].(map[string]any)["k"].([]any)[0] = "changed"
	if o["m"].(map[string]any)["k"].([]any)[0] != "v" {
		t.Fatal("Clone shares nested values")
	}
}

// TestParseObjectRefusesWhatJSONWouldRewrite: encoding/json keeps the last
// of two equal keys and turns bad UTF-8 into U+FFFD; a payload must be
// refused instead (issue 14, item 6).
func TestParseObjectRefusesWhatJSONWouldRewrite(t *testing.T) {
	for in, why := range map[string]string{
		`{"a":1,"a":2}`:               `key "a" twice`,
		`{"x":{"b":[{"c":1,"c":1}]}}`: `key "c" twice`,
		"{\"a\":\"\xff\"}":            "UTF-8",
		"{\"\xfe\":1}":                "UTF-8",
		strings.Repeat("[", jsonx.MaxDepth+1) + strings.Repeat("]", jsonx.MaxDepth+1): "deeper than 512",
	} {
		_, err := ParseObject([]byte(in))
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseObject(%.40q) = %v, want ErrInvalidArgument saying %q", in, err, why)
		}
	}
	if _, err := NormalizeObject(map[string]any{"a": []any{"ok", "b\xffad"}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NormalizeObject with bad UTF-8 = %v, want ErrInvalidArgument", err)
	}
}
