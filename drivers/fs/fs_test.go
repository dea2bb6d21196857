package fs_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	nsfs "nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/internal/testing/fixturetest"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

var layouts = map[string]nsfs.Config{"B": {Layout: jsonld.LayoutB}, "C": {Layout: jsonld.LayoutC}}

func open(t *testing.T, dir string, opts nsfs.Config) *nsfs.Driver {
	t.Helper()
	opts.Dir = dir
	d, err := nsfs.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func pid(s string) model.ID {
	id, err := model.ParseID(s)
	if err != nil {
		panic(err)
	}
	return id
}

func mustCreate(t *testing.T, d driver.Driver, id string) {
	t.Helper()
	if err := d.Create(context.Background(), model.NewLedger(pid(id), 1)); err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
}

// files lists the files under dir, relative, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// TestPathCollision: a/b:main and a:b/main share ns@v2/a/b/main.json.
// To every operation on the second the first's file is no record of its
// own: the create is refused, and reads, pushes (also from a client whose
// cache holds the first's file), retracts and purges answer not found, all
// without naming the first (a caller scoped to one must learn nothing of
// the other); the owner is left alone and List reports it by @id.
func TestPathCollision(t *testing.T) {
	for name, opts := range layouts {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			d := open(t, t.TempDir(), opts)
			mustCreate(t, d, "a/b:main")
			if _, err := d.Update(ctx, pid("a/b:main"), model.Head, driver.IfAbove(), model.RefValue("owner", 1)); err != nil {
				t.Fatal(err)
			}
			other := pid("a:b/main")
			check := func(op string, err error, want error) {
				t.Helper()
				if !errors.Is(err, want) || strings.Contains(err.Error(), "a/b:main") {
					t.Fatalf("%s of the other ID: %v, want %v without the owner's ID", op, err, want)
				}
			}
			check("create", d.Create(ctx, model.NewLedger(other, 1)), model.ErrAlreadyExists)
			_, err := d.Get(ctx, other)
			check("get", err, model.ErrNotFound)
			_, err = d.Update(ctx, other, model.Head, driver.IfAbove(), model.RefValue("x", 2))
			check("update", err, model.ErrNotFound)
			check("delete", d.Delete(ctx, other), model.ErrNotFound)
			check("retract", d.Retract(ctx, other, time.Now()), model.ErrNotFound)
			recs := fixturetest.ListAll(t, d, driver.ListOptions{})
			if len(recs) != 1 || recs[0].ID.String() != "a/b:main" {
				t.Fatalf("list = %v", recs)
			}
			if rec, err := d.Get(ctx, pid("a/b:main")); err != nil || rec.Head.V != 1 || rec.Retracted {
				t.Fatalf("owner after the other's operations: %v %v", rec, err)
			}
		})
	}
}

// TestNestedListing: the @id decides which ID a nested path belongs to.
func TestNestedListing(t *testing.T) {
	for name, opts := range layouts {
		t.Run(name, func(t *testing.T) {
			d := open(t, t.TempDir(), opts)
			for _, id := range []string{"a:b/main", "a/b:dev", "a:b", "a/b/c:d/e", strings.Repeat("long", 100) + ":x"} {
				mustCreate(t, d, id)
			}
			var got []string
			for _, r := range fixturetest.ListAll(t, d, driver.ListOptions{PageSize: 2}) {
				got = append(got, r.ID.String())
			}
			want := []string{"a/b/c:d/e", "a/b:dev", "a:b", "a:b/main", strings.Repeat("long", 100) + ":x"}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("list = %q, want %q", got, want)
			}
			for _, p := range []string{"a/", "a:", "a/b:", "a:b/", "long"} {
				recs := fixturetest.ListAll(t, d, driver.ListOptions{Prefix: p})
				for _, r := range recs {
					if !strings.HasPrefix(r.ID.String(), p) {
						t.Errorf("prefix %q listed %s", p, r.ID)
					}
				}
				if len(recs) == 0 {
					t.Errorf("prefix %q listed nothing", p)
				}
			}
		})
	}
}

// TestCorruptFile: an unreadable file is an error naming it, on Get and on
// List; other records stay readable, and Delete purges it.
func TestCorruptFile(t *testing.T) {
	for name, opts := range layouts {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			d := open(t, dir, opts)
			mustCreate(t, d, "good")
			mustCreate(t, d, "bad")
			mustCreate(t, d, "zz")
			path := filepath.Join(dir, "ns@v2", "bad", "main.json")
			if name == "C" {
				path = filepath.Join(dir, "ns@v2", "bad", "main.config.json")
			}
			if err := os.WriteFile(path, []byte(`{"@context": {"f": "https://ns.flur.ee/db#"}, "f:configV": "x"`), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := d.Get(ctx, pid("bad"))
			if !errors.Is(err, model.ErrInternal) || !strings.Contains(err.Error(), path) {
				t.Fatalf("get: %v", err)
			}
			for _, id := range []string{"good", "zz"} {
				if _, err := d.Get(ctx, pid(id)); err != nil {
					t.Fatalf("get %s: %v", id, err)
				}
			}
			page, err := d.List(ctx, driver.ListOptions{})
			if err != nil || len(page.Records) != 2 || len(page.Failed) != 1 {
				t.Fatalf("list = %+v, %v; want the two good records and the bad one failed", page, err)
			}
			if f := page.Failed[0]; f.ID != pid("bad") || !errors.Is(f, model.ErrInternal) || !strings.Contains(f.Error(), path) {
				t.Fatalf("list failure %v, want ErrInternal naming %s", f, path)
			}
			if err := d.Delete(ctx, pid("bad")); err != nil {
				t.Fatalf("purge the corrupt record: %v", err)
			}
			if n := len(fixturetest.ListAll(t, d, driver.ListOptions{})); n != 2 {
				t.Fatalf("after purge: %d records", n)
			}
		})
	}
}

// TestEmptyFileIsAbsent: a zero-length defining file (a create that never
// finished) reads as no record, and a create replaces it.
func TestEmptyFileIsAbsent(t *testing.T) {
	for name, opts := range layouts {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			d := open(t, dir, opts)
			def := "main.json"
			if name == "C" {
				def = "main.status.json"
			}
			_ = os.MkdirAll(filepath.Join(dir, "ns@v2", "db"), 0o755)
			if err := os.WriteFile(filepath.Join(dir, "ns@v2", "db", def), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Get(ctx, pid("db")); !errors.Is(err, model.ErrNotFound) {
				t.Fatalf("get: %v", err)
			}
			if recs := fixturetest.ListAll(t, d, driver.ListOptions{IncludeRetracted: true}); len(recs) != 0 {
				t.Fatalf("list: %v", recs)
			}
			if _, err := d.Update(ctx, pid("db"), model.Status, driver.IfAbove(), model.ReadyStatus()); !errors.Is(err, model.ErrNotFound) {
				t.Fatalf("update: %v", err)
			}
			mustCreate(t, d, "db")
			if _, err := d.Get(ctx, pid("db")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDebrisIgnored: temp and lock files, and foreign files, are not
// records; a delete leaves every file of the record as a tombstone (the
// defining file a purge's mark), and Collect then removes them with their
// temp and lock files, leaving foreign files alone (see docs/fs.md).
func TestDebrisIgnored(t *testing.T) {
	for name, opts := range layouts {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			d := open(t, dir, opts)
			mustCreate(t, d, "x/db")
			if _, err := d.Update(ctx, pid("x/db"), model.Head, driver.IfAbove(), model.RefValue("c", 1)); err != nil {
				t.Fatal(err)
			}
			sub := filepath.Join(dir, "ns@v2", "x", "db")
			def, debris := "main.json", []string{"main.json.0123456789abcdef.tmp", "main.json.lock", "main.index.json.00000000000000ff.tmp", "notes.txt"}
			if name == "C" {
				def, debris = "main.status.json", []string{"main.status.json.0123456789abcdef.tmp", "main.config.json.lock", "main.head.json.fedcba9876543210.tmp", "notes.txt"}
			}
			for _, f := range debris {
				_ = os.WriteFile(filepath.Join(sub, f), []byte("{garbage"), 0o644)
			}
			if recs := fixturetest.ListAll(t, d, driver.ListOptions{}); len(recs) != 1 {
				t.Fatalf("list: %v", recs)
			}
			if err := d.Delete(ctx, pid("x/db")); err != nil {
				t.Fatal(err)
			}
			checkPurged(t, dir, "ns@v2/x/db/"+def)
			if recs := fixturetest.ListAll(t, d, driver.ListOptions{IncludeRetracted: true}); len(recs) != 0 {
				t.Fatalf("list after delete: %v", recs)
			}
			if _, err := d.Collect(ctx, driver.CollectOptions{}); err != nil {
				t.Fatal(err)
			}
			if left := files(t, dir); !slices.Equal(left, []string{"ns@v2/x/db/notes.txt"}) {
				t.Fatalf("after collect: %q left, want only the foreign file", left)
			}
		})
	}
}

// checkPurged: every record file left is a tombstone, and def is there.
// every other record file left is a tombstone.
func checkPurged(t *testing.T, dir, def string) {
	t.Helper()
	seen := false
	for _, f := range files(t, dir) {
		if !strings.HasSuffix(f, ".json") {
			continue
		}
		seen = seen || f == def
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if doc, err := jsonld.Decode(data); err != nil || !doc.Purged {
			t.Errorf("after delete: %s is not a tombstone (%v): %s", f, err, data)
		}
	}
	if !seen {
		t.Errorf("after delete: no mark at %s", def)
	}
}

// TestNoFilesForUnknownIDs: operations on an unknown ID leave no file.
func TestNoFilesForUnknownIDs(t *testing.T) {
	for name, opts := range layouts {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			d := open(t, dir, opts)
			mustCreate(t, d, "db:main")
			before := files(t, dir)
			id := pid("db:other")
			for _, c := range model.Concerns {
				if _, err := d.Update(ctx, id, c, driver.IfAbove(), model.RefValue("x", 1)); !errors.Is(err, model.ErrNotFound) {
					t.Errorf("update %s: %v", c, err)
				}
			}
			if err := d.Retract(ctx, id, time.Now()); !errors.Is(err, model.ErrNotFound) {
				t.Error(err)
			}
			if err := d.Delete(ctx, id); !errors.Is(err, model.ErrNotFound) {
				t.Error(err)
			}
			if after := files(t, dir); strings.Join(after, " ") != strings.Join(before, " ") {
				t.Errorf("files changed: %q -> %q", before, after)
			}
		})
	}
}

// TestLayoutMismatch: a store of one layout opened as the other lists its
// records as failures naming the layout, not as an empty store.
func TestLayoutMismatch(t *testing.T) {
	dir := t.TempDir()
	mustCreate(t, open(t, dir, nsfs.Config{Layout: jsonld.LayoutC}), "db")
	p, err := open(t, dir, nsfs.Config{Layout: jsonld.LayoutB}).List(context.Background(), driver.ListOptions{})
	if err != nil || len(p.Records) != 0 || len(p.Failed) != 1 {
		t.Fatalf("list: %+v, %v; want one failure", p, err)
	}
	if err := p.Failed[0]; !errors.Is(err, model.ErrInternal) || !strings.Contains(err.Error(), "layout=c") {
		t.Fatalf("list: %v", err)
	}
}

// TestLockWait: a lock held elsewhere makes writers wait; the wait ends at
// the context deadline (Canceled) or the lock timeout (Unavailable), and
// readers are never blocked.
func TestLockWait(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir, nsfs.Config{LockTimeout: 150 * time.Millisecond})
	mustCreate(t, d, "db")
	lockPath := filepath.Join(dir, "ns@v2", "db", "main.json.lock")
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	pushOn := func(ctx context.Context, d *nsfs.Driver) error {
		_, err := d.Update(ctx, pid("db"), model.Head, driver.IfAbove(), model.RefValue("c", 1))
		return err
	}
	push := func(ctx context.Context) error { return pushOn(ctx, d) }
	// The deadline is checked on a writer whose lock timeout is far longer,
	// so that only honouring the deadline ends its wait soon (a loaded
	// machine may take a while, not 15 s).
	const patient = 30 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := pushOn(ctx, open(t, dir, nsfs.Config{LockTimeout: patient})); model.Code(err) != model.Canceled {
		t.Errorf("deadline: %v (code %v)", err, model.Code(err))
	}
	if el := time.Since(start); el >= patient/2 {
		t.Errorf("waited %v past a 30ms deadline", el)
	}
	if err := push(context.Background()); !errors.Is(err, model.ErrUnavailable) {
		t.Errorf("lock timeout: %v", err)
	}
	if _, err := d.Get(context.Background(), pid("db")); err != nil {
		t.Errorf("get while locked: %v", err)
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	if err := push(context.Background()); err != nil {
		t.Errorf("after unlock: %v", err)
	}
}

// TestCreateRace: many clients create one ID at once; exactly one wins and
// its record is intact (the losers clobbered nothing).
func TestCreateRace(t *testing.T) {
	for name, opts := range layouts {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			const n = 8
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					d := open(t, dir, opts)
					rec := model.NewLedger(pid("db"), int64(i))
					h := model.RefValue("winner-check", int64(i+1))
					rec.Head = &h
					ix := model.RefValue("ix", int64(i+1))
					rec.Index = &ix
					errs[i] = d.Create(context.Background(), rec)
				}()
			}
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Fatalf("two winners: %d and %d", winner, i)
				case err == nil:
					winner = i
				case !errors.Is(err, model.ErrAlreadyExists):
					t.Fatalf("loser %d: %v", i, err)
				}
			}
			rec, err := open(t, dir, opts).Get(context.Background(), pid("db"))
			if err != nil {
				t.Fatal(err)
			}
			w := int64(winner + 1)
			if rec.Head.V != w || rec.Index.V != w || rec.CreatedAt != int64(winner) {
				t.Fatalf("winner %d, record %v %v created %d", winner, rec.Head, rec.Index, rec.CreatedAt)
			}
		})
	}
}

// TestUnknownMembersSurviveUpdates: members written by someone else are
// kept by every kind of write.
func TestUnknownMembersSurviveUpdates(t *testing.T) {
	dir := t.TempDir()
	_ = os.MkdirAll(filepath.Join(dir, "ns@v2", "db"), 0o755)
	main := `{"@context": {"f": "https://ns.flur.ee/db#"}, "@id": "db:main", "@type": ["f:LedgerSource"],
		"f:ledger": {"@id": "db"}, "f:branch": "main", "f:t": 0, "f:status": "ready", "f:owner": {"team": "x"}}`
	if err := os.WriteFile(filepath.Join(dir, "ns@v2", "db", "main.json"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	d := open(t, dir, nsfs.Config{})
	ctx := context.Background()
	id := pid("db")
	if _, err := d.Update(ctx, id, model.Head, driver.IfAbove(), model.RefValue("c", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Update(ctx, id, model.Status, driver.IfEquals(model.ReadyStatus()), model.Value{V: 2, Payload: model.Object{"state": "busy"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Retract(ctx, id, time.Unix(5, 0)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "ns@v2", "db", "main.json"))
	f, err := jsonld.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"db:owner": {`) || f.Status.V != 3 {
		t.Fatalf("file now:\n%s", b)
	}
}

func TestOpenURL(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	good := []string{"file://" + dir, "file://" + dir + "?layout=c", "file://localhost" + dir + "?layout=B&dialect=fluree-v4&lock_timeout=2s", "FILE://" + dir, "file://" + dir + "?list_parallel=4"}
	for _, u := range good {
		d, err := drivers.Open(ctx, u)
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		_ = d.Close()
	}
	bad := []string{"file://host/x", "file://" + dir + "?layout=d", "file://" + dir + "?dialect=x", "file://" + dir + "?lock_timeout=-1s", "file://" + dir + "?bogus=1", "file://" + dir + "?list_parallel=0", "file://"}
	for _, u := range bad {
		if _, err := drivers.Open(ctx, u); !errors.Is(err, model.ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", u, err)
		}
	}
	// file://./rel is relative to the working directory.
	wd, _ := os.Getwd()
	t.Cleanup(func() { _ = os.Chdir(wd) })
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	d, err := drivers.Open(ctx, "file://./rel/ns")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Create(ctx, model.NewLedger(pid("x"), 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "rel", "ns", "ns@v2", "x", "main.json")); err != nil {
		t.Error(err)
	}
	if fd, ok := d.(*nsfs.Driver); !ok || fd.Dir() != filepath.Join(dir, "rel", "ns") {
		t.Errorf("dir = %v", d)
	}
	f := filepath.Join(dir, "afile")
	_ = os.WriteFile(f, nil, 0o644)
	if _, err := nsfs.Open(context.Background(), nsfs.Config{Dir: f}); !errors.Is(err, model.ErrInvalidArgument) {
		t.Errorf("open a file: %v", err)
	}
}

func TestClosed(t *testing.T) {
	d := open(t, t.TempDir(), nsfs.Config{})
	_ = d.Close()
	if _, err := d.Get(context.Background(), pid("x")); err == nil {
		t.Fatal("get after close succeeded")
	}
}

// A nested file that cannot be read fails only the page that reaches it; a
// page token past it lists on.
func TestListGoesPastUnreadableNestedFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := nsfs.Open(context.Background(), nsfs.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a:main", "t/b:main", "z:main"} {
		pid, _ := model.ParseID(id)
		if err := d.Create(ctx, model.NewLedger(pid, 0)); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(dir, "ns@v2", "t", "b", "main.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := d.List(ctx, driver.ListOptions{PageSize: 1})
	if err != nil || len(p.Records) != 1 || p.Records[0].ID.String() != "a:main" {
		t.Fatalf("first page = %+v, %v; want a:main", p, err)
	}
	p, err = d.List(ctx, driver.ListOptions{PageSize: 1, PageToken: p.NextPageToken})
	if err != nil || len(p.Records) != 0 || len(p.Failed) != 1 || !strings.Contains(p.Failed[0].Error(), bad) {
		t.Fatalf("second page = %+v, %v; want only a failure naming %s", p, err, bad)
	}
	after := base64.RawURLEncoding.EncodeToString([]byte("t/b:main"))
	p, err = d.List(ctx, driver.ListOptions{PageSize: 1, PageToken: after})
	if err != nil || len(p.Records) != 1 || p.Records[0].ID.String() != "z:main" {
		t.Fatalf("page after the bad file = %+v, %v; want z:main", p, err)
	}
}

// TestCollectRemovesIdleLocks: a live record's lock files, and the temp
// files a crashed writer left beside its files, are removed by Collect;
// the record reads and takes pushes as before, and a lock held by a writer
// at work stays.
func TestCollectRemovesIdleLocks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d := open(t, dir, layouts["B"])
	mustCreate(t, d, "db")
	if _, err := d.Update(ctx, pid("db"), model.Index, driver.IfAbove(), model.RefValue("i", 1)); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "ns@v2", "db")
	crashed := filepath.Join(sub, "main.json.0123456789abcdef.tmp")
	if err := os.WriteFile(crashed, []byte("{half"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Another process's writer holds the sidecar's lock.
	held, err := os.OpenFile(filepath.Join(sub, "main.index.json.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := unix.Flock(int(held.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	st, err := d.Collect(ctx, driver.CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unix.Flock(int(held.Fd()), unix.LOCK_UN)
	want := []string{"ns@v2/db/main.index.json", "ns@v2/db/main.index.json.lock", "ns@v2/db/main.json"}
	if left := files(t, dir); !slices.Equal(left, want) || st.Removed != 1 {
		t.Fatalf("after collect: %q left (removed %d), want %q: the idle lock and the temp file gone, the held lock kept", left, st.Removed, want)
	}
	if _, err := d.Update(ctx, pid("db"), model.Head, driver.IfAbove(), model.RefValue("c", 1)); err != nil {
		t.Fatal(err)
	}
	if rec, err := d.Get(ctx, pid("db")); err != nil || rec.Head.V != 1 || rec.Index.V != 1 {
		t.Fatalf("after collect: %v %v", rec, err)
	}
}
