package subscribe_test

import (
	"context"
	"fmt"
	"log"

	"nameservice.dev/nameservice"
	_ "nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/subscribe"
)

// A subscriber follows changes, saves its map, and a later subscriber
// resumed from the map sees only what it had not seen.
func ExampleStart() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns, err := nameservice.Open(ctx, "mem://")
	if err != nil {
		log.Fatal(err)
	}
	defer ns.Close()
	_ = ns.Init(ctx, "mydb")

	sub, err := subscribe.Start(ctx, ns, subscribe.Options{Prefix: "mydb"})
	if err != nil {
		log.Fatal(err)
	}
	_, _ = ns.PublishCommit(ctx, "mydb", 1, "c1")
	ev, err := sub.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ev.ID, ev.Concern, ev.Old, "->", ev.New.V)
	saved := sub.Map() // store it, e.g. as JSON

	// Changes made while no one is subscribed arrive on resume.
	_, _ = ns.PublishCommit(ctx, "mydb", 2, "c2")
	resumed, err := subscribe.Start(ctx, ns, subscribe.Options{Prefix: "mydb", From: &saved})
	if err != nil {
		log.Fatal(err)
	}
	ev, err = resumed.Next(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ev.ID, ev.Concern, ev.Old, "->", ev.New.V)
	fmt.Println("commit_t in the map:", resumed.Map().Subscriptions["mydb:main"].CommitT)
	// Output:
	// mydb:main head 0 -> 1
	// mydb:main head 1 -> 2
	// commit_t in the map: 2
}
