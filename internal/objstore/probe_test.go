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
// again under another key; the probe succeeds. A refusal (the write did
// not land) ends it at once, with no request to remove anything.
func TestProbeWritesAgainWhenUnavailable(t *testing.T) {
	for _, c := range []struct {
		name      string
		fails     int
		err       error
		wantErr   bool
		wantPuts0 int // first writes (no precondition) sent
		lands     bool
	}{
		{"once unavailable", 1, model.ErrUnavailable, false, 2, true},
		{"always unavailable", 99, model.ErrUnavailable, true, 3, true},
		{"permission denied", 1, model.ErrPermissionDenied, true, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newMemStore()
			var keys []string
			deletes := 0
			del := func(ctx context.Context, key string, pc objstore.Precondition) error {
				deletes++
				return st.Delete(ctx, key, pc)
			}
			put := func(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
				if pc == (objstore.Precondition{}) {
					keys = append(keys, key)
					if len(keys) <= c.fails { // the write may land; its answer fails
						if c.lands {
							_, _ = st.Put(ctx, key, data, pc)
						}
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
			r, err := objstore.Probe(context.Background(), objstore.ProbeOps{Put: put, Delete: del,
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
			if !c.lands && deletes != 0 {
				t.Fatalf("%d deletes after a refused write, want none", deletes)
			}
			if !c.wantErr && r != (objstore.Refused{Create: true, Update: true, Delete: true}) {
				t.Fatalf("refused = %+v, want every failing precondition refused", r)
			}
		})
	}
}
