package jsonx

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// decimal is a JSON number in canonical form: ±0.digits × 10^exp, digits
// without leading or trailing zeros, empty for zero. Two numbers are equal
// exactly when their forms are. Unlike big.Rat it never builds 10^exp, which
// for a 9-byte payload number such as 1E999999 costs a quarter of a second
// and 400 KB: a compare-and-set must not be that cheap to make expensive.
type decimal struct {
	neg    bool
	digits string
	exp    string // the exponent's integer text
}

// parseDecimal reads s, a JSON number (an optional exponent sign "+" is
// accepted too, as strconv.FormatFloat writes it), and reports whether it is
// one.
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	s, d.neg = strings.CutPrefix(s, "-")
	mant, expText, hasExp := s, "", false
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, expText, hasExp = s[:i], s[i+1:], true
	}
	whole, frac, hasDot := strings.Cut(mant, ".")
	if !allDigits(whole) || !allDigits(frac) || whole == "" || (hasDot && frac == "") {
		return decimal{}, false
	}
	exp, ok := parseExp(expText, hasExp)
	if !ok {
		return decimal{}, false
	}
	digits := strings.TrimLeft(whole+frac, "0")
	// 0.digits × 10^(len(whole) − leading zeros dropped + written exponent)
	point := len(whole) - (len(whole) + len(frac) - len(digits))
	d.digits = strings.TrimRight(digits, "0")
	if d.digits == "" {
		return decimal{}, true // zero, whatever its sign or exponent
	}
	d.exp = addExp(exp, point)
	return d, true
}

// addExp returns the text of exp + point; exp is a signed decimal integer.
func addExp(exp string, point int) string {
	if e, err := strconv.ParseInt(exp, 10, 32); err == nil {
		return strconv.FormatInt(e+int64(point), 10)
	}
	e, _ := new(big.Int).SetString(exp, 10)
	return e.Add(e, big.NewInt(int64(point))).String()
}

// parseExp checks the exponent after "e" (an optional sign, then digits)
// and returns it without a "+" sign; "0" when there is none.
func parseExp(s string, present bool) (string, bool) {
	if !present {
		return "0", true
	}
	digits := s
	if s != "" && (s[0] == '+' || s[0] == '-') { // one sign at most
		digits = s[1:]
	}
	if digits == "" || !allDigits(digits) {
		return "", false
	}
	return strings.TrimPrefix(s, "+"), true
}

func allDigits(s string) bool { return strings.Trim(s, "0123456789") == "" }

// asDecimal returns v's canonical form when v is a JSON number of any of the
// Go types JSON-normal values use.
func asDecimal(v any) (decimal, bool) {
	switch x := v.(type) {
	case json.Number:
		return parseDecimal(string(x))
	case float64:
		// The shortest decimal that round-trips, as encoding/json writes it:
		// 1.2 means the JSON number 1.2, not the binary fraction near it.
		return parseDecimal(strconv.FormatFloat(x, 'g', -1, 64))
	case int:
		return parseDecimal(strconv.Itoa(x))
	case int64:
		return parseDecimal(strconv.FormatInt(x, 10))
	}
	return decimal{}, false
}

// int64 returns d as an int64 when it is an integer in range.
func (d decimal) int64() (int64, bool) {
	if d.digits == "" {
		return 0, true
	}
	exp, err := strconv.Atoi(d.exp)
	if err != nil || exp < len(d.digits) || exp > 19 {
		return 0, false
	}
	text := d.digits + strings.Repeat("0", exp-len(d.digits))
	if d.neg {
		text = "-" + text
	}
	i, err := strconv.ParseInt(text, 10, 64)
	return i, err == nil
}

// IsNumber reports whether s is a JSON number, without evaluating it.
func IsNumber(s string) bool {
	_, ok := parseDecimal(s)
	return ok
}
