// Package objstore is the record protocol the file, object-store and
// document-store drivers share (drivers/fs, drivers/s3etag, drivers/blob,
// drivers/docstore): records kept as ns@v2 files (objects, documents), made
// safe for concurrent writers by the store's conditional writes on a
// per-object version tag (an ETag, a generation, a document's revision, or
// for files a tag the filesystem driver checks under the file's lock). It
// also parses and checks the options those drivers share.
//
// A Records implements the record operations of driver.Driver over a
// Store, which only reads, writes, removes and lists objects. A file is
// created with an absent precondition and replaced on the tag it was read
// at (cached, so an uncontended push is one write); a failed precondition
// makes the operation re-read and report the conflict or try again. Every
// write records its driver.Write in the file it writes, to resolve a lost
// answer (lost.go). Create writes only the defining file, holding an
// incarnation token that the record's other files copy, so that a lookup
// is one parallel read and a file of another token is debris. No create,
// push or purge deletes an object (nothing rests on a conditional delete);
// Collect removes what purges left (collect.go). Branches keep their
// source's count exact with one conditional write at a time
// (branching.go).
package objstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// Precondition is the precondition of a write: Absent (the key must not
// exist), Tag (the object must still be at that version), or neither.
type Precondition struct {
	Absent bool
	Tag    string
}

// IfAbsent is the precondition of a create.
func IfAbsent() Precondition { return Precondition{Absent: true} }

// IfMatch is the precondition of a write on an object at version tag.
func IfMatch(tag string) Precondition { return Precondition{Tag: tag} }

// Conditional reports whether p is a precondition at all.
func (p Precondition) Conditional() bool { return p.Absent || p.Tag != "" }

// Store is an object store with conditional writes. Keys are layout keys
// (the Store adds its own prefix); tags are normalised (NormTag). Other
// errors than the sentinels below are classified with driver sentinels
// and name the operation and key.
type Store interface {
	// Get reads key; data is nil when it is absent (missing or zero-length).
	Get(ctx context.Context, key string) (data []byte, tag string, err error)
	// Head returns key's tag, "" when it is absent.
	Head(ctx context.Context, key string) (string, error)
	// Put writes data to key under pc and returns the new tag. A failed
	// precondition is an error wrapping ErrPrecondition, a tag
	// precondition on a missing key one wrapping ErrMissing.
	Put(ctx context.Context, key string, data []byte, pc Precondition) (string, error)
	// Delete removes key under pc, with Put's errors, sending the request
	// once (a retry could remove an object written after it); removing a
	// missing key unconditionally is not an error. Correctness never rests
	// on the store enforcing pc.
	Delete(ctx context.Context, key string, pc Precondition) error
	// List calls fn, in key order, with the Entry of every object whose key
	// starts with prefix and sorts after startAfter; fn's error ends it and
	// is returned as it is. A store whose listing can begin at a key (S3
	// StartAfter, GCS StartOffset) must, so that a page does not list
	// earlier keys again.
	List(ctx context.Context, prefix, startAfter string, fn func(Entry) error) error
	// MaybeApplied reports whether a failed write may nevertheless have
	// been applied (no answer came back, or a 5xx).
	MaybeApplied(err error) bool
}

// ErrPrecondition and ErrMissing are the outcomes of a conditional request
// beside success and other errors: the precondition failed (nothing was
// written), and a tag precondition met no object. A Store may return its
// own made by Sentinel.
var (
	ErrPrecondition = errors.New("precondition failed")
	ErrMissing      = errors.New("no such key")
)

// Sentinel returns an error with the given text that errors.Is matches
// with base (ErrPrecondition or ErrMissing).
func Sentinel(text string, base error) error { return &sentinel{text: text, base: base} }

type sentinel struct {
	text string
	base error
}

func (s *sentinel) Error() string        { return s.text }
func (s *sentinel) Is(target error) bool { return target == s.base }

// Config says how Records lays out and encodes records.
type Config struct {
	// Name prefixes every message ("s3", "gs", "azblob").
	Name    string
	Layout  jsonld.Layout
	Dialect jsonld.Dialect
	// UniqueTags says no later write gives an object a tag it had before
	// (GCS generations, Azure ETags; not S3's ETag, a digest of the bytes),
	// so a tag alone resolves a lost answer (see holds).
	UniqueTags bool
	// RetryThrottled makes a conditional write refused for load (wrapping
	// model.ErrThrottled) count as not done: back off, re-read, try again.
	RetryThrottled bool
	ListParallel   int // objects List reads at once (0: DefaultListParallel)
	// LocalReads says the store's reads are local system calls (the
	// filesystem driver): List reads a record's files one after another
	// and caches none, as a read costs about what the tag check saves.
	LocalReads bool
	// Object names a key in messages and Page.Failed (the filesystem
	// driver gives the file's path); the key itself when nil.
	Object func(key string) string
	// Release, when set, is called by the first Close.
	Release func() error
}

// Records implements driver.Driver over a Store for a driver to embed; it
// is safe for concurrent use.
type Records struct {
	store Store
	cfg   Config
	cache tagCache
	// idOfKey maps the key of a defining file whose key fits several IDs
	// to the ID it held at a tag, so listing does not read it again.
	idOfKey sync.Map // key -> nestedIDEntry
	closed  driverutil.ClosedFlag
}

// New returns the Records of store; cfg.Layout and cfg.Dialect must be
// valid.
func New(store Store, cfg Config) *Records {
	return &Records{store: store, cfg: cfg, cache: newTagCache()}
}

// Close implements driver.Driver: every later operation fails, and the
// first Close returns Config.Release's error.
func (r *Records) Close() error {
	if r.closed.Close() && r.cfg.Release != nil {
		return r.cfg.Release()
	}
	return nil
}

func (r *Records) get(ctx context.Context, key string) (*cached, error) {
	data, tag, err := r.store.Get(ctx, key)
	if err != nil || data == nil {
		return nil, err
	}
	return &cached{data: data, tag: tag}, nil
}

// object names key in messages (see Config.Object).
func (r *Records) object(key string) string {
	if r.cfg.Object != nil {
		return r.cfg.Object(key)
	}
	return key
}

func (r *Records) begin(ctx context.Context) error {
	return r.closed.Check(ctx, r.cfg.Name)
}

// Begin is the check every operation of r starts with (ctx's error, or
// that r is closed), for a driver's own operations beside r's.
func Begin(ctx context.Context, r *Records) error { return r.begin(ctx) }

func (r *Records) files(id model.ID) ([]layout.File, error) {
	f, err := layout.Files(r.cfg.Layout, id)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.cfg.Name, err)
	}
	return f, nil
}

// NormTag returns a tag without quotes or weak prefix, so that "abc", abc
// and W/"abc" compare equal.
func NormTag(t string) string {
	t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
	return strings.Trim(t, `"`)
}
