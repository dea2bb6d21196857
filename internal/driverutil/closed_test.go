package driverutil

import (
	"context"
	"errors"
	"testing"

	"nameservice.dev/nameservice/model"
)

func TestClosedFlag(t *testing.T) {
	var f ClosedFlag
	ctx := context.Background()
	if err := f.Check(ctx, "x"); err != nil {
		t.Fatalf("open: %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.Check(canceled, "x"); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled ctx: %v", err)
	}
	if !f.Close() || f.Close() {
		t.Fatal("Close must report true once, then false")
	}
	if err := f.Check(ctx, "x"); !errors.Is(err, model.ErrInvalidArgument) || err.Error() != "x: invalid argument: driver is closed" {
		t.Fatalf("closed: %v", err)
	}
}
