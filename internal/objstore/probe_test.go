package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// TestProbeWritesAgainWhenUnavailable: a probe whose first write the store
// answers unavailable removes that object, in case it landed, and writes
// again under another key; the probe succeeds. A lasting failure, or one
// of another kind, ends it.
func TestProbeWritesAgainWhenUnavailable(t *testing.T) {
	for _, c := range []struct {
		name      string
		fails     int
		err       error
		wantErr   bool
		wantPuts0 int // first writes (no precondition) sent
	}{
		{"once unavailable", 1, model.ErrUnavailable, false, 2},
		{"always unavailable", 99, model.ErrUnavailable, true, 3},
		{"permission denied", 1, model.ErrPermissionDenied, true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newMemStore()
			var keys []string
			put := func(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
				if pc == (objstore.Precondition{}) {
					keys = append(keys, key)
					if len(keys) <= c.fails { // the write lands; its answer says otherwise
						_, _ = st.Put(ctx, key, data, pc)
						return "", fmt.Errorf("store: write %s: %w: 409 ExistingObjectIsDirectory", key, c.err)
					}
				}
				return st.Put(ctx, key, data, pc)
			}
			refusal := func(err error) (bool, error) {
				if errors.Is(err, objstore.ErrPrecondition) {
					return true, nil
				}
				return false, err
			}
			r, err := objstore.Probe(context.Background(), objstore.ProbeOps{Put: put, Delete: st.Delete,
				Wrong: func(tag string) string { return tag + "x" }, Refusal: refusal}, nil)
			if (err != nil) != c.wantErr || !errors.Is(err, c.err) && c.wantErr {
				t.Fatalf("probe = %v, want error %v", err, c.wantErr)
			}
			if len(keys) != c.wantPuts0 || len(keys) > 1 && keys[0] == keys[1] {
				t.Fatalf("first writes to %v, want %d under new keys", keys, c.wantPuts0)
			}
			for _, k := range keys[:min(len(keys), c.fails)] {
				if tag, _ := st.Head(context.Background(), k); tag != "" {
					t.Fatalf("the probe left %s behind after a failed write", k)
				}
			}
			if !c.wantErr && r != (objstore.Refused{Create: true, Update: true, Delete: true}) {
				t.Fatalf("refused = %+v, want every failing precondition refused", r)
			}
		})
	}
}
