package conformance

import "sync"

// gate admits the cases Run runs by class: cases of one shared class run
// beside one another, an exclusive case runs with no other. Admission is
// first come, first served: a case waiting for the gate keeps later cases
// of the class inside from passing it, so that no class starves another.
type gate struct {
	mu      sync.Mutex
	class   string // the class inside, while inside > 0
	alone   bool   // the one case inside is exclusive
	inside  int
	waiting []*gateWaiter
}

type gateWaiter struct {
	class string
	alone bool
	admit chan struct{}
}

// enter waits until a case of class (alone: exclusive) may run, and returns its exit.
func (g *gate) enter(class string, alone bool) (exit func()) {
	g.mu.Lock()
	if len(g.waiting) == 0 && (g.inside == 0 || !alone && !g.alone && class == g.class) {
		g.admitOne(class, alone)
		g.mu.Unlock()
		return g.exit
	}
	w := &gateWaiter{class: class, alone: alone, admit: make(chan struct{})}
	g.waiting = append(g.waiting, w)
	g.mu.Unlock()
	<-w.admit
	return g.exit
}

func (g *gate) admitOne(class string, alone bool) {
	g.class, g.alone = class, alone
	g.inside++
}

// exit lets the next waiting cases in: the first in line, and with it
// every waiting case of its class when it is shared.
func (g *gate) exit() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inside--
	if g.inside > 0 || len(g.waiting) == 0 {
		return
	}
	first := g.waiting[0]
	rest := g.waiting[:0]
	for i, w := range g.waiting {
		if i == 0 || !first.alone && !w.alone && w.class == first.class {
			g.admitOne(w.class, w.alone)
			close(w.admit)
			continue
		}
		rest = append(rest, w)
	}
	g.waiting = rest
}
