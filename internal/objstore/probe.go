package objstore

import (
	"context"
	"errors"
	"time"

	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// ProbePrefix holds the probe objects of the object-store drivers, beside
// ns@v2/ so List never sees them.
const ProbePrefix = "ns@v2.probe/"

// Refused says which writes with a failing precondition a store refused.
type Refused struct{ Create, Update, Delete bool }

// ProbeOps are the requests Probe sends, straight to the store (never
// through a lock protocol).
type ProbeOps struct {
	Put    func(ctx context.Context, key string, data []byte, pc Precondition) (tag string, err error)
	Delete func(ctx context.Context, key string, pc Precondition) error
	// Wrong returns a tag, in the store's form, that is not tag.
	Wrong func(tag string) string
	// Refusal says whether err (nil included) is the store refusing the
	// write for its precondition, or an error that ends the probe.
	Refusal func(err error) (refused bool, fatal error)
}

// Probe writes a probe object under ProbePrefix, sends a create, an update
// and a delete whose preconditions fail, and reports which the store
// refused; before removing the object it calls last (when not nil).
func Probe(ctx context.Context, ops ProbeOps, last func(key, tag string, r Refused) error) (Refused, error) {
	var r Refused
	key, tag, err := putProbe(ctx, ops)
	if err != nil {
		return r, err
	}
	defer func() { _ = ops.Delete(context.WithoutCancel(ctx), key, Precondition{}) }()
	wrong := ops.Wrong(tag)
	_, err = ops.Put(ctx, key, []byte("{}"), IfAbsent())
	if r.Create, err = ops.Refusal(err); err != nil {
		return Refused{}, err
	}
	_, err = ops.Put(ctx, key, []byte("{}"), IfMatch(wrong))
	if r.Update, err = ops.Refusal(err); err != nil {
		return Refused{Create: r.Create}, err
	}
	if r.Delete, err = ops.Refusal(ops.Delete(ctx, key, IfMatch(wrong))); err != nil {
		return Refused{Create: r.Create, Update: r.Update}, err
	}
	if last != nil {
		return r, last(key, tag, r)
	}
	return r, nil
}

// probeAttempts bounds the writes of a probe object answered unavailable.
const probeAttempts = 3

// putProbe writes a new probe object, under a new key on each attempt,
// removing the object of a failed write (it may have landed), and tries
// again when the store answers unavailable: versitygw once answered "409
// ExistingObjectIsDirectory" while other clients probed the bucket, and a
// passing failure should not fail an Open.
func putProbe(ctx context.Context, ops ProbeOps) (key, tag string, err error) {
	for attempt := 1; ; attempt++ {
		key = ProbePrefix + driverutil.Token()
		tag, err = ops.Put(ctx, key, []byte("{}"), Precondition{})
		if err == nil {
			return key, tag, nil
		}
		if mayHaveLanded(err) {
			_ = ops.Delete(context.WithoutCancel(ctx), key, Precondition{})
		}
		if attempt == probeAttempts || !errors.Is(err, model.ErrUnavailable) {
			return key, "", err
		}
		if err := driverutil.Sleep(ctx, driverutil.Jitter(50*time.Millisecond, 500*time.Millisecond, attempt)); err != nil {
			return key, "", err
		}
	}
}

// mayHaveLanded says whether a write that failed with err may still have
// written its object; one refused outright (no bucket, a refused
// credential, a bad request) did not, and must cost no cleanup request.
func mayHaveLanded(err error) bool {
	for _, refused := range []error{model.ErrNotProvisioned, model.ErrPermissionDenied, model.ErrInvalidArgument, model.ErrNotFound} {
		if errors.Is(err, refused) {
			return false
		}
	}
	return true
}
