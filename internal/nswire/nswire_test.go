package nswire

import (
	"context"
	"errors"
	"strings"
	"testing"

	"nameservice.dev/nameservice/model"
)

// An Error body matches its code's sentinel, every code's but Canceled's,
// and says the sentinel's text once.
func TestToDriverError(t *testing.T) {
	for _, c := range []model.ErrorCode{model.NotFound, model.AlreadyExists, model.WrongKind,
		model.InvalidArgument, model.Throttled, model.Unavailable, model.Unsupported, model.Internal,
		model.NotProvisioned, model.PermissionDenied} {
		s := c.Sentinel()
		for _, msg := range []string{"boom", s.Error() + ": boom"} {
			err := (&Error{Error: msg, Code: c.String()}).ToDriverError()
			if !errors.Is(err, s) || strings.Count(err.Error(), s.Error()) != 1 || !strings.Contains(err.Error(), "boom") {
				t.Errorf("code %v, message %q: %q, want it to match %v and name it once", c, msg, err, s)
			}
		}
	}
	for _, code := range []string{"Canceled", "Unknown", "", "Nonsense"} {
		err := (&Error{Error: "boom", Code: code}).ToDriverError()
		if model.Code(err) != model.Unknown || errors.Is(err, context.Canceled) || err.Error() != "boom" {
			t.Errorf("code %q: %q (code %v), want a plain error", code, err, model.Code(err))
		}
	}
}
