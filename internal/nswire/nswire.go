// Package nswire is the wire form of the nameservice's own HTTP routes
// (prefix /ns/v1), shared by the server and the http:// driver so that the
// two cannot drift apart. Records travel in the record JSON of
// docs/model.md, IDs at the end of a path (see PathID).
package nswire

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// Prefix is the path prefix of every route of this package's protocol.
const Prefix = "/ns/v1"

// Headers of a write. IdempotencyKey names one write across its resends
// (the server derives its driver.Write ID from it). Attempt is 1 until an
// earlier attempt may have reached a server: above 1 the server resolves
// the write against the backend before it writes (driver.Write.Resend).
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderAttempt        = "Ns-Attempt"
	HeaderReplayed       = "Idempotent-Replayed"
)

// PathID returns id for the tail of a path: each '/'-separated segment
// percent-encoded, so that no proxy ever sees an encoded slash.
func PathID(id model.ID) string {
	segs := strings.Split(id.String(), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// Query returns params as query values, leaving out the empty ones.
func Query(params map[string]string) url.Values {
	q := url.Values{}
	for k, v := range params {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// PushRequest is the body of POST /ns/v1/push/{concern}/{id}.
type PushRequest struct {
	Condition string       `json:"condition"`
	Expected  *model.Value `json:"expected,omitempty"` // for equals
	New       model.Value  `json:"new"`
}

// NewPushRequest returns the request of an update to next under cond;
// DriverCondition reads cond back.
func NewPushRequest(cond driver.Condition, next model.Value) PushRequest {
	switch cond.Kind {
	case driver.Above:
		return PushRequest{Condition: "above", New: next}
	case driver.AtLeast:
		return PushRequest{Condition: "at_least", New: next}
	case driver.Equals:
		return PushRequest{Condition: "equals", Expected: &cond.Expected, New: next}
	}
	return PushRequest{Condition: "equals", New: next} // refused: no kind of the contract
}

// DriverCondition returns the driver condition r names.
func (r *PushRequest) DriverCondition() (driver.Condition, error) {
	switch r.Condition {
	case "above":
		return driver.IfAbove(), nil
	case "at_least":
		return driver.IfAtLeast(), nil
	case "equals":
		if r.Expected == nil {
			return driver.Condition{}, fmt.Errorf("%w: condition equals needs an expected value", model.ErrInvalidArgument)
		}
		return driver.IfEquals(*r.Expected), nil
	}
	return driver.Condition{}, fmt.Errorf("%w: condition %q is not above, at_least or equals", model.ErrInvalidArgument, r.Condition)
}

// PushResponse answers a push: 200 when applied, 409 when not.
type PushResponse struct {
	Applied bool        `json:"applied"`
	Current model.Value `json:"current"`
}

// RetractRequest is the body of POST /ns/v1/retract/{id}: retracted_at, in
// Unix seconds.
type RetractRequest struct {
	At int64 `json:"at"`
}

// GraphSourceRequest is the body of POST /ns/v1/graph-sources/{id}.
type GraphSourceRequest struct {
	SourceType   string       `json:"source_type"`
	Dependencies []string     `json:"dependencies,omitempty"`
	Config       model.Object `json:"config,omitempty"`
}

// ListResponse is one page of GET /ns/v1/records.
type ListResponse struct {
	Records       []*model.Record `json:"records"`
	Failed        []RecordError   `json:"failed,omitempty"`
	NextPageToken string          `json:"next_page_token,omitempty"`
}

// HeadsResponse is the answer of GET /ns/v1/heads/{id}.
type HeadsResponse struct {
	Head  model.Value `json:"head"`
	Index model.Value `json:"index"`
}

// RecordError is a model.RecordError on the wire.
type RecordError struct {
	ID     string `json:"id,omitempty"`
	Object string `json:"object"`
	Error  string `json:"error"`
	Code   string `json:"code"`
}

// Change is the data of a "change" event of GET /ns/v1/watch.
type Change struct {
	ID      string       `json:"id"`
	Concern string       `json:"concern,omitempty"`
	Old     int64        `json:"old"`
	New     *model.Value `json:"new,omitempty"`
	Deleted bool         `json:"deleted,omitempty"`
}

// Watch event names: the records of the snapshot ("failed" for one that
// cannot be read), "synced", then changes; "error" ends the stream.
const (
	EventRecord = "record"
	EventFailed = "failed"
	EventSynced = "synced"
	EventChange = "change"
	EventError  = "error"
)

// Error is the body of every error answer of the protocol.
type Error struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	// OutcomeUnknown is set on a write's 503 when the server could not
	// establish whether the write landed: the client does not resend it.
	OutcomeUnknown bool `json:"outcome_unknown,omitempty"`
}

// statuses are the HTTP statuses of the error codes; 500 for the others.
var statuses = map[model.ErrorCode]int{
	model.NotFound: http.StatusNotFound, model.InvalidArgument: http.StatusBadRequest,
	model.AlreadyExists: http.StatusConflict, model.WrongKind: http.StatusConflict,
	model.HasBranches: http.StatusConflict, model.Throttled: http.StatusTooManyRequests,
	model.Unsupported: http.StatusNotImplemented, model.Unavailable: http.StatusServiceUnavailable,
	model.Canceled: http.StatusServiceUnavailable,
}

// Status returns the HTTP status of an error of code c.
func Status(c model.ErrorCode) int { return cmp.Or(statuses[c], http.StatusInternalServerError) }

// ToDriverError returns the error an Error body stands for: the server's
// message, matching its code's sentinel (but Canceled's: the server's
// request ended, not the client's) with errors.Is. The sentinel's text is
// added only when the message lacks it.
func (e *Error) ToDriverError() error {
	var sentinels []error
	for c := model.Unknown + 1; c.Sentinel() != nil; c++ { // every code after Unknown has one
		if c != model.Canceled && c.String() == e.Code {
			sentinels = append(sentinels, c.Sentinel())
		}
	}
	if e.OutcomeUnknown {
		sentinels = append(sentinels, model.ErrOutcomeUnknown)
	}
	msg := e.Error
	for _, s := range sentinels {
		if !strings.Contains(msg, s.Error()) {
			msg = s.Error() + ": " + msg
		}
	}
	if len(sentinels) == 0 {
		return errors.New(msg)
	}
	return serverError{msg: msg, sentinels: sentinels}
}

// serverError is a server's error message, naming its sentinels.
type serverError struct {
	msg       string
	sentinels []error
}

func (e serverError) Error() string   { return e.msg }
func (e serverError) Unwrap() []error { return e.sentinels }

// CollectRequest is the body of POST /ns/v1/collect.
type CollectRequest struct {
	Prefix      string `json:"prefix,omitempty"`
	OlderThanMS int64  `json:"older_than_ms"`
	DryRun      bool   `json:"dry_run,omitempty"`
}

// CollectLine is one line of the answer to POST /ns/v1/collect: one per
// object (named by record only), then one with Stats, or with Error when
// the collection failed part-way.
type CollectLine struct {
	ID      string               `json:"id,omitempty"`
	Removed bool                 `json:"removed,omitempty"`
	Reason  string               `json:"reason,omitempty"`
	Stats   *driver.CollectStats `json:"stats,omitempty"`
	Error   *Error               `json:"error,omitempty"`
}

// BranchRequest is the body of POST /ns/v1/branches/{id}: branch From
// (main when "") at At (its head when nil). The answer is 201 with the
// record.
type BranchRequest struct {
	From string `json:"from,omitempty"`
	At   *Ref   `json:"at,omitempty"`
}

// Ref is a commit or index pointer: an address and its t.
type Ref struct {
	Address string `json:"address"`
	T       int64  `json:"t"`
}

// ResetHeadRequest is the body of POST /ns/v1/reset-head/{id}: set the
// head and index (unborn with ClearIndex) whatever the watermarks. The
// answer is 200 with the record as it was.
type ResetHeadRequest struct {
	Commit     Ref  `json:"commit"`
	Index      *Ref `json:"index,omitempty"`
	ClearIndex bool `json:"clear_index,omitempty"`
}
