package driver

import (
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"testing"
)

func TestJSONEqualComparesNumbersByValue(t *testing.T) {
	eq := [][2]any{
		{json.Number("2"), json.Number("2.0")},
		{json.Number("1.2"), 1.2},
		{json.Number("1e3"), 1000},
		{int64(7), json.Number("7")},
		{map[string]any{"a": []any{json.Number("1"), "x"}}, Object{"a": []any{1.0, "x"}}},
		{json.Number("-0"), json.Number("0e5")},
		{json.Number("0.00120"), json.Number("12E-4")},
		{json.Number("1E999999"), json.Number("10e999998")},
		{json.Number("-1.5e-999999"), json.Number("-15E-1000000")},
		{json.Number("1e21"), 1e21},
	}
	for _, p := range eq {
		if !JSONEqual(p[0], p[1]) || !JSONEqual(p[1], p[0]) {
			t.Errorf("JSONEqual(%#v, %#v) = false, want true", p[0], p[1])
		}
	}
	ne := [][2]any{
		{json.Number("2"), json.Number("2.5")},
		{json.Number("9007199254740993"), json.Number("9007199254740992")},
		{"2", json.Number("2")},
		{nil, map[string]any{}},
		{map[string]any{"a": 1}, map[string]any{"a": 1, "b": nil}},
		{[]any{1, 2}, []any{2, 1}},
		{true, "true"},
		{json.Number("1E999999"), json.Number("1E999998")},
		{json.Number("1E999999"), json.Number("-1E999999")},
		{json.Number("1e99999999999999999999"), json.Number("1e99999999999999999998")},
		{json.Number("0.1"), json.Number("1")},
	}
	for _, p := range ne {
		if JSONEqual(p[0], p[1]) {
			t.Errorf("JSONEqual(%#v, %#v) = true, want false", p[0], p[1])
		}
	}
}

// FuzzNumbersEqual checks the canonical decimal form against big.Rat, which
// evaluates the numbers, wherever big.Rat is cheap enough to ask.
//
//	go test -fuzz FuzzNumbersEqual ./driver/
func FuzzNumbersEqual(f *testing.F) {
	f.Add("1.50", "15e-1")
	f.Add("-0.0", "0")
	f.Add("100", "1E2")
	f.Add("7", "7.000001")
	f.Fuzz(func(t *testing.T, a, b string) {
		ra, okA := new(big.Rat).SetString(a)
		rb, okB := new(big.Rat).SetString(b)
		if !IsNumber(a) || !IsNumber(b) || !okA || !okB || bigExp(a) || bigExp(b) {
			return // big.Rat takes more than JSON numbers, and is slow on large exponents
		}
		if got, want := JSONEqual(json.Number(a), json.Number(b)), ra.Cmp(rb) == 0; got != want {
			t.Fatalf("JSONEqual(%s, %s) = %v, big.Rat says %v", a, b, got, want)
		}
		i, isInt := AsInt(json.Number(a))
		wantInt := ra.IsInt() && ra.Num().IsInt64()
		if isInt != wantInt || (isInt && i != ra.Num().Int64()) {
			t.Fatalf("AsInt(%s) = %d, %v; big.Rat says %v, %v", a, i, isInt, ra.Num(), wantInt)
		}
	})
}

func bigExp(s string) bool {
	i := strings.LastIndexAny(s, "eE")
	return i >= 0 && len(strings.TrimLeft(s[i+1:], "+-0")) > 3
}

func TestIsNumberRefusesWhatJSONRefuses(t *testing.T) {
	for _, s := range []string{"", "-", ".5", "1.", "1e", "1e+", "--1", "+1", "1e--2", "0x10", "1/2", "NaN", "+Inf", "1 "} {
		if IsNumber(s) {
			t.Errorf("IsNumber(%q) = true", s)
		}
	}
}

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

func TestCondition(t *testing.T) {
	a, b := RefValue("a", 5), RefValue("b", 5)
	cases := []struct {
		c         Condition
		cur, next Value
		want      bool
	}{
		{IfAbove(), a, RefValue("x", 6), true},
		{IfAbove(), a, b, false},
		{IfAtLeast(), a, b, true},
		{IfAtLeast(), a, RefValue("x", 4), false},
		{IfEquals(a), a, RefValue("x", 6), true},
		{IfEquals(b), a, RefValue("x", 6), false},
		{IfEquals(Value{V: 5}), a, RefValue("x", 6), false},
	}
	for i, c := range cases {
		if got := c.c.Holds(c.cur, c.next); got != c.want {
			t.Errorf("case %d: Holds = %v, want %v", i, got, c.want)
		}
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
		strings.Repeat("[", MaxDecodeDepth+1) + strings.Repeat("]", MaxDecodeDepth+1): "deeper than 512",
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
