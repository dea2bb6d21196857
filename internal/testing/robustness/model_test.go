// Package robustness checks that every driver is linearizable: K
// independent clients (separate driver instances, as separate processes
// would be) run random operations on a few IDs, the calls and returns are
// recorded, and porcupine searches for a sequential order of the history
// that the model of this file, written from docs/model.md, accepts.
//
// # What is checked
//
// The model keeps one state per ID and concern: whether the record exists,
// and the concern's value. Concerns are independent registers (writers of
// different concerns never conflict, and no operation promises a snapshot
// across them), so the history is split into one sub-history per ID and
// concern and each is checked on its own; by locality that is
// linearizability of every concern. An operation is projected onto the
// concerns it touches: an update onto its own, a Lookup, a create (Init,
// or CompareAndSetRef with a nil expected value) and a purge onto all
// four. A purge that succeeded removes the record: every operation on it
// then answers ErrNotFound until a create.
//
// Every operation's output is constrained: an Outcome's Applied and Current,
// a Lookup's value, or ErrNotFound. An operation that returned any other
// error may or may not have happened: it gets a return time after the end
// of the history and no constraint on its output, as porcupine requires.
package robustness

import (
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"

	"nameservice.dev/nameservice/model"
)

// Kind is the kind of a recorded operation.
type Kind int

// The operations of the workload.
const (
	Create        Kind = iota // Init, or CompareAndSetRef with a nil expected value
	PublishCommit             // head, applied when next.V > current.V
	PublishIndex              // index, next.V > current.V
	AdminIndex                // index, next.V >= current.V
	CASRef                    // head or index, current == expected and next.V > (head) or >= (index) current.V
	PushStatus                // status, current == expected
	PushConfig                // config, current == expected
	Lookup                    // the whole record
	Purge                     // driver Delete: the record is gone until a create
)

var kindNames = [...]string{"create", "publish commit", "publish index", "admin publish index", "cas ref",
	"push status", "push config", "lookup", "purge"}

func (k Kind) String() string { return kindNames[k] }

// Input is one operation as called.
type Input struct {
	Kind     Kind
	ID       string
	Concern  model.Concern // the concern written (for Lookup: unused)
	Expected *model.Value  // CASRef, PushStatus, PushConfig; nil for a create
	Next     model.Value   // the value written; for a plain Init, unused
}

// Output is what an operation returned.
type Output struct {
	Unknown  bool            // an error other than ErrNotFound: the outcome is unknown
	NotFound bool            // ErrNotFound
	Applied  bool            // Outcome.Applied; for a create, that it created; for a purge, that it purged
	Current  model.Value     // Outcome.Current; for a Lookup, the record's value
	Record   *model.Record   // what a Lookup returned
	Code     model.ErrorCode // the error's code
	Err      string          // the error's message
}

// op is one projected operation: an input seen from one concern.
type op struct {
	in      Input
	concern model.Concern // the partition
}

// state is the model's state of one ID and concern.
type state struct {
	exists bool
	value  model.Value
}

// initial returns the value concern c has on a new ledger: unborn, and
// status v1 ready.
func initial(c model.Concern) model.Value {
	if c == model.Status {
		return model.ReadyStatus()
	}
	return model.UnbornValue()
}

// step is the sequential specification of one operation on one concern.
func step(s state, o op, out Output) (bool, state) {
	switch o.in.Kind {
	case Lookup:
		return stepLookup(s, o, out), s
	case Create:
		return stepCreate(s, o, out)
	case Purge:
		return stepPurge(s, out)
	}
	if !s.exists {
		return out.Unknown || out.NotFound, s
	}
	if out.NotFound {
		return false, s
	}
	if holds(o.in, s.value) {
		return out.Unknown || out.Applied && out.Current.Equal(o.in.Next), state{true, o.in.Next}
	}
	return out.Unknown || !out.Applied && out.Current.Equal(s.value), s
}

func stepLookup(s state, o op, out Output) bool {
	if out.NotFound {
		return !s.exists
	}
	return s.exists && out.Record != nil && out.Record.Value(o.concern) != nil && out.Record.Value(o.concern).Equal(s.value)
}

// stepCreate creates the record when it does not exist; the Outcome's
// Current is checked only on the concern the create sets.
func stepCreate(s state, o op, out Output) (bool, state) {
	own := o.in.Next.Payload != nil && o.in.Concern == o.concern // a bootstrapping CompareAndSetRef
	if !s.exists {
		next := initial(o.concern)
		if own {
			next = o.in.Next
		}
		return out.Unknown || out.Applied, state{true, next}
	}
	if out.Unknown {
		return true, s
	}
	return !out.Applied && (!own || out.Current.Equal(s.value)), s
}

// stepPurge removes the record when it exists (reporting success) and
// answers ErrNotFound when it does not.
func stepPurge(s state, out Output) (bool, state) {
	if !s.exists {
		return out.Unknown || out.NotFound, s
	}
	return out.Unknown || out.Applied, state{}
}

// holds is the condition of an update against the current value.
func holds(in Input, cur model.Value) bool {
	switch in.Kind {
	case PublishCommit, PublishIndex:
		return in.Next.V > cur.V
	case AdminIndex:
		return in.Next.V >= cur.V
	case CASRef:
		if !cur.Equal(*in.Expected) {
			return false
		}
		if in.Concern == model.Head {
			return in.Next.V > cur.V
		}
		return in.Next.V >= cur.V
	case PushStatus, PushConfig:
		return cur.Equal(*in.Expected)
	}
	panic(fmt.Sprintf("robustness: no condition for %s", in.Kind))
}

// touches lists the concerns an input is projected onto.
func touches(in Input) []model.Concern {
	if in.Kind == Lookup || in.Kind == Create || in.Kind == Purge {
		return model.Concerns
	}
	return []model.Concern{in.Concern}
}

// partKey names the sub-history of one ID and concern.
type partKey struct {
	id      string
	concern model.Concern
}

// nsModel is the porcupine model of the nameservice.
var nsModel = porcupine.Model{
	Partition: partition,
	Init:      func() any { return state{} },
	Step: func(s, in, out any) (bool, any) {
		return step(s.(state), in.(op), out.(Output))
	},
	Equal: func(a, b any) bool {
		x, y := a.(state), b.(state)
		return x.exists == y.exists && x.value.Equal(y.value)
	},
	DescribeOperation: describeOp,
	DescribeState:     describeState,
}

// partition splits a projected history by ID and concern, keeping the
// order of first appearance.
func partition(history []porcupine.Operation) [][]porcupine.Operation {
	index := map[partKey]int{}
	var parts [][]porcupine.Operation
	for _, h := range history {
		o := h.Input.(op)
		k := partKey{o.in.ID, o.concern}
		i, ok := index[k]
		if !ok {
			i = len(parts)
			index[k] = i
			parts = append(parts, nil)
		}
		parts[i] = append(parts[i], h)
	}
	return parts
}

func describeOp(in, out any) string {
	o, r := in.(op), out.(Output)
	return fmt.Sprintf("%s %s = %s", o.in.ID, describeInput(o.in), describeOutput(o, r))
}

// describeInput names an operation and the concerns it writes: every
// operation but a Lookup names them, a create and a purge included.
func describeInput(in Input) string {
	switch {
	case in.Kind == Lookup:
		return "lookup"
	case in.Kind == Purge:
		return "purge (every concern)"
	case in.Kind == Create && in.Next.Payload == nil:
		return "create by init (every concern)"
	case in.Kind == Create:
		return fmt.Sprintf("create by cas (every concern) %s -> %s", in.Concern, in.Next)
	}
	s := fmt.Sprintf("%s %s", in.Kind, in.Concern)
	if in.Expected != nil {
		s += fmt.Sprintf(" expect %s", in.Expected)
	}
	return s + fmt.Sprintf(" -> %s", in.Next)
}

// describeOutput says what an operation returned, as seen from the
// concern it is projected onto (for a Lookup, that concern's value).
func describeOutput(o op, r Output) string {
	switch {
	case r.Unknown:
		return "unknown (" + r.Err + ")"
	case r.NotFound:
		return "not found"
	case o.in.Kind == Lookup:
		if v := r.Record.Value(o.concern); v != nil {
			return fmt.Sprintf("%s %s", o.concern, v)
		}
		return "no " + o.concern.String()
	case o.in.Kind == Purge:
		return "purged"
	case o.in.Kind == Create && r.Applied:
		return "created"
	case o.in.Kind == Create && o.in.Next.Payload == nil:
		return "exists already"
	case r.Applied:
		return fmt.Sprintf("applied, %s %s", o.in.Concern, r.Current)
	}
	return fmt.Sprintf("not applied, current %s %s", o.in.Concern, r.Current)
}

// describeEvent describes an event whole: a Lookup with every concern it
// read.
func describeEvent(e Event) string {
	if e.In.Kind != Lookup || e.Out.Unknown || e.Out.NotFound {
		return describeOp(op{e.In, e.In.Concern}, e.Out)
	}
	var vs []string
	for _, c := range model.Concerns {
		vs = append(vs, describeOutput(op{e.In, c}, e.Out))
	}
	return fmt.Sprintf("%s lookup = %s", e.In.ID, strings.Join(vs, ", "))
}

func describeState(s any) string {
	st := s.(state)
	if !st.exists {
		return "absent"
	}
	return st.value.String()
}
