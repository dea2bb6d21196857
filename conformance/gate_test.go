package conformance

import (
	"runtime"
	"sync"
	"testing"
)

// TestGateClasses: cases of one shared class are inside together, never
// beside another class, and an exclusive case is inside alone.
func TestGateClasses(t *testing.T) {
	var g gate
	var mu sync.Mutex
	inside := map[string]int{}
	ran := map[string]int{}
	check := func(class string, exclusive bool) {
		mu.Lock()
		defer mu.Unlock()
		inside[class]++
		for other, n := range inside {
			if n > 0 && other != class || exclusive && n > 1 {
				t.Errorf("a case of %q (exclusive %v) ran beside %d of %q", class, exclusive, n, other)
			}
		}
		ran[class]++
	}
	leave := func(class string) {
		mu.Lock()
		defer mu.Unlock()
		inside[class]--
	}
	var wg sync.WaitGroup
	for i := range 60 {
		class, exclusive := "", false
		switch i % 3 {
		case 1:
			class, exclusive = "Branches", true
		case 2:
			class = "Lease"
		}
		wg.Go(func() {
			exit := g.enter(class, exclusive)
			defer exit()
			check(class, exclusive)
			runtime.Gosched()
			leave(class)
		})
	}
	wg.Wait()
	if ran[""] != 20 || ran["Branches"] != 20 || ran["Lease"] != 20 {
		t.Errorf("cases run per class: %v, want 20 each", ran)
	}
}

// TestGateKeepsOrder: a shared class inside does not pass a case waiting
// for the gate, which goes in before later cases of that class.
func TestGateKeepsOrder(t *testing.T) {
	var g gate
	exitA := g.enter("", false)
	admitted := make(chan string, 3)
	go func() { exit := g.enter("Branches", true); admitted <- "alone"; exit() }()
	waitWaiting(&g, 1)
	go func() { exit := g.enter("", false); admitted <- "shared"; exit() }()
	waitWaiting(&g, 2)
	exitA()
	if first, second := <-admitted, <-admitted; first != "alone" || second != "shared" {
		t.Fatalf("admitted %s then %s, want the waiting exclusive case first", first, second)
	}
}

// waitWaiting returns once n cases wait at g.
func waitWaiting(g *gate, n int) {
	for {
		g.mu.Lock()
		k := len(g.waiting)
		g.mu.Unlock()
		if k >= n {
			return
		}
		runtime.Gosched()
	}
}
