package remote

import (
	"encoding/json"
	"strings"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/nswire"
)

// FuzzReadCollect: any answer decodes to totals, reports and an error,
// never a panic; a report is only ever made from a line that decoded, and
// an answer without its totals line is an error.
func FuzzReadCollect(f *testing.F) {
	f.Add(`{"id":"a:main","removed":true,"reason":"purged 1h ago"}` + "\n" + `{"stats":{"Removed":1,"Kept":0}}` + "\n")
	f.Add(`{"error":{"error":"boom","code":"Unavailable"}}` + "\n")
	f.Add(`{"id":"a:main"}`)
	f.Add("\n\n{")
	f.Add(`{"stats":null}`)
	f.Fuzz(func(t *testing.T, answer string) {
		n := 0
		st, err := readCollect(strings.NewReader(answer), func(driver.Collected) { n++ })
		if n > strings.Count(answer, "\n")+1 {
			t.Fatalf("%d reports from %d lines", n, strings.Count(answer, "\n")+1)
		}
		if err == nil && !hasTotals(answer) {
			t.Fatalf("totals %+v from an answer without a stats line", st)
		}
		if err != nil && st != (driver.CollectStats{}) {
			t.Fatalf("error %v with totals %+v", err, st)
		}
	})
}

// hasTotals reports whether a line of answer decodes to a totals line.
func hasTotals(answer string) bool {
	for l := range strings.SplitSeq(answer, "\n") {
		var cl nswire.CollectLine
		if json.Unmarshal([]byte(l), &cl) == nil && cl.Stats != nil {
			return true
		}
	}
	return false
}
