package dynamodb_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// TestChangedAt: the time each concern's item was last written, for every
// concern; a later push moves its concern's time only; an unknown record
// is not found.
func TestChangedAt(t *testing.T) {
	d := openDriver(t)
	ctx := context.Background()
	ns := nameservice.New(d)
	id := "ca" + testenv.RandomHex(3)
	before := time.Now().Add(-time.Minute) // DynamoDB Local stamps with the driver's clock: this machine's
	must(t, ns.Init(ctx, id))
	created, err := d.ChangedAt(ctx, model.ID{Name: id, Branch: "main"})
	must(t, err)
	if len(created) != 4 {
		t.Fatalf("ChangedAt after init = %v, want the 4 concerns", created)
	}
	for c, at := range created {
		if at.Before(before) || at.After(time.Now().Add(time.Minute)) {
			t.Errorf("%s changed at %v, not about now", c, at)
		}
	}
	time.Sleep(5 * time.Millisecond) // the times are in milliseconds: let the next write's differ
	_, err = ns.PublishCommit(ctx, id, 3, "c3")
	must(t, err)
	later, err := d.ChangedAt(ctx, model.ID{Name: id, Branch: "main"})
	must(t, err)
	if !later[model.Head].After(created[model.Head]) || !later[model.Index].Equal(created[model.Index]) {
		t.Errorf("after a push of the head: %v, was %v", later, created)
	}
	if _, err := d.ChangedAt(ctx, model.ID{Name: id + "-absent", Branch: "main"}); !errors.Is(err, model.ErrNotFound) {
		t.Errorf("ChangedAt of an absent record: %v, want ErrNotFound", err)
	}
}
