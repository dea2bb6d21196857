package docstore

import (
	"context"
	"errors"
	"fmt"

	"gocloud.dev/docstore"
	"gocloud.dev/gcerrors"

	"nameservice.dev/nameservice/driver"
)

// classify wraps err, from the collection, in the driver sentinel for its
// gcerrors code. A done ctx wins: its error is wrapped instead.
func classify(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%w (%v)", ctxErr, err)
	}
	var s error
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		s = driver.ErrNotFound
	case gcerrors.AlreadyExists:
		s = driver.ErrAlreadyExists
	case gcerrors.InvalidArgument:
		s = driver.ErrInvalidArgument
	case gcerrors.ResourceExhausted:
		s = driver.ErrThrottled
	case gcerrors.Unimplemented:
		s = driver.ErrUnsupported
	case gcerrors.Canceled:
		if errors.Is(err, context.Canceled) {
			return err
		}
		s = driver.ErrUnavailable
	default: // Unknown, Internal, DeadlineExceeded, PermissionDenied, ...
		s = driver.ErrUnavailable
	}
	return fmt.Errorf("%w: %v", s, err)
}

// code returns the gcerrors code of err (OK for nil).
func code(err error) gcerrors.ErrorCode {
	if err == nil {
		return gcerrors.OK
	}
	return gcerrors.Code(err)
}

// actionErrors spreads the error of ActionList.Do over its n actions: one
// error (or nil) per action. An error not tied to an action applies to all.
func actionErrors(err error, n int) []error {
	errs := make([]error, n)
	if err == nil {
		return errs
	}
	var alerr docstore.ActionListError
	if !errors.As(err, &alerr) {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for _, e := range alerr {
		if e.Index < 0 || e.Index >= n {
			for i := range errs {
				errs[i] = e.Err
			}
			continue
		}
		errs[e.Index] = e.Err
	}
	return errs
}

// retryable reports whether a conditional write that failed with err should
// be resolved by reading again: a revision conflict, a document that went
// away, or an answer that may hide a write that landed.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	switch code(err) {
	case gcerrors.FailedPrecondition, gcerrors.NotFound, gcerrors.Unknown, gcerrors.Internal,
		gcerrors.DeadlineExceeded, gcerrors.ResourceExhausted:
		return true
	}
	return false
}
