// Package docstore keeps the nameservice in any gocloud.dev/docstore
// collection: memdocstore, DynamoDB (awsdynamodb), Firestore, MongoDB.
//
// A URL is a gocloud docstore URL with "docstore+" in front of its scheme
// (docstore+mem://COLLECTION, docstore+dynamodb://TABLE?region=&endpoint=,
// docstore+firestore://..., docstore+mongo://DATABASE/COLLECTION); the
// driver fills in the key fields it writes unless the URL names them. This
// package links memdocstore and awsdynamodb; import
// gocloud.dev/docstore/gcpfirestore or gocloud.dev/docstore/mongodocstore
// for the others.
//
// Records are the ns@v2 files of the object-store drivers (layout B, spec
// dialect), one document per file: its layout key, its bytes and gocloud's
// revision. The protocol is internal/objstore's, with revisions as version
// tags: a create is gocloud's Create (absent), a push a Replace on the
// revision read (docs/docstore.md, docs/s3.md "How writes work").
package docstore

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"gocloud.dev/docstore"
	_ "gocloud.dev/docstore/memdocstore" // mem:// (dynamo.go links dynamodb://)

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// SchemePrefix is put in front of a gocloud docstore scheme to name this
// driver: "docstore+mem", "docstore+dynamodb", ...
const SchemePrefix = "docstore+"

// providers are the gocloud schemes registered with the prefix, and the
// package that links each into a program.
var providers = map[string]string{
	"mem":       "gocloud.dev/docstore/memdocstore",
	"dynamodb":  "gocloud.dev/docstore/awsdynamodb/v2",
	"firestore": "gocloud.dev/docstore/gcpfirestore",
	"mongo":     "gocloud.dev/docstore/mongodocstore",
}

func init() {
	for p := range providers {
		drivers.Register(SchemePrefix+p, drivers.Opens(ParseURL, Open))
	}
}

// Config says which collection Open opens.
type Config struct {
	// CollectionURL is gocloud's URL of the collection, without the
	// "docstore+" prefix: mem://COLLECTION, dynamodb://TABLE?region=...,
	// firestore://..., mongo://DATABASE/COLLECTION. Open fills in the key
	// fields and read options this driver needs unless it names them.
	CollectionURL string
}

// records is embedded in Driver, which so implements the record
// operations of driver.Driver through objstore.
type records = objstore.Records

// Driver is one client of a docstore collection; any number of Drivers, in
// any number of processes, may share a collection.
type Driver struct {
	*records
	// coll is nil while the DynamoDB table of table does not exist; mu
	// guards it until Provision has created the table and opened it.
	mu      sync.RWMutex
	coll    *docstore.Collection
	table   *dynamoTable // the DynamoDB table of a docstore+dynamodb URL, else nil
	release func() error
	// named: documents carry their key, escaped, in field id, the
	// document's name, and key stays a field of its own (Firestore's
	// names cannot hold "/"; mongodocstore keeps the name as _id only,
	// and would order a query by a key field that is not there).
	named bool
	// listMode remembers whether the provider runs ordered queries:
	// 0 not yet known, modeOrdered, or modeScan.
	listMode atomic.Int32
}

var (
	_ driver.Driver      = (*Driver)(nil)
	_ driver.Provisioner = (*Driver)(nil)
	_ driver.Versioner   = (*Driver)(nil) // through objstore: a polling watch reads only what changed
	_ driver.Brancher    = (*Driver)(nil) // through objstore
	_ driver.Collector   = (*Driver)(nil) // through objstore: ns gc removes what purges left
)

// OpenCollection returns a driver keeping records in coll, a memdocstore or
// DynamoDB collection the caller opened with key field "key" (for Firestore
// and MongoDB use Open). The caller owns coll: Close does not close it. Two
// drivers on one collection act as two clients.
func OpenCollection(coll *docstore.Collection) *Driver {
	return newDriver(coll, nil, func() error { return nil }, false)
}

func newDriver(coll *docstore.Collection, t *dynamoTable, release func() error, named bool) *Driver {
	d := &Driver{coll: coll, table: t, release: release, named: named}
	// Revisions never repeat: awsdynamodb and mongodocstore draw a random
	// UUID for each write, Firestore's is the document's update time,
	// which only grows, and memdocstore counts the writes of the
	// collection (Open refuses its filename, whose loaded revisions the
	// count would reach again).
	d.records = objstore.New(store{d}, objstore.Config{Name: "docstore", Layout: jsonld.LayoutB, Dialect: jsonld.Spec,
		UniqueTags: true, RetryThrottled: true, Release: d.closeCollection})
	return d
}

func (d *Driver) closeCollection() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.release()
}

// collection returns the collection, or an error wrapping
// model.ErrNotProvisioned while the DynamoDB table does not exist.
func (d *Driver) collection() (*docstore.Collection, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.coll == nil {
		return nil, fmt.Errorf("docstore: %w: DynamoDB table %q does not exist; create it with `ns table create` or Provision", model.ErrNotProvisioned, d.table.name)
	}
	return d.coll, nil
}

// ParseURL returns the Config of a docstore+SCHEME:// URL. It returns an
// error wrapping model.ErrInvalidArgument when the scheme is not one of
// docstore+mem, +dynamodb, +firestore or +mongo.
func ParseURL(u *url.URL) (Config, error) {
	scheme, ok := strings.CutPrefix(strings.ToLower(u.Scheme), SchemePrefix)
	if !ok || providers[scheme] == "" {
		return Config{}, fmt.Errorf("docstore: %w: scheme %q is not docstore+mem, +dynamodb, +firestore or +mongo", model.ErrInvalidArgument, u.Scheme)
	}
	c := *u
	c.Scheme = scheme
	return Config{CollectionURL: c.String()}, nil
}

// Open opens the collection of cfg. A docstore+dynamodb collection whose
// table does not exist yet opens all the same: every operation then fails
// with an error wrapping model.ErrNotProvisioned until Provision creates
// the table. Open returns an error wrapping model.ErrInvalidArgument for a
// malformed URL, model.ErrUnsupported when the provider is not linked into
// the program, and the provider's error, classified, when the collection
// cannot be opened.
func Open(ctx context.Context, cfg Config) (*Driver, error) {
	u, err := url.Parse(cfg.CollectionURL)
	if err != nil {
		return nil, fmt.Errorf("docstore: %w: collection URL does not parse", model.ErrInvalidArgument)
	}
	inner, err := collectionURL(u)
	if err != nil {
		return nil, err
	}
	switch inner.Scheme {
	case "mem":
		return openShared(ctx, inner)
	case "dynamodb":
		return openDynamoDB(ctx, inner)
	}
	coll, err := docstore.OpenCollection(ctx, inner.String())
	if err != nil {
		return nil, fmt.Errorf("docstore: open %s: %w", drivers.Redact(u), classifyOpen(ctx, err))
	}
	return newDriver(coll, nil, coll.Close, true), nil
}

// collectionURL checks that u's provider is linked and fills in the key
// fields and read options this driver needs.
func collectionURL(u *url.URL) (*url.URL, error) {
	scheme := strings.ToLower(u.Scheme)
	if providers[scheme] == "" {
		return nil, fmt.Errorf("docstore: %w: collection scheme %q is not mem, dynamodb, firestore or mongo", model.ErrInvalidArgument, u.Scheme)
	}
	if !docstore.DefaultURLMux().ValidCollectionScheme(scheme) {
		return nil, fmt.Errorf("docstore: %w: the %s provider is not linked into this program: import _ %q", model.ErrUnsupported, scheme, providers[scheme])
	}
	c := *u
	c.Scheme = scheme
	q := c.Query()
	for _, p := range []string{"revision_field", "filename"} {
		if q.Has(p) {
			return nil, fmt.Errorf("docstore: %w: parameter %s: the driver keeps gocloud's revision field, in memory for docstore+mem", model.ErrInvalidArgument, p)
		}
	}
	switch scheme {
	case "mem":
		if c.Path == "" || c.Path == "/" {
			c.Path = "/" + fieldKey
		}
	case "dynamodb":
		if q.Get("consistent_read") == "false" {
			return nil, fmt.Errorf("docstore: %w: consistent_read=false: the nameservice needs strongly consistent reads", model.ErrInvalidArgument)
		}
		setDefault(q, "partition_key", fieldKey)
		setDefault(q, "consistent_read", "true")
		setDefault(q, "allow_scans", "true")
	case "firestore":
		setDefault(q, "name_field", fieldID)
	case "mongo":
		setDefault(q, "id_field", fieldID)
	}
	c.RawQuery = q.Encode()
	return &c, nil
}

func setDefault(q url.Values, k, v string) {
	if q.Get(k) == "" {
		q.Set(k, v)
	}
}

// memdocstore keeps one collection per name in its URL opener and forgets it
// when it is closed; shared counts the drivers using each, so that one
// driver's Close does not close the collection under the others.
var (
	sharedMu sync.Mutex
	shared   = map[string]*sharedColl{}
)

type sharedColl struct {
	coll *docstore.Collection
	refs int
}

func openShared(ctx context.Context, u *url.URL) (*Driver, error) {
	key := u.String()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	s := shared[key]
	if s == nil {
		coll, err := docstore.OpenCollection(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("docstore: open %s: %w: %v", drivers.Redact(u), model.ErrInvalidArgument, err)
		}
		s = &sharedColl{coll: coll}
		shared[key] = s
	}
	s.refs++
	return newDriver(s.coll, nil, func() error {
		sharedMu.Lock()
		defer sharedMu.Unlock()
		if s.refs--; s.refs > 0 {
			return nil
		}
		delete(shared, key)
		return s.coll.Close()
	}, false), nil
}
