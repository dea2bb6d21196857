package docstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"gocloud.dev/docstore"
	"gocloud.dev/gcerrors"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/model"
)

// sentinels are the driver sentinels of gcerrors codes; classify makes
// any other code (Unknown, Internal, DeadlineExceeded, ...) ErrUnavailable.
var sentinels = map[gcerrors.ErrorCode]error{
	gcerrors.NotFound: model.ErrNotFound, gcerrors.AlreadyExists: model.ErrAlreadyExists,
	gcerrors.InvalidArgument: model.ErrInvalidArgument, gcerrors.ResourceExhausted: model.ErrThrottled,
	gcerrors.Unimplemented: model.ErrUnsupported,
}

// classify wraps err, from the collection, in the driver sentinel for its
// gcerrors code. A done ctx wins: its error is wrapped instead.
func classify(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%w (%v)", ctxErr, err)
	}
	c := gcerrors.Code(err)
	switch {
	case c == gcerrors.PermissionDenied:
		return fmt.Errorf("%w: the backend refused the credentials or the permission; grant the caller read and write access to the collection: %v", model.ErrPermissionDenied, err)
	case c == gcerrors.Canceled && errors.Is(err, context.Canceled):
		return err
	}
	return fmt.Errorf("%w: %v", cmp.Or(sentinels[c], model.ErrUnavailable), err)
}

// classifyOpen is classify for the error of opening the collection, where
// NotFound means the collection (the DynamoDB table, the Firestore
// collection's database) does not exist.
func classifyOpen(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return classify(ctx, err)
	}
	// gocloud's DynamoDB collection returns the SDK's error of its
	// DescribeTable as is.
	if awsconf.Code(err) == model.PermissionDenied {
		return fmt.Errorf("%w: DynamoDB refused the credentials or the permission for dynamodb:%s; grant it: %v", model.ErrPermissionDenied, awsconf.Operation(err), err)
	}
	if gcerrors.Code(err) == gcerrors.NotFound || awsconf.Code(err) == model.NotProvisioned {
		return fmt.Errorf("%w: the collection does not exist; create it (for docstore+dynamodb: `ns table create` or the driver's Provision): %v", model.ErrNotProvisioned, err)
	}
	return classify(ctx, err)
}

// actionErrors spreads the error of ActionList.Do over its n actions: one
// error (or nil) per action. An error not tied to an action applies to all.
func actionErrors(err error, n int) []error {
	errs := make([]error, n)
	alerr, ok := errors.AsType[docstore.ActionListError](err)
	if err != nil && !ok {
		alerr = docstore.ActionListError{{Index: -1, Err: err}}
	}
	for _, e := range alerr {
		if e.Index >= 0 && e.Index < n {
			errs[e.Index] = e.Err
			continue
		}
		for i := range errs {
			errs[i] = e.Err
		}
	}
	return errs
}

// maybeApplied reports whether a write that failed with err may have been
// applied nevertheless: its answer was lost (a timeout, a broken
// connection, a 5xx). A refusal by the store (a failed condition, a
// throttle, a bad request), a connection never made and a cancellation of
// ctx are not.
func maybeApplied(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false // the caller's cancellation wins: the error says so
	}
	switch gcerrors.Code(err) {
	case gcerrors.Unknown, gcerrors.Internal, gcerrors.DeadlineExceeded:
		return awsconf.MaybeApplied(err)
	}
	return false
}

// outcomeUnknown is the error of a write of what (e.g. "update ID head")
// that may have landed and whose outcome cannot be established; a done
// ctx wins, as in classify.
func outcomeUnknown(ctx context.Context, what string, format string, args ...any) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("docstore: %s: %w", what, err)
	}
	return fmt.Errorf("docstore: %s: %w", what, driver.OutcomeUnknown(format, args...))
}

// retryable reports whether a conditional write that failed with err should
// be resolved by reading again: a revision conflict, a document that went
// away, or an answer that may hide a write that landed.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	switch gcerrors.Code(err) {
	case gcerrors.FailedPrecondition, gcerrors.NotFound, gcerrors.Unknown, gcerrors.Internal,
		gcerrors.DeadlineExceeded, gcerrors.ResourceExhausted:
		return true
	}
	return false
}
