// Package debristest checks, on a real store, that a record's files left
// by an earlier incarnation of its ID (a purge that stopped after removing
// the defining file) never show through a later create, and that a writer
// whose cache predates a purge is told the record is gone. The object-store
// drivers run it with their SDK writing the old files behind the driver's
// back.
package debristest

import (
	"context"
	"errors"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// Raw reads and writes objects by layout key, bypassing the driver.
type Raw struct {
	// Get returns key's bytes, nil when it is absent.
	Get func(ctx context.Context, key string) ([]byte, error)
	// Put writes key unconditionally.
	Put func(ctx context.Context, key string, data []byte) error
}

// Opener opens an independent client (its own cache) of the store.
type Opener func(t *testing.T) driver.Driver

// Run runs the scenario on layout l.
func Run(t *testing.T, l jsonld.Layout, open Opener, raw Raw) {
	ctx := context.Background()
	id := model.ID{Name: "debris", Branch: "main"}
	files, err := layout.Files(l, id)
	testenv.Must(t, err)
	a, b := open(t), open(t)
	testenv.Must(t, a.Create(ctx, model.NewLedger(id, 1)))
	for _, c := range []model.Concern{model.Head, model.Index} {
		push(t, a, id, c, "old", 5, true)
	}
	old := make([][]byte, len(files))
	for i, f := range files[1:] {
		old[i+1], err = raw.Get(ctx, f.Key)
		testenv.Must(t, err)
	}
	testenv.Must(t, b.Delete(ctx, id))
	for _, f := range files[1:] {
		data, err := raw.Get(ctx, f.Key)
		testenv.Must(t, err)
		if doc, err := jsonld.Decode(data); data == nil || err != nil || !doc.Purged {
			t.Fatalf("after purge %s is not a tombstone (%v):\n%s", f.Key, err, data)
		}
	}
	// a's cache still holds the purged record's files and tags.
	for _, c := range []model.Concern{model.Head, model.Index} {
		_, err := a.Update(ctx, id, c, driver.IfAbove(), model.RefValue("stale", 6))
		if !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("stale %s push after purge: %v, want ErrNotFound", c, err)
		}
	}
	// A purge that stopped after removing the defining file.
	for i, f := range files[1:] {
		if old[i+1] != nil {
			testenv.Must(t, raw.Put(ctx, f.Key, old[i+1]))
		}
	}
	if got := page(t, open(t)); len(got) != 0 {
		t.Fatalf("list shows %d records made of debris", len(got))
	}
	testenv.Must(t, b.Create(ctx, model.NewLedger(id, 1)))
	rec, err := open(t).Get(ctx, id)
	testenv.Must(t, err)
	if !rec.Head.Unborn() || !rec.Index.Unborn() {
		t.Fatalf("re-created record shows the purged one's values: head %v index %v", rec.Head, rec.Index)
	}
	if got := page(t, open(t)); len(got) != 1 || !got[0].Index.Unborn() || !got[0].Head.Unborn() {
		t.Fatalf("list after re-create: %v", got)
	}
	// A fresh client pushes over the debris; the stale one evaluates its
	// condition on the new record.
	push(t, open(t), id, model.Index, "new", 1, true)
	push(t, a, id, model.Head, "new", 1, true)
	push(t, a, id, model.Index, "new", 1, false)
	rec, err = open(t).Get(ctx, id)
	testenv.Must(t, err)
	if rec.Head.V != 1 || rec.Index.V != 1 || rec.Index.Payload.String("address") != "new" {
		t.Fatalf("after pushes over debris: head %v index %v", rec.Head, rec.Index)
	}
}

func push(t *testing.T, d driver.Driver, id model.ID, c model.Concern, addr string, v int64, applied bool) {
	t.Helper()
	out, err := d.Update(context.Background(), id, c, driver.IfAbove(), model.RefValue(addr, v))
	if err != nil || out.Applied != applied {
		t.Fatalf("push %s %s t%d: %+v %v, want applied=%v", c, addr, v, out, err, applied)
	}
}

func page(t *testing.T, d driver.Driver) []*model.Record {
	t.Helper()
	p, err := d.List(context.Background(), driver.ListOptions{PageSize: 100})
	if err != nil || len(p.Failed) != 0 {
		t.Fatalf("list: %v, failed %v", err, p.Failed)
	}
	return p.Records
}
