package jsonx

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// namedMap stands for a type defined as a map, as model.Object is.
type namedMap map[string]any

func TestJSONEqualComparesNumbersByValue(t *testing.T) {
	eq := [][2]any{
		{json.Number("2"), json.Number("2.0")},
		{json.Number("1.2"), 1.2},
		{json.Number("1e3"), 1000},
		{int64(7), json.Number("7")},
		{map[string]any{"a": []any{json.Number("1"), "x"}}, namedMap{"a": []any{1.0, "x"}}},
		{json.Number("-0"), json.Number("0e5")},
		{json.Number("0.00120"), json.Number("12E-4")},
		{json.Number("1E999999"), json.Number("10e999998")},
		{json.Number("-1.5e-999999"), json.Number("-15E-1000000")},
		{json.Number("1e21"), 1e21},
	}
	for _, p := range eq {
		if !Equal(p[0], p[1]) || !Equal(p[1], p[0]) {
			t.Errorf("Equal(%#v, %#v) = false, want true", p[0], p[1])
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
		if Equal(p[0], p[1]) {
			t.Errorf("Equal(%#v, %#v) = true, want false", p[0], p[1])
		}
	}
}

// FuzzNumbersEqual checks the canonical decimal form against big.Rat, which
// evaluates the numbers, wherever big.Rat is cheap enough to ask.
//
//	go test -fuzz FuzzNumbersEqual ./internal/jsonx/
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
		if got, want := Equal(json.Number(a), json.Number(b)), ra.Cmp(rb) == 0; got != want {
			t.Fatalf("Equal(%s, %s) = %v, big.Rat says %v", a, b, got, want)
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
	for _, s := range []string{"", "-", ".5", "1.", "1e", "1e+", "--1", "+1", "1e--2", "1e+-5", "1e-+5", "1e++5", "0x10", "1/2", "NaN", "+Inf", "1 "} {
		if IsNumber(s) {
			t.Errorf("IsNumber(%q) = true", s)
		}
	}
}
