// Package chans holds the one channel helper the watch and subscription
// feeds share.
package chans

import "context"

// Send sends v on ch unless ctx ends first, and reports whether it sent:
// false tells the producer that the consumer is gone and it should stop.
func Send[T any](ctx context.Context, ch chan<- T, v T) bool {
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}
