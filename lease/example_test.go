package lease_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"nameservice.dev/nameservice"
	_ "nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/lease"
)

// A job runs while it holds the "index" lease of mydb; a second holder is
// refused meanwhile, and the state is restored when the job ends.
func ExampleRun() {
	ctx := context.Background()
	ns, err := nameservice.Open(ctx, "mem://")
	if err != nil {
		log.Fatal(err)
	}
	defer ns.Close()
	_ = ns.Init(ctx, "mydb")

	opts := lease.Options{Name: "index", Holder: "indexer-1", TTL: 30 * time.Second, State: "indexing"}
	err = lease.Run(ctx, ns, "mydb", opts, func(ctx context.Context, l *lease.Lease) error {
		st, _ := ns.StatusOf(ctx, "mydb")
		fmt.Println("state while held:", st.State(), "token:", l.Token())

		other := lease.Options{Name: "index", Holder: "indexer-2", TTL: 30 * time.Second}
		_, err := lease.Acquire(ctx, ns, "mydb", other)
		fmt.Println("second holder refused:", errors.Is(err, lease.ErrHeld))
		return nil // publish the index here, fenced by l.Token()
	})
	if err != nil {
		log.Fatal(err)
	}
	st, _ := ns.StatusOf(ctx, "mydb")
	fmt.Println("state after:", st.State())
	// Output:
	// state while held: indexing token: 2
	// second holder refused: true
	// state after: ready
}

// Held lists the leases in a record's status, as `ns lease list` does.
func ExampleHeld() {
	ctx := context.Background()
	ns, _ := nameservice.Open(ctx, "mem://")
	defer ns.Close()
	_ = ns.Init(ctx, "mydb")
	l, err := lease.Acquire(ctx, ns, "mydb", lease.Options{Name: "maintenance", Holder: "ops", TTL: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	rec, _ := ns.Lookup(ctx, "mydb")
	for _, info := range lease.Held(rec) {
		fmt.Println(info.Name, info.Holder, info.Token)
	}
	_ = l.Release(ctx)
	// Output:
	// maintenance ops 2
}
