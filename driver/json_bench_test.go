package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
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
		b.Run(fmt.Sprintf("keys=%d/bytes=%d/ParseObject", n, len(raw)), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := ParseObject(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
