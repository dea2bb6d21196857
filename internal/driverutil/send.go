package driverutil

import "context"

// Send sends v on ch unless ctx ends first, and reports whether it sent:
// false tells the producer that the consumer is gone and it should stop.
// The watch and subscription feeds all send this way.
func Send[T any](ctx context.Context, ch chan<- T, v T) bool {
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}
