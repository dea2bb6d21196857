package nswire

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzSSE writes an event and reads it back: the reader never panics on
// any stream, and returns what the writer wrote.
func FuzzSSE(f *testing.F) {
	f.Add("change", `{"id":"a:main"}`, "event: x\ndata: y\n\n: comment\n")
	f.Add("record", "line1\nline2", "data:\n\nid\n")
	f.Fuzz(func(t *testing.T, name, data, raw string) {
		r := NewSSEReader(strings.NewReader(raw), 1<<16)
		for i := 0; i < 100; i++ {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		if strings.ContainsAny(name, "\r\n:") || strings.Contains(data, "\r") || name == "" {
			return
		}
		rec := httptest.NewRecorder()
		w := NewSSEWriter(rec)
		if err := w.Event(name, "", []byte(data)); err != nil {
			t.Fatal(err)
		}
		ev, err := NewSSEReader(rec.Body, 1<<20).Next()
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if ev.Name != name || ev.Data != data {
			t.Fatalf("wrote %q %q, read %q %q", name, data, ev.Name, ev.Data)
		}
	})
}
