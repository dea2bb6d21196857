package web

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
)

// Public tells clients of errors; every route family of a server shares
// one. A backend's error may hold what no client should learn (paths, raw
// messages, object keys): the NameService marks it (guard.BackendError),
// and a marked error is told by its operation and the description of its
// code, its text going to the log. The errors of the checks made before
// the backend is asked are told as they are.
type Public struct {
	Log     *slog.Logger
	Unknown prometheus.Counter // counts the writes answered with an unknown outcome
}

// publicError is what a client is told of a backend's error.
type publicError struct {
	msg      string
	sentinel error
}

func (e *publicError) Error() string { return e.msg }
func (e *publicError) Unwrap() error { return e.sentinel }

const unknownText = "outcome unknown: the write's answer was lost and the backend cannot tell whether it landed; read the record before writing again"

// expected are the codes of ordinary outcomes, which are not logged.
var expected = []model.ErrorCode{model.NotFound, model.AlreadyExists, model.WrongKind, model.HasBranches}

// publicText describes each code without the backend's message.
var publicText = map[model.ErrorCode]string{
	model.NotFound:         "not found",
	model.AlreadyExists:    "already exists",
	model.WrongKind:        "wrong kind: the operation does not apply to the record's kind",
	model.InvalidArgument:  "invalid argument: the backend refused the request",
	model.Throttled:        "throttled: the backend refused for load; retry later",
	model.Unavailable:      "unavailable: the backend did not answer",
	model.Unsupported:      "unsupported: the backend cannot do this",
	model.Internal:         "internal error: the backend holds data the server cannot read",
	model.Canceled:         "unavailable: the operation was canceled or timed out",
	model.NotProvisioned:   "not provisioned: the backend's table or bucket does not exist",
	model.PermissionDenied: "permission denied: the backend refused the server's credentials",
	model.HasBranches:      "has branches: drop the branches of the record first",
}

// Error returns the error a client is told of err, met in op (which names
// the ID: "push head a:main"): err itself unless the backend returned it,
// else op and the description of its code, logging err unless expected.
func (p *Public) Error(ctx context.Context, op string, err error) error {
	if _, ok := errors.AsType[*guard.BackendError](err); !ok {
		return err
	}
	code := model.Code(err)
	text, ok := publicText[code]
	sentinel := code.Sentinel()
	if !ok || sentinel == nil {
		code, text, sentinel = model.Internal, "internal error", model.ErrInternal
	}
	if branches, ok := errors.AsType[*driverutil.BranchesError](err); ok {
		text = fmt.Sprintf("has %d branch(es); drop them first", branches.N)
	}
	if errors.Is(err, model.ErrOutcomeUnknown) {
		p.Unknown.Inc()
		text, sentinel = unknownText, errors.Join(model.ErrUnavailable, model.ErrOutcomeUnknown)
	}
	if !slices.Contains(expected, code) {
		p.Log.LogAttrs(ctx, slog.LevelWarn, "backend error", slog.String("op", op),
			slog.String("code", code.String()), slog.String("error", err.Error()),
			slog.String("principal", cmp.Or(auth.FromContext(ctx), &auth.Principal{}).Name))
		text += " (details in the server's log)"
	}
	return &publicError{msg: op + ": " + text, sentinel: sentinel}
}

// Failure returns a record a listing could not read as a client may see
// it: named by its ID or, when unknown, a digest of the object's name that
// the log gives beside the name.
func (p *Public) Failure(ctx context.Context, f *model.RecordError) nswire.RecordError {
	code := model.Code(f.Err)
	if code == model.Unknown {
		code = model.Internal
	}
	e := nswire.RecordError{Code: code.String()}
	if f.ID.IsZero() {
		sum := sha256.Sum256([]byte(f.Object))
		e.Object = "object-" + hex.EncodeToString(sum[:6])
	} else {
		e.ID, e.Object = f.ID.String(), f.ID.String()
	}
	e.Error = p.Error(ctx, "read "+e.Object, guard.FromBackend(f.Err)).Error()
	if f.ID.IsZero() {
		p.Log.LogAttrs(ctx, slog.LevelWarn, "unreadable object", slog.String("public_name", e.Object), slog.String("object", f.Object))
	}
	return e
}
