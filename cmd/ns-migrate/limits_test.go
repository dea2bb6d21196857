package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/model"
)

// TestLimitsThroughMigrate: a record at every limit (docs/model.md) is
// copied from a directory and verified; a record a foreign writer put over a
// limit is reported by name, not written, and the run goes on and exits 1.
func TestLimitsThroughMigrate(t *testing.T) {
	ctx := context.Background()
	from, to := "file://"+t.TempDir(), memURL(t, "dst")
	src := open(t, from)
	must(t, src.Init(ctx, "big"))
	addr := strings.Repeat("a", guard.MaxAddressBytes)
	if _, err := src.PublishCommit(ctx, "big", 1, addr); err != nil {
		t.Fatal(err)
	}
	deep := map[string]any{"l": []any{json.Number("1")}}
	for range guard.MaxPayloadDepth - 2 {
		deep = map[string]any{"a": deep}
	}
	if _, err := src.PushConfig(ctx, "big", nameservice.Value{}, nameservice.Value{V: 1, Payload: deep}); err != nil {
		t.Fatal(err)
	}
	must(t, src.Init(ctx, "ok"))
	over := model.NewLedger(model.ID{Name: "over", Branch: "main"}, 1)
	*over.Config = model.Value{V: 1, Payload: model.Object{"s": strings.Repeat("x", guard.MaxPayloadBytes)}}
	var raw driver.Driver
	if !src.As(&raw) {
		t.Fatal("As(*driver.Driver) = false")
	}
	must(t, raw.Create(ctx, over)) // under the portable layer, as a foreign writer could

	r := want(t, exitFail, "--from", from, "--to", to, "--verify")
	if !strings.Contains(r.stdout, "over:main") || !strings.Contains(r.stdout, "65536") {
		t.Fatalf("the over-limit record is not reported with its limit:\n%s", r.stdout)
	}
	dst := open(t, to)
	for _, id := range []string{"big", "ok"} {
		if got, want := lookupJSON(t, dst, id), lookupJSON(t, src, id); got == "" || got != want {
			t.Fatalf("%s not copied exactly:\n%.200s\nwant\n%.200s", id, got, want)
		}
	}
	if lookupJSON(t, dst, "over") != "" {
		t.Fatal("the over-limit record was written")
	}
}
