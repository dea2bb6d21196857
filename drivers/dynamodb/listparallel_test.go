package dynamodb_test

import (
	"errors"
	"net/url"
	"testing"

	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/model"
)

// TestListParallelIsBounded: list_parallel is the number of Scan segments
// and batch calls run at once, each its own goroutine: like the other
// drivers' it is bounded (1 to 256), so that a URL cannot start millions
// of them (or wrap TotalSegments past int32).
func TestListParallelIsBounded(t *testing.T) {
	for raw, ok := range map[string]bool{
		"dynamodb://t01?list_parallel=256":        true,
		"dynamodb://t01?list_parallel=257":        false,
		"dynamodb://t01?list_parallel=100000000":  false,
		"dynamodb://t01?list_parallel=2147483648": false,
	} {
		u, err := url.Parse(raw)
		must(t, err)
		_, err = dynamodb.ParseURL(u)
		if ok && err != nil || !ok && !errors.Is(err, model.ErrInvalidArgument) {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
