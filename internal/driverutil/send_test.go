package driverutil

import (
	"context"
	"testing"
)

func TestSendDelivers(t *testing.T) {
	ch := make(chan int, 1)
	if !Send(context.Background(), ch, 7) {
		t.Fatal("Send on a channel with room = false, want true")
	}
	if v := <-ch; v != 7 {
		t.Fatalf("received %d, want 7", v)
	}
}

func TestSendStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ch := make(chan int) // nobody receives: only ctx can end the send
	if Send(ctx, ch, 1) {
		t.Fatal("Send with a done context and no receiver = true, want false")
	}
}
