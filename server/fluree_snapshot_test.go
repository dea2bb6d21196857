package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/internal/testing/testenv"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server"
)

// failingList fails every List call after the first ok ones, in front of
// a real store: a backend that goes away in the middle of a listing.
type failingList struct {
	driver.Driver
	ok    int64
	calls atomic.Int64
}

func (f *failingList) List(ctx context.Context, opts driver.ListOptions) (*driver.Page, error) {
	if f.calls.Add(1) > f.ok {
		return nil, fmt.Errorf("list: %w: the backend went away", model.ErrUnavailable)
	}
	return f.Driver.List(ctx, opts)
}

// seedLedgers creates n ledgers with a commit each in store, directly.
func seedLedgers(tb testing.TB, d driver.Driver, n int) {
	tb.Helper()
	ctx := context.Background()
	for i := range n {
		rec := model.NewLedger(model.ID{Name: fmt.Sprintf("l%06d", i), Branch: "main"}, 1_700_000_000)
		*rec.Head = model.RefValue(testenv.CID(fmt.Sprint(i)), 1)
		if err := d.Create(ctx, rec); err != nil {
			tb.Fatal(err)
		}
	}
}

// The snapshot is written as it is read: a large one arrives whole (in
// chunks, with no length known up front); a backend failing before any of
// it was sent gets a 500; one failing after part of it went out cuts the
// answer short, so that it does not parse as a snapshot.
func TestFlureeSnapshotStreamed(t *testing.T) {
	store := mem.NewStore()
	seedLedgers(t, store.Open(), 3000)
	s := StartOn(t, store.Open(), server.Options{})
	resp := s.Do(t, "GET", "/v1/fluree/nameservice/snapshot", "")
	var snap struct {
		Ledgers []struct {
			LedgerID string `json:"ledger_id"`
		} `json:"ledgers"`
	}
	err := json.NewDecoder(resp.Body).Decode(&snap)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(snap.Ledgers) != 3000 || resp.ContentLength != -1 {
		t.Fatalf("snapshot: %d, %d ledgers, length %d, %v", resp.StatusCode, len(snap.Ledgers), resp.ContentLength, err)
	}
	for i, l := range snap.Ledgers {
		if want := fmt.Sprintf("l%06d:main", i); l.LedgerID != want {
			t.Fatalf("ledger %d is %s, want %s", i, l.LedgerID, want)
		}
	}

	early := StartOn(t, &failingList{Driver: store.Open(), ok: 0}, server.Options{})
	st, b := early.Call(t, "GET", "/v1/fluree/nameservice/snapshot", "")
	Want(t, "a backend failing at once", st, b, 500, `{"error":"Failed to list ledgers: list: unavailable: the backend did not answer (details in the server's log)",`+
		`"status":500,"@type":"err:system/InternalError"}`)

	late := StartOn(t, &failingList{Driver: store.Open(), ok: 3}, server.Options{})
	resp = late.Do(t, "GET", "/v1/fluree/nameservice/snapshot", "")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var cut any
	err = json.Unmarshal(body, &cut)
	if resp.StatusCode != 200 || err == nil || len(body) < 64<<10 {
		t.Fatalf("a backend failing late: %d, %d bytes, parse error %v; want 200 cut short", resp.StatusCode, len(body), err)
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) && err.Error() != "unexpected end of JSON input" {
		t.Fatalf("the cut answer: %v", err)
	}
}

// Graph sources too large to keep while the ledgers are written are listed
// in a second pass: the snapshot still holds every one, in order, after
// the ledgers.
func TestFlureeSnapshotManyGraphSources(t *testing.T) {
	s := Start(t, server.Options{})
	ctx := context.Background()
	big := map[string]any{"pad": strings.Repeat("x", 60_000)}
	var wantGS []string
	for i := range 20 {
		Must(t, s.NS.Init(ctx, fmt.Sprintf("g%02d-ledger", i)))
		id := fmt.Sprintf("g%02d-search", i)
		Must(t, s.NS.PublishGraphSource(ctx, id, "db:Bm25Index", nil, big))
		wantGS = append(wantGS, id+":main")
	}
	st, b := s.Call(t, "GET", "/v1/fluree/nameservice/snapshot", "")
	var snap struct {
		Ledgers []struct {
			LedgerID string `json:"ledger_id"`
		}
		GraphSources []struct {
			ID     string `json:"graph_source_id"`
			Config string
		} `json:"graph_sources"`
	}
	if err := json.Unmarshal([]byte(b), &snap); st != 200 || err != nil || len(b) < 20*60_000 {
		t.Fatalf("snapshot: %d, %d bytes, %v", st, len(b), err)
	}
	var gotGS []string
	for _, g := range snap.GraphSources {
		gotGS = append(gotGS, g.ID)
		if len(g.Config) < 60_000 {
			t.Fatalf("graph source %s with a config of %d bytes", g.ID, len(g.Config))
		}
	}
	if len(snap.Ledgers) != 20 || strings.Join(gotGS, " ") != strings.Join(wantGS, " ") {
		t.Fatalf("snapshot: %d ledgers, graph sources %q", len(snap.Ledgers), gotGS)
	}
}
