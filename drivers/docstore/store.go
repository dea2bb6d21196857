package docstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"gocloud.dev/docstore"
	"gocloud.dev/gcerrors"

	"nameservice.dev/nameservice/internal/awsconf"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// Field names of the documents. They are the storage format: never rename one.
const (
	fieldKey  = "key"  // the file's layout key
	fieldID   = "id"   // Firestore's and MongoDB's document name: the key, path-escaped
	fieldData = "data" // the file's bytes
)

// document is one file: its layout key, its bytes and its revision.
type document struct {
	Key  string `docstore:"key"`
	ID   string `docstore:"id,omitempty"`
	Data []byte `docstore:"data,omitempty"`
	Rev  any    `docstore:"DocstoreRevision"`
}

// store is the objstore.Store of a Driver, with revisions (as gocloud's
// portable text) as tags; its methods are not the Driver's own.
type store struct{ *Driver }

// doc returns the document of key holding data, without a revision.
func (s store) doc(key string, data []byte) *document {
	d := &document{Key: key, Data: data}
	if s.named {
		d.ID = url.PathEscape(key)
	}
	return d
}

// Get implements objstore.Store.
func (s store) Get(ctx context.Context, key string) ([]byte, string, error) {
	coll, err := s.collection()
	if err != nil {
		return nil, "", err
	}
	doc := s.doc(key, nil)
	if err := coll.Get(ctx, doc); err != nil {
		if missing(err) {
			return nil, "", nil
		}
		return nil, "", fail(ctx, "read", key, err)
	}
	if len(doc.Data) == 0 {
		return nil, "", nil
	}
	tag, err := coll.RevisionToString(doc.Rev)
	if err != nil {
		return nil, "", fmt.Errorf("docstore: read %s: %w: revision: %w", key, model.ErrInternal, err)
	}
	return doc.Data, tag, nil
}

// Head implements objstore.Store with a Get: a record file is small.
func (s store) Head(ctx context.Context, key string) (string, error) {
	_, tag, err := s.Get(ctx, key)
	return tag, err
}

// Put implements objstore.Store: Create when key must be absent, Replace
// on the revision of a tag, else Put.
func (s store) Put(ctx context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
	coll, err := s.collection()
	if err != nil {
		return "", err
	}
	doc := s.doc(key, data)
	switch {
	case pc.Absent:
		err = coll.Create(ctx, doc)
	case pc.Tag != "":
		if doc.Rev, err = coll.StringToRevision(pc.Tag); err != nil {
			// Not a revision of this collection: it cannot match.
			return "", fmt.Errorf("docstore: write %s: %w (tag %q is no revision)", key, objstore.ErrPrecondition, pc.Tag)
		}
		err = coll.Replace(ctx, doc)
	default:
		err = coll.Put(ctx, doc)
	}
	if err != nil {
		return "", condFail(ctx, "write", key, pc, err)
	}
	tag, err := coll.RevisionToString(doc.Rev)
	if err != nil {
		return "", fmt.Errorf("docstore: write %s: %w: revision: %w", key, model.ErrInternal, err)
	}
	return tag, nil
}

// Delete implements objstore.Store, on the revision of pc.Tag if any.
func (s store) Delete(ctx context.Context, key string, pc objstore.Precondition) error {
	coll, err := s.collection()
	if err != nil {
		return err
	}
	doc := s.doc(key, nil)
	if pc.Tag != "" {
		if doc.Rev, err = coll.StringToRevision(pc.Tag); err != nil {
			return fmt.Errorf("docstore: remove %s: %w (tag %q is no revision)", key, objstore.ErrPrecondition, pc.Tag)
		}
	}
	if err := coll.Delete(ctx, doc); err != nil && (pc.Tag != "" || !missing(err)) {
		return condFail(ctx, "remove", key, pc, err)
	}
	return nil
}

// MaybeApplied implements objstore.Store: a DynamoDB write whose answer
// was lost or was a 5xx (lostWrite), or another provider's that got no
// answer or failed in the server.
func (store) MaybeApplied(err error) bool {
	if errors.As(err, new(lostWrite)) {
		return true
	}
	if !errors.Is(err, model.ErrUnavailable) || errors.Is(err, context.Canceled) {
		return false // refused, or not sent
	}
	switch gcerrors.Code(err) {
	case gcerrors.Unknown, gcerrors.Internal, gcerrors.DeadlineExceeded:
		return awsconf.MaybeApplied(err)
	}
	return false
}

// List modes, learnt from the first List of a driver.
const (
	modeOrdered = 1 // the provider runs queries ordered by key
	modeScan    = 2 // it cannot: filter everything, sort in memory
)

// List implements objstore.Store with a query of the keys under prefix
// after startAfter, reading only keys and revisions, ordered by key where
// the provider can; where it cannot (awsdynamodb on a hash key) a filtered
// scan, sorted in memory.
func (s store) List(ctx context.Context, prefix, startAfter string, fn func(objstore.Entry) error) error {
	coll, err := s.collection()
	if err != nil {
		return err
	}
	query := func() *docstore.Query { // a new one each time: a Query's methods change it
		q := coll.Query()
		if startAfter >= prefix && startAfter != "" {
			q.Where(fieldKey, ">", startAfter)
		} else if prefix != "" {
			q.Where(fieldKey, ">=", prefix)
		}
		if end := prefixEnd(prefix); end != "" {
			q.Where(fieldKey, "<", end)
		}
		return q
	}
	fields := []docstore.FieldPath{fieldKey, docstore.DefaultRevisionField}
	var fnErr error
	emit := func(doc *document) bool {
		tag, err := coll.RevisionToString(doc.Rev)
		if fnErr = err; err == nil {
			// The size is unknown without the data: Get finds an empty document absent.
			fnErr = fn(objstore.Entry{Key: doc.Key, Tag: tag, Size: 1})
		}
		return fnErr == nil
	}
	if s.listMode.Load() != modeScan {
		sent := false
		err := each(ctx, query().OrderBy(fieldKey, docstore.Ascending).Get(ctx, fields...), func(doc *document) bool {
			sent = true
			return emit(doc)
		})
		// A provider that cannot run the ordered query answers
		// Unimplemented or InvalidArgument at once.
		switch c := gcerrors.Code(err); {
		case fnErr != nil:
			return fnErr
		case err == nil:
			s.listMode.CompareAndSwap(0, modeOrdered)
			return nil
		case sent || s.listMode.Load() == modeOrdered || c != gcerrors.Unimplemented && c != gcerrors.InvalidArgument:
			return fail(ctx, "list", prefix, err)
		}
		s.listMode.Store(modeScan)
	}
	var docs []*document
	if err := each(ctx, query().Get(ctx, fields...), func(doc *document) bool { docs = append(docs, doc); return true }); err != nil {
		return fail(ctx, "list", prefix, err)
	}
	slices.SortFunc(docs, func(a, b *document) int { return strings.Compare(a.Key, b.Key) })
	for _, doc := range docs {
		if !emit(doc) {
			return fnErr
		}
	}
	return nil
}

// each hands each document it yields to fn until it ends or fn returns
// false, and stops it.
func each(ctx context.Context, it *docstore.DocumentIterator, fn func(*document) bool) error {
	defer it.Stop()
	for {
		doc := &document{}
		if err := it.Next(ctx, doc); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if !fn(doc) {
			return nil
		}
	}
}

// prefixEnd returns the least string above every string with prefix
// p, "" when there is none.
func prefixEnd(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] < 0xff {
			return p[:i] + string([]byte{p[i] + 1})
		}
	}
	return ""
}

// errMissing is the outcome of a precondition on a revision that met no
// document (a failed precondition is objstore.ErrPrecondition).
var errMissing = objstore.Sentinel("no such document", objstore.ErrMissing)

// missing reports whether err says the document does not exist (and not
// that the DynamoDB table does not).
func missing(err error) bool {
	return gcerrors.Code(err) == gcerrors.NotFound && awsconf.Code(err) != model.NotProvisioned
}

// condFail classifies the error of a write under pc.
func condFail(ctx context.Context, op, key string, pc objstore.Precondition, err error) error {
	switch c := gcerrors.Code(err); {
	case ctx.Err() == nil && pc.Conditional() && (c == gcerrors.FailedPrecondition || c == gcerrors.AlreadyExists):
		return fmt.Errorf("docstore: %s %s: %w", op, key, objstore.ErrPrecondition)
	case ctx.Err() == nil && pc.Tag != "" && missing(err):
		return fmt.Errorf("docstore: %s %s: %w", op, key, errMissing)
	}
	return fail(ctx, op, key, err)
}

// sentinels are the driver sentinels of gcerrors codes; fail makes any
// other code (Unknown, Internal, DeadlineExceeded, ...) ErrUnavailable.
var sentinels = map[gcerrors.ErrorCode]error{
	gcerrors.InvalidArgument: model.ErrInvalidArgument, gcerrors.ResourceExhausted: model.ErrThrottled,
	gcerrors.Unimplemented: model.ErrUnsupported,
}

// fail wraps err, from the collection, of op on key in the driver sentinel
// that classifies it.
func fail(ctx context.Context, op, key string, err error) error {
	return fmt.Errorf("docstore: %s %s: %w", op, key, classify(ctx, err, false))
}

// classifyOpen is classify for the error of opening the collection.
func classifyOpen(ctx context.Context, err error) error { return classify(ctx, err, true) }

// classify wraps err in the driver sentinel for its code; when opening the
// collection, NotFound means the collection (the DynamoDB table, the
// Firestore collection's database) does not exist. A done ctx wins: its
// error is wrapped instead.
func classify(ctx context.Context, err error, opening bool) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%w (%v)", ctxErr, err)
	}
	c, aws := gcerrors.Code(err), awsconf.Code(err)
	switch {
	case aws == model.PermissionDenied:
		return fmt.Errorf("%w: DynamoDB refused the credentials or the permission for dynamodb:%s; grant it: %w", model.ErrPermissionDenied, awsconf.Operation(err), err)
	case c == gcerrors.PermissionDenied:
		return fmt.Errorf("%w: the backend refused the credentials or the permission; grant the caller read and write access to the collection: %w", model.ErrPermissionDenied, err)
	case aws == model.NotProvisioned || opening && c == gcerrors.NotFound:
		return fmt.Errorf("%w: the collection does not exist; create it (for docstore+dynamodb: `ns table create` or the driver's Provision): %w", model.ErrNotProvisioned, err)
	case aws == model.Throttled:
		return fmt.Errorf("%w: %w", model.ErrThrottled, err)
	case c == gcerrors.Canceled && errors.Is(err, context.Canceled):
		return err
	}
	return fmt.Errorf("%w: %w", cmp.Or(sentinels[c], model.ErrUnavailable), err)
}
