package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestReportSmall runs the report on the drivers that need no server, at a
// tiny size, and checks its tables.
func TestReportSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var b strings.Builder
	if !run(ctx, &b, sizes{pushes: 5, writers: 2, rounds: 3, list: 12}, "mem,fs-c") {
		t.Fatalf("run failed:\n%s", b.String())
	}
	out := b.String()
	for _, want := range []string{"| mem |", "| fs (layout C) |", "write + fsync + rename + dir fsync", "conflicts across concerns", "Listing 12 ledgers"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "fs (layout B)") {
		t.Errorf("-only mem,fs-c ran layout B:\n%s", out)
	}
}
