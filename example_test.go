package nameservice_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"nameservice.dev/nameservice"
	_ "nameservice.dev/nameservice/drivers/all"
)

func Example() {
	ctx := context.Background()
	ns, err := nameservice.Open(ctx, "mem://example")
	if err != nil {
		log.Fatal(err)
	}
	defer ns.Close()

	if err := ns.Init(ctx, "mydb"); err != nil { // mydb:main, every concern unborn
		log.Fatal(err)
	}
	out, err := ns.PublishCommit(ctx, "mydb", 42, "fluree:s3://bucket/commits/t42.json")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("applied:", out.Applied, out.Current)

	// A stale publish is an outcome, not an error: it carries the current head.
	out, _ = ns.PublishCommit(ctx, "mydb", 41, "fluree:s3://bucket/commits/t41.json")
	fmt.Println("applied:", out.Applied, "current t:", out.Current.V)
	// Output:
	// applied: true v42 {"address":"fluree:s3://bucket/commits/t42.json","t":42}
	// applied: false current t: 42
}

func ExampleNameService_PushStatus() {
	ctx := context.Background()
	ns, _ := nameservice.Open(ctx, "mem://")
	defer ns.Close()
	_ = ns.Init(ctx, "mydb")

	cur, _ := ns.StatusOf(ctx, "mydb") // v1 {state: ready}
	next := nameservice.StatusValue(cur.V+1, "indexing", nameservice.Object{"queue_depth": 3})
	out, _ := ns.PushStatus(ctx, "mydb", cur, next)
	fmt.Println(out.Applied, out.Current)

	// Pushing again from the old expected value conflicts and returns the
	// value that won.
	out, _ = ns.PushStatus(ctx, "mydb", cur, nameservice.StatusValue(cur.V+1, "maintenance", nil))
	fmt.Println(out.Applied, out.Current)
	// Output:
	// true v2 {"state":"indexing","queue_depth":3}
	// false v2 {"state":"indexing","queue_depth":3}
}

func ExampleNameService_List() {
	ctx := context.Background()
	ns, _ := nameservice.Open(ctx, "mem://")
	defer ns.Close()
	for _, id := range []string{"sales", "hr:dev", "hr"} {
		_ = ns.Init(ctx, id)
	}
	_ = ns.PublishGraphSource(ctx, "hr-search", "db:Bm25Index", []string{"hr"}, map[string]any{"k1": 1.2})

	for rec, err := range ns.List(ctx, nameservice.ListOptions{Prefix: "hr"}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(rec.ID, rec.Kind)
	}
	// Output:
	// hr-search:main graph_source
	// hr:dev ledger
	// hr:main ledger
}

func ExampleNameService_Watch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns, _ := nameservice.Open(ctx, "mem://")
	defer ns.Close()
	_ = ns.Init(ctx, "mydb")

	// mem has a change feed, so every change is its own event; backends
	// without one are polled every WatchOptions.Interval.
	events, err := ns.Watch(ctx, nameservice.WatchOptions{ID: "mydb"})
	if err != nil {
		log.Fatal(err)
	}
	_, _ = ns.PublishCommit(ctx, "mydb", 1, "c1")
	_, _ = ns.PublishIndex(ctx, "mydb", 1, "i1")
	for range 2 {
		ev := <-events
		fmt.Println(ev.ID, ev.Concern, ev.Old, "->", ev.New)
	}
	// Output:
	// mydb:main head 0 -> v1 {"address":"c1","t":1}
	// mydb:main index 0 -> v1 {"address":"i1","t":1}
}

func ExampleNameService_CompareAndSetRef() {
	ctx := context.Background()
	ns, _ := nameservice.Open(ctx, "mem://")
	defer ns.Close()

	// A nil expected value means "no record yet": the first writer creates
	// the ledger with its head set.
	out, _ := ns.CompareAndSetRef(ctx, "mydb", nameservice.Head, nil, nameservice.Ref{Address: "c1", T: 1})
	fmt.Println("created:", out.Applied)

	// Two writers start from the same head; only the first wins.
	start := out.Current
	a, _ := ns.CompareAndSetRef(ctx, "mydb", nameservice.Head, &start, nameservice.Ref{Address: "a2", T: 2})
	b, _ := ns.CompareAndSetRef(ctx, "mydb", nameservice.Head, &start, nameservice.Ref{Address: "b2", T: 2})
	fmt.Println("a:", a.Applied, "b:", b.Applied, "current:", b.Current)
	// Output:
	// created: true
	// a: true b: false current: v2 {"address":"a2","t":2}
}

// Errors wrap the sentinels; match them with errors.Is. A conflict is not an
// error: it is an Outcome that was not applied.
func Example_errors() {
	ctx := context.Background()
	ns, _ := nameservice.Open(ctx, "mem://")
	defer ns.Close()

	_, err := ns.Lookup(ctx, "nosuch")
	fmt.Println(errors.Is(err, nameservice.ErrNotFound), nameservice.ErrorCodeOf(err))

	_ = ns.Init(ctx, "mydb")
	err = ns.Init(ctx, "mydb")
	fmt.Println(errors.Is(err, nameservice.ErrAlreadyExists))

	err = ns.Init(ctx, "mydb:main:extra") // a second ':'
	fmt.Println(errors.Is(err, nameservice.ErrInvalidID), nameservice.ErrorCodeOf(err))

	// Lasting failures (a missing table or bucket, a permission denial)
	// have codes of their own: retrying will not help until an operator acts.
	fmt.Println(nameservice.ErrorCodeOf(fmt.Errorf("open: %w", nameservice.ErrNotProvisioned)))
	// Output:
	// true NotFound
	// true
	// true InvalidArgument
	// NotProvisioned
}

// Every backend opens by URL once its driver is imported (drivers/all
// imports them all). These need a server or cloud account, so the example
// only compiles.
func Example_open() {
	ctx := context.Background()
	for _, u := range []string{
		"mem://scratch",                              // in memory: tests, examples
		"file:///var/lib/ns",                         // a local directory (ns@v2 files)
		"dynamodb://ns-table?region=eu-west-1",       // a DynamoDB table (`ns table create`)
		"s3://bucket/prefix?region=eu-west-1",        // S3 or an S3-compatible store
		"gs://bucket?prefix=ns/",                     // Google Cloud Storage
		"azblob://container",                         // Azure Blob Storage
		"docstore+dynamodb://table?region=eu-west-1", // any gocloud.dev/docstore collection
	} {
		ns, err := nameservice.Open(ctx, u)
		if err != nil {
			log.Print(err)
			continue
		}
		_ = ns.Close()
	}
}

func ExampleNameService_CreateBranch() {
	ctx := context.Background()
	ns, _ := nameservice.Open(ctx, "mem://")
	defer ns.Close()
	_ = ns.Init(ctx, "mydb")
	_, _ = ns.PublishCommit(ctx, "mydb", 42, "fluree:s3://bucket/commits/t42.json")

	dev, _ := ns.CreateBranch(ctx, "mydb:dev", nameservice.BranchOptions{}) // at main's head
	fmt.Println(dev.ID, "from", dev.SourceBranch, "at t", dev.Head.V)
	main, _ := ns.Lookup(ctx, "mydb")
	fmt.Println(main.ID, "has", main.Branches, "branch")

	// A record with branches cannot be dropped; its branches can.
	err := ns.DropBranch(ctx, "mydb")
	fmt.Println(errors.Is(err, nameservice.ErrHasBranches))
	fmt.Println(ns.DropBranch(ctx, "mydb:dev"))
	// Output:
	// mydb:dev from main at t 42
	// mydb:main has 1 branch
	// true
	// <nil>
}
