package jsonld

import "testing"

// ledgerFile is a layout-B ledger file as the driver writes it.
const ledgerFile = `{
  "@context": {
    "db": "https://ns.flur.ee/db#"
  },
  "@id": "ledger-000001:main",
  "@type": [
    "db:Database",
    "db:LedgerSource"
  ],
  "db:ledger": {
    "@id": "ledger-000001"
  },
  "db:branch": "main",
  "db:t": 0,
  "db:status": "ready",
  "db:statusV": 1,
  "db:configV": 0,
  "db:createdAt": 1,
  "db:incarnation": "5f546a025073eec5e9afabc0"
}
`

// BenchmarkDecode decodes one ledger file: the cost a listing pays per
// record file on top of reading it.
func BenchmarkDecode(b *testing.B) {
	data := []byte(ledgerFile)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSplitObject checks the fast member split against encoding/json's
// tokens on text with escapes, nesting, whitespace and repeated keys.
func TestSplitObject(t *testing.T) {
	for _, s := range []string{
		ledgerFile,
		`{}`, ` { } `, `[]`, `"x"`, `1`, `null`,
		`{"a":1,"a":2}`,
		`{"a\u0062":1,"ab":2}`,
		`{"k":"q\"uo}te]","n":-1.5e+10,"t":true,"f":false,"z":null}`,
		"{\"a\" :\t[ {\"b\" : [ ] } , \"}\" , 0 ] ,\n\"c\":{}}",
		`{"\ud83d\ude00":"\ud83d\ude00x","é":"\/"}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"b":18}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"q":18}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"b":17}`,
	} {
		sameMembers(t, []byte(s))
		sameCompact(t, []byte(s))
	}
}
