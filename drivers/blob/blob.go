// Package blob is the nameservice driver for Google Cloud Storage and Azure
// Blob Storage, through gocloud.dev/blob: records kept as the ns@v2 JSON-LD
// files of the filesystem driver (layout B, the default, or C), made safe
// for concurrent writers by each service's own preconditions.
//
// # URLs
//
//	gs://BUCKET/PREFIX?layout=b|c&dialect=spec|fluree-v4&access_id=...
//	azblob://CONTAINER/PREFIX?layout=b|c&dialect=spec|fluree-v4&domain=...&protocol=...
//
// Every other parameter is gocloud's own, and so are the credentials
// (docs/gcs.md, docs/azure.md).
//
// The protocol is internal/objstore's, with generations (GCS) or ETags
// (Azure) as version tags, set as preconditions in BeforeWrite; the
// collector's deletes go through the service's own client, reached with
// As. A bucket of any other type (fileblob, memblob, s3blob, ...) cannot
// carry these preconditions and is refused by Open with an error wrapping
// model.ErrUnsupported; so is a service that the probe on open shows
// ignores them.
package blob

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	gblob "gocloud.dev/blob"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// The URL schemes of this driver (those of gocloud's gcsblob and azureblob).
const (
	SchemeGCS   = "gs"
	SchemeAzure = "azblob"
)

func init() {
	drivers.Register(SchemeGCS, drivers.Opens(ParseURL, Open))
	drivers.Register(SchemeAzure, drivers.Opens(ParseURL, Open))
}

// Config says which bucket Open opens and how records are kept in it. Only
// BucketURL is required (and OpenBucket ignores it); the rest defaults to
// layout B, spec dialect, no prefix.
type Config struct {
	// BucketURL is gocloud's URL of the bucket: gs://BUCKET or
	// azblob://CONTAINER with gocloud's own parameters, without a prefix.
	BucketURL string
	// Prefix is the key prefix under which ns@v2/ lives ("" or "a/b").
	Prefix  string
	Layout  jsonld.Layout
	Dialect jsonld.Dialect // jsonld.Spec (the default) or jsonld.FlureeV4
	// ListParallel bounds the objects List reads at once (0:
	// objstore.DefaultListParallel); URL parameter list_parallel.
	ListParallel int
}

// Driver is a GCS or Azure Blob nameservice. It is safe for concurrent use;
// any number of Drivers, in any number of processes, may share a bucket and
// prefix.
type Driver struct {
	bucket *gblob.Bucket
	be     backend
	prefix string // "" or ending in "/"
	*records
	probed driver.ProbeResult
}

var (
	_ driver.Driver    = (*Driver)(nil)
	_ driver.Versioner = (*Driver)(nil) // through objstore: a polling watch reads only what changed
	_ driver.Brancher  = (*Driver)(nil) // through objstore
)

// Open opens cfg.BucketURL with gocloud and returns OpenBucket's driver
// over it; an error wrapping model.ErrUnavailable when the URL does not
// open.
func Open(ctx context.Context, cfg Config) (*Driver, error) {
	if u, err := url.Parse(cfg.BucketURL); err != nil || gocloudParams[strings.ToLower(u.Scheme)] == nil || u.Host == "" {
		return nil, fmt.Errorf("blob: %w: bucket URL %q: want gs://BUCKET or azblob://CONTAINER", model.ErrInvalidArgument,
			redacted(cfg.BucketURL))
	}
	b, err := gblob.OpenBucket(ctx, cfg.BucketURL)
	if err != nil {
		return nil, fmt.Errorf("blob: %w: open %s: %v", model.ErrUnavailable, redacted(cfg.BucketURL), err)
	}
	return OpenBucket(ctx, b, cfg)
}

// redacted returns raw with its secrets hidden, for messages.
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return drivers.Redact(u)
}

// OpenBucket returns a driver keeping records in bucket, a gcsblob or
// azureblob bucket opened without a gocloud prefix (use Config.Prefix),
// which it owns from then on; cfg.BucketURL is not used. It probes the
// service (see Probe), and returns an error wrapping
// model.ErrInvalidArgument for bad options, model.ErrUnsupported for a
// bucket or service that cannot carry the preconditions, and
// model.ErrUnavailable when the bucket cannot be reached.
func OpenBucket(ctx context.Context, bucket *gblob.Bucket, cfg Config) (_ *Driver, err error) {
	defer func() {
		if err != nil {
			_ = bucket.Close()
		}
	}()
	oc, err := objstore.NewConfig("blob", objstore.FileOptions{Layout: cfg.Layout, Dialect: cfg.Dialect, ListParallel: cfg.ListParallel})
	if err != nil {
		return nil, err
	}
	be, err := newBackend(bucket)
	if err != nil {
		return nil, err
	}
	// A GCS generation or Azure ETag names one version for good.
	oc.Name, oc.RetryThrottled, oc.UniqueTags, oc.Release = be.name(), true, true, bucket.Close
	d := &Driver{bucket: bucket, be: be, prefix: objstore.KeyPrefix(cfg.Prefix)}
	d.records = objstore.New(store{d}, oc)
	if err := d.probe(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// gocloudParams are the URL parameters gocloud's openers accept, by scheme.
var gocloudParams = map[string][]string{
	SchemeGCS:   {"anonymous", "access_id", "private_key_path", "universe_domain"},
	SchemeAzure: {"domain", "protocol", "cdn", "localemu", "storage_account"},
}

// ParseURL returns the Config a gs:// or azblob:// nameservice URL
// describes: gocloud's bucket URL (scheme, bucket, gocloud's parameters)
// and the driver's options. It returns an error wrapping
// model.ErrInvalidArgument for credentials in the URL, an unknown
// parameter or a malformed value.
func ParseURL(u *url.URL) (Config, error) {
	scheme := strings.ToLower(u.Scheme)
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, drivers.BadURL("blob", u, format, args...)
	}
	known, ok := gocloudParams[scheme]
	switch {
	case !ok:
		return bad("scheme %q is not %s or %s", u.Scheme, SchemeGCS, SchemeAzure)
	case u.User != nil:
		return bad("credentials do not belong in the URL; use the provider's credential chain")
	case u.Host == "":
		return bad("no bucket (%s://BUCKET/PREFIX)", scheme)
	}
	q := u.Query()
	rest := url.Values{}
	for k, v := range q {
		switch {
		case slices.Contains(objstore.FileParams, k):
		case slices.Contains(known, k):
			rest[k] = v
		default:
			return bad("unknown parameter %q (known: %s)", k, strings.Join(slices.Concat(objstore.FileParams, known), ", "))
		}
	}
	fo, err := objstore.ParseFileParams(q)
	if err != nil {
		return Config{}, fmt.Errorf("blob: %w", err)
	}
	b := url.URL{Scheme: scheme, Host: u.Host, RawQuery: rest.Encode()}
	return Config{BucketURL: b.String(), Prefix: u.Path, Layout: fo.Layout, Dialect: fo.Dialect, ListParallel: fo.ListParallel}, nil
}

// Bucket returns the gocloud bucket the driver uses.
func (d *Driver) Bucket() *gblob.Bucket { return d.bucket }

// Provider returns "gs" or "azblob".
func (d *Driver) Provider() string { return d.be.name() }

func (d *Driver) key(k string) string { return d.prefix + k }
