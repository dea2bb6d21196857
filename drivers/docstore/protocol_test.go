package docstore

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
)

// stores runs fn on a memdocstore store and, when there is a server, on
// DynamoDB Local.
func stores(t *testing.T, fn func(t *testing.T, open func() *Driver)) {
	for _, s := range []struct {
		name string
		url  func(t *testing.T) string
	}{{"mem", memURL}, {"dynamodb", func(t *testing.T) string { return dynamoURL(t) }}} {
		t.Run(s.name, func(t *testing.T) {
			u := s.url(t)
			fn(t, func() *Driver {
				d, err := openURL(context.Background(), u)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = d.Close() })
				return d
			})
		})
	}
}

func testID(t *testing.T) model.ID {
	id, err := model.ParseID("proto" + testenv.RandomHex(4) + "/db")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// claimOnly writes the meta document of a creation that stopped after its
// claim, made at creatingMS, and returns it.
func claimOnly(t *testing.T, d *Driver, id model.ID, creatingMS int64) *document {
	t.Helper()
	meta := metaDoc(model.NewLedger(id, 1), driverutil.Token(), creatingMS)
	if err := d.coll.Create(context.Background(), meta); err != nil {
		t.Fatal(err)
	}
	return meta
}

func TestHalfCreatedRecordIsInvisible(t *testing.T) {
	stores(t, func(t *testing.T, open func() *Driver) {
		d, ctx, id := open(), context.Background(), testID(t)
		meta := claimOnly(t, d, id, time.Now().UnixMilli())
		docs, err := d.createConcerns(ctx, model.NewLedger(id, 1), meta)
		if err != nil || len(docs) != 4 {
			t.Fatalf("concern documents: %d, %v", len(docs), err)
		}
		if _, err := d.Get(ctx, id); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("get of a half-created record: %v, want not found", err)
		}
		if _, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("c", 1)); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("update of a half-created record: %v, want not found", err)
		}
		if err := d.Retract(ctx, id, time.Now()); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("retract of a half-created record: %v, want not found", err)
		}
		if err := d.Delete(ctx, id); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("delete of a half-created record: %v, want not found", err)
		}
		wantListed(t, d, id, false)
		if err := d.commit(ctx, meta); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Get(ctx, id); err != nil {
			t.Fatalf("get after commit: %v", err)
		}
		wantListed(t, d, id, true)
	})
}

func wantListed(t *testing.T, d *Driver, id model.ID, want bool) {
	t.Helper()
	page, err := d.List(context.Background(), driver.ListOptions{Prefix: id.Name})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(page.Records) == 1; got != want {
		t.Fatalf("%s listed: %v, want %v", id, got, want)
	}
}

func TestCreateWaitsForAFreshClaim(t *testing.T) {
	stores(t, func(t *testing.T, open func() *Driver) {
		d, id := open(), testID(t)
		claimOnly(t, d, id, time.Now().UnixMilli())
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		err := open().Create(ctx, model.NewLedger(id, 1))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("create over a fresh claim: %v, want it to wait until the deadline", err)
		}
	})
}

func TestCreateWinsWhenTheClaimIsRemoved(t *testing.T) {
	stores(t, func(t *testing.T, open func() *Driver) {
		d, ctx, id := open(), context.Background(), testID(t)
		meta := claimOnly(t, d, id, time.Now().UnixMilli())
		go func() {
			time.Sleep(100 * time.Millisecond)
			_ = d.coll.Delete(ctx, meta)
		}()
		if err := open().Create(ctx, model.NewLedger(id, 1)); err != nil {
			t.Fatalf("create after the claim went away: %v", err)
		}
	})
}

func TestStaleClaimIsTakenOver(t *testing.T) {
	stores(t, func(t *testing.T, open func() *Driver) {
		d, ctx, id := open(), context.Background(), testID(t)
		old := claimOnly(t, d, id, time.Now().Add(-2*StaleAfter).UnixMilli())
		if _, err := d.createConcerns(ctx, model.NewLedger(id, 1), old); err != nil {
			t.Fatal(err)
		}
		rec := model.NewLedger(id, 7)
		h := model.RefValue("c3", 3)
		rec.Head = &h
		if err := open().Create(ctx, rec); err != nil {
			t.Fatalf("create over a stale claim: %v", err)
		}
		got, err := d.Get(ctx, id)
		if err != nil || !got.Head.Equal(h) || got.CreatedAt != 7 {
			t.Fatalf("record after take-over: %+v, %v", got, err)
		}
		// The creator that was taken over cannot commit any more.
		if err := d.commit(ctx, old); !errors.Is(err, model.ErrUnavailable) {
			t.Fatalf("commit of the displaced creator: %v, want unavailable", err)
		}
		if got, _ := d.Get(ctx, id); got == nil || !got.Head.Equal(h) {
			t.Fatalf("record after the displaced commit: %+v", got)
		}
	})
}

// TestDisplacedCreatorWritesNoMore: a creator whose stale claim was taken
// over, and whose creates are answered after the new creator wrote its
// documents, finds them and leaves them (it would take them for leftovers
// of an earlier record): the record the other creator made stays whole.
func TestDisplacedCreatorWritesNoMore(t *testing.T) {
	stores(t, func(t *testing.T, open func() *Driver) {
		d, ctx, id := open(), context.Background(), testID(t)
		old := claimOnly(t, d, id, time.Now().Add(-2*StaleAfter).UnixMilli())
		if err := open().Create(ctx, model.NewLedger(id, 7)); err != nil {
			t.Fatalf("create over a stale claim: %v", err)
		}
		if _, err := d.createConcerns(ctx, model.NewLedger(id, 1), old); !errors.Is(err, model.ErrUnavailable) {
			t.Fatalf("concern documents of the displaced creator: %v, want unavailable", err)
		}
		if got, err := d.Get(ctx, id); err != nil || got.CreatedAt != 7 {
			t.Fatalf("record after the displaced creator went on: %+v, %v", got, err)
		}
	})
}

func TestLeftoversOfACrashedDeleteAreReplaced(t *testing.T) {
	stores(t, func(t *testing.T, open func() *Driver) {
		d, ctx, id := open(), context.Background(), testID(t)
		rec := model.NewLedger(id, 1)
		h := model.RefValue("old", 9)
		rec.Head = &h
		if err := d.Create(ctx, rec); err != nil {
			t.Fatal(err)
		}
		// A delete that stopped after removing the meta document.
		meta, err := d.getOne(ctx, keyDoc(id, skMeta))
		if err != nil || meta == nil {
			t.Fatalf("meta: %v %v", meta, err)
		}
		if err := d.coll.Delete(ctx, meta); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Get(ctx, id); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("get after the meta document went: %v, want not found", err)
		}
		if err := open().Create(ctx, model.NewGraphSource(id, "db:X", nil, nil, 2)); err != nil {
			t.Fatalf("create over leftovers: %v", err)
		}
		got, err := d.Get(ctx, id)
		if err != nil || got.Kind != model.GraphSource || got.Head != nil || !got.Index.Equal(model.UnbornValue()) {
			t.Fatalf("record over leftovers: %+v, %v", got, err)
		}
		if err := d.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
		if err := d.Create(ctx, model.NewLedger(id, 3)); err != nil {
			t.Fatalf("ledger over a leftover head: %v", err)
		}
		if got, err := d.Get(ctx, id); err != nil || !got.Head.Equal(model.UnbornValue()) {
			t.Fatalf("ledger head over a leftover: %+v, %v", got, err)
		}
	})
}

func TestRetractedLivesInTheStatusDocument(t *testing.T) {
	stores(t, func(t *testing.T, open func() *Driver) {
		d, ctx, id := open(), context.Background(), testID(t)
		if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
			t.Fatal(err)
		}
		if err := d.Retract(ctx, id, time.Unix(5, 0)); err != nil {
			t.Fatal(err)
		}
		st, err := d.getOne(ctx, keyDoc(id, "status"))
		if err != nil || !st.Retracted || st.V != 2 {
			t.Fatalf("status document after retract: %+v, %v", st, err)
		}
		// A status push keeps the flag.
		next := model.Value{V: 3, Payload: model.Object{"state": "archived"}}
		out, err := d.Update(ctx, id, model.Status, driver.IfAbove(), next)
		if err != nil || !out.Applied {
			t.Fatalf("push status: %+v, %v", out, err)
		}
		if got, err := d.Get(ctx, id); err != nil || !got.Retracted || !got.Status.Equal(next) {
			t.Fatalf("record after a status push: %+v, %v", got, err)
		}
	})
}

func TestDocumentLayout(t *testing.T) {
	d, ctx, id := mustMem(t), context.Background(), model.ID{Name: "a/b", Branch: "c"}
	if err := d.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	for _, sk := range allSorts {
		m := map[string]any{"key": "a%2Fb:c|" + sk}
		if err := d.coll.Get(ctx, m); err != nil {
			t.Fatalf("%s: %v", sk, err)
		}
		if m["pk"] != "a/b:c" || m["sk"] != sk || m["gen"] == "" {
			t.Fatalf("%s document: %v", sk, m)
		}
	}
}

func mustMem(t *testing.T) *Driver {
	d, err := openURL(context.Background(), memURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func TestMemDriversShareTheCollection(t *testing.T) {
	u := memURL(t)
	ctx := context.Background()
	a, err := drivers.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	b, err := drivers.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	id := model.ID{Name: "x", Branch: "main"}
	if err := a.Create(ctx, model.NewLedger(id, 1)); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, id); err != nil {
		t.Fatalf("second driver after the first closed: %v", err)
	}
	if _, err := a.Get(ctx, id); !errors.Is(err, model.ErrInvalidArgument) {
		t.Fatalf("closed driver: %v", err)
	}
	_ = b.Close()
	c, err := drivers.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Get(ctx, id); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("reopened after every driver closed: %v, want an empty collection", err)
	}
}

func TestURLs(t *testing.T) {
	ctx := context.Background()
	for raw, want := range map[string]error{
		"docstore+firestore://projects/p/databases/d/documents/c": model.ErrUnsupported,
		"docstore+mongo://db/coll":                                model.ErrUnsupported,
		"docstore+dynamodb://t?consistent_read=false":             model.ErrInvalidArgument,
		"docstore+mem://c/key/extra":                              model.ErrInvalidArgument,
	} {
		d, err := drivers.Open(ctx, raw)
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", raw, err, want)
		}
		if d != nil {
			_ = d.Close()
		}
	}
	u, err := collectionURL(mustParse(t, "dynamodb://tbl?region=r"))
	if err != nil {
		t.Fatal(err)
	}
	if got := u.String(); got != "dynamodb://tbl?allow_scans=true&consistent_read=true&partition_key=pk&region=r&sort_key=sk" {
		t.Errorf("dynamodb URL = %s", got)
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
