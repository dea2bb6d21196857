package conformance

import (
	"errors"
	"sync"

	"nameservice.dev/nameservice"
)

func isErr(err, target error) bool { return errors.Is(err, target) }

// runParallel runs fn(i, client) for i in [0,k) at once, each with its own
// independent client, and waits for all.
func runParallel(e *env, k int, fn func(i int, c *nameservice.NameService)) {
	clients := make([]*nameservice.NameService, k)
	for i := range clients {
		clients[i] = e.client()
	}
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() { defer wg.Done(); fn(i, c) }()
	}
	wg.Wait()
}
