package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/google/go-cmp/cmp"

	"nameservice.dev/nameservice"
)

// verifyPass reads every selected record at both sides and compares their
// record JSON. A record missing at the target, or different, is a
// difference; a source record that cannot be read fails. Records only at the
// target are not looked for.
func verifyPass(ctx context.Context, o *options, src, dst *nameservice.NameService, rep *reporter, stdout, stderr io.Writer) bool {
	t := newTally("verify", o, rep, stdout, stderr)
	runPass(ctx, o, src, func(ctx context.Context, it item) outcome {
		out := outcome{id: it.id, action: "verify", result: resultFailed, err: it.err}
		if it.err != nil {
			return out
		}
		out.result, out.diff, out.err = verifyRecord(ctx, it.rec, dst)
		return out
	}, t)
	return t.finish()
}

// verifyRecord compares src with the target's record of the same ID.
func verifyRecord(ctx context.Context, src *nameservice.Record, dst *nameservice.NameService) (result, diff string, err error) {
	got, err := (&copier{dst: dst}).lookup(ctx, src.ID.String())
	if err != nil {
		return resultFailed, "", fmt.Errorf("reading the target: %w", err)
	}
	want, err := recordMap(src)
	if err != nil {
		return resultFailed, "", err
	}
	if got == nil {
		return resultDiffers, "", fmt.Errorf("missing at the target")
	}
	have, err := recordMap(got)
	if err != nil {
		return resultFailed, "", err
	}
	if d := cmp.Diff(want, have); d != "" {
		return resultDiffers, d, nil
	}
	return resultSame, "", nil
}

// recordMap decodes a record's JSON into plain maps, so that go-cmp shows
// which field differs rather than two long lines.
func recordMap(r *nameservice.Record) (map[string]any, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("record JSON of %s: %w", r.ID, err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // exact: a float64 would hide a difference in a large integer
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("record JSON of %s: %w", r.ID, err)
	}
	return m, nil
}
