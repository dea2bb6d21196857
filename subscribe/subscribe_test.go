package subscribe_test

import (
	"context"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	_ "nameservice.dev/nameservice/drivers/fs"
	_ "nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/subscribe"
)

// A head moved back (reset-head; on resume also one moved back while no
// one was subscribed) is followed: the subscriber reports it and the
// commits after it, though their watermarks were reported before.
func TestAHeadMovedBackIsFollowed(t *testing.T) {
	for name, url := range map[string]string{"mem": "mem://", "file": "file://" + t.TempDir()} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ns, err := nameservice.Open(ctx, url)
			must(t, err)
			defer ns.Close()
			must(t, ns.Init(ctx, "db"))
			for i, c := range []string{"c1", "c2", "c3", "c4", "c5"} {
				_, err := ns.PublishCommit(ctx, "db", int64(i+1), c)
				must(t, err)
			}
			opts := subscribe.Options{Prefix: "db", Interval: 10 * time.Millisecond, Concerns: []nameservice.Concern{nameservice.Head}}
			sub, err := subscribe.Start(ctx, ns, opts)
			must(t, err)
			_, err = ns.ResetHead(ctx, "db", nameservice.Ref{Address: "c3", T: 3}, nameservice.ResetOptions{})
			must(t, err)
			_, err = ns.PublishCommit(ctx, "db", 4, "c4b")
			must(t, err)
			// A feed may merge the two changes into one.
			follow(ctx, t, "live", sub, nameservice.RefValue("c3", 3), nameservice.RefValue("c4b", 4))

			saved := sub.Map()
			_, err = ns.ResetHead(ctx, "db", nameservice.Ref{Address: "c2", T: 2}, nameservice.ResetOptions{})
			must(t, err)
			opts.From = &saved
			resumed, err := subscribe.Start(ctx, ns, opts)
			must(t, err)
			follow(ctx, t, "resumed", resumed, nameservice.RefValue("c2", 2))
			_, err = ns.PublishCommit(ctx, "db", 3, "c3b")
			must(t, err)
			follow(ctx, t, "after resuming", resumed, nameservice.RefValue("c3b", 3))
			if got := resumed.Map().Subscriptions["db:main"].CommitT; got != 3 {
				t.Fatalf("commit_t in the map: %d, want 3", got)
			}
		})
	}
}

// follow reads head events of db:main until the last of want, each one of
// want.
func follow(ctx context.Context, t *testing.T, what string, sub *subscribe.Subscriber, want ...nameservice.Value) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("%s: %v: the head moved back was not followed", what, err)
		}
		ok := false
		for _, w := range want {
			ok = ok || ev.New.Equal(w)
		}
		if ev.ID.String() != "db:main" || ev.Concern != nameservice.Head || !ok {
			t.Fatalf("%s: event %+v, want head %v", what, ev, want)
		}
		if ev.New.Equal(want[len(want)-1]) {
			return
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
