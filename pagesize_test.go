package nameservice_test

import (
	"context"
	"errors"
	"testing"

	"nameservice.dev/nameservice"
	_ "nameservice.dev/nameservice/drivers/all"
	"nameservice.dev/nameservice/guard"
)

// TestPageSizeIsBounded: a page size over guard.MaxPageSize is an invalid
// argument, refused before any driver sees it: the file and object-store
// drivers made a channel of that capacity (a huge one panicked, makechan:
// size out of range) and the docstore driver sliced past it.
func TestPageSizeIsBounded(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{"file://" + t.TempDir(), "docstore+mem://pagesize"} {
		ns, err := nameservice.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if err := ns.Init(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := ns.ListPage(ctx, nameservice.ListOptions{PageSize: guard.MaxPageSize}); err != nil {
			t.Errorf("%s: a page of %d: %v", u, guard.MaxPageSize, err)
		}
		for _, size := range []int{guard.MaxPageSize + 1, 1 << 40, 1<<63 - 1} {
			if _, err := ns.ListPage(ctx, nameservice.ListOptions{PageSize: size}); !errors.Is(err, nameservice.ErrInvalidArgument) {
				t.Errorf("%s: a page of %d: %v, want ErrInvalidArgument", u, size, err)
			}
		}
		ns.Close()
	}
}
