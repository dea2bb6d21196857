package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
)

// BenchmarkParseObject measures the strict payload parser beside plain
// encoding/json decoding (which lets repeated keys and bad UTF-8 through), at
// several payload sizes.
func BenchmarkParseObject(b *testing.B) {
	for _, n := range []int{4, 64, 1024} {
		var sb strings.Builder
		sb.WriteString(`{"state":"ready"`)
		for i := range n {
			fmt.Fprintf(&sb, `,"k%d":{"n":%d,"s":"value %d","l":[1,2.5,null,true]}`, i, i, i)
		}
		sb.WriteString("}")
		raw := []byte(sb.String())
		b.Run(fmt.Sprintf("keys=%d/bytes=%d/encoding-json", n, len(raw)), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				dec := json.NewDecoder(bytes.NewReader(raw))
				dec.UseNumber()
				var v any
				if err := dec.Decode(&v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("keys=%d/bytes=%d/Decode", n, len(raw)), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := Decode(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNumberEqual compares two spellings of one number by value at
// growing exponents, beside big.Rat (what Equal used before), whose cost
// grows with the exponent's value rather than with its text.
func BenchmarkNumberEqual(b *testing.B) {
	for _, exp := range []int{2, 300, 30000} {
		x, y := json.Number(fmt.Sprintf("1.5E%d", exp)), json.Number(fmt.Sprintf("15e%d", exp-1))
		b.Run(fmt.Sprintf("exp=%d/JSONEqual", exp), func(b *testing.B) {
			for b.Loop() {
				if !Equal(x, y) {
					b.Fatal("not equal")
				}
			}
		})
		b.Run(fmt.Sprintf("exp=%d/big.Rat", exp), func(b *testing.B) {
			for b.Loop() {
				rx, _ := new(big.Rat).SetString(string(x))
				ry, _ := new(big.Rat).SetString(string(y))
				if rx.Cmp(ry) != 0 {
					b.Fatal("not equal")
				}
			}
		})
	}
}
