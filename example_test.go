package nameservice_test

import (
	"context"
	"fmt"
	"log"

	"nameservice.dev/nameservice"
	_ "nameservice.dev/nameservice/drivers/mem"
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
