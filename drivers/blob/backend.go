package blob

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	gblob "gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob:// bucket URLs
	_ "gocloud.dev/blob/gcsblob"   // gs:// bucket URLs
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"

	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/model"
)

// backend is what differs between the services: how a tag is read from
// gocloud's As views, how a write carries its precondition, and how a
// conditional delete is sent through the service's own client.
type backend interface {
	name() string // the URL scheme
	// tag returns the tag a read, a listing or a stat shows through its
	// As function; "" when it shows none.
	tag(as func(any) bool) string
	// writeOptions returns the context and options of an upload of n bytes
	// under pc (not retried by the SDK when conditional), and a function
	// returning the new object's tag once it has succeeded.
	writeOptions(ctx context.Context, pc objstore.Precondition, n int) (context.Context, *gblob.WriterOptions, func() string, error)
	// deleteIf removes key if its tag is still tag, without SDK retries.
	deleteIf(ctx context.Context, key, tag string) error
}

const jsonType = "application/json"

// newBackend returns the backend of bucket's type, or an error wrapping
// ErrUnsupported.
func newBackend(bucket *gblob.Bucket) (backend, error) {
	var gc *storage.Client
	if bucket.As(&gc) {
		return &gcs{bucket: bucket}, nil
	}
	var cc *container.Client
	if bucket.As(&cc) {
		return &azure{client: cc}, nil
	}
	return nil, fmt.Errorf("blob: %w: the bucket is neither a gcsblob nor an azureblob bucket; "+
		"other gocloud bucket types cannot carry the preconditions that keep concurrent writers apart "+
		"(use s3:// for S3, file:// for a directory, mem:// for memory)", model.ErrUnsupported)
}

// errMissing is the outcome of a precondition on a tag that met no object
// (a failed precondition is objstore.ErrPrecondition).
var errMissing = objstore.Sentinel("no such object", objstore.ErrMissing)

// httpStatus returns the HTTP status of a service error, 0 when the
// request got no answer.
func httpStatus(err error) int {
	if ge, ok := errors.AsType[*googleapi.Error](err); ok {
		return ge.Code
	}
	if re, ok := errors.AsType[*azcore.ResponseError](err); ok {
		return re.StatusCode
	}
	return 0
}

// brief shows an Azure service error as its status and code: the SDK's
// text is the whole HTTP exchange (the URL, the headers, the XML body), a
// screen of the service's text in every answer. errors.As still finds the
// SDK's error.
func brief(err error) error {
	if re, ok := errors.AsType[*azcore.ResponseError](err); ok {
		return briefError{err, re}
	}
	return err
}

type briefError struct {
	err error
	re  *azcore.ResponseError
}

func (e briefError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.re.StatusCode, e.re.ErrorCode)
}

func (e briefError) Unwrap() error { return e.err }

// azureCode returns the x-ms-error-code of an Azure error, "" otherwise.
func azureCode(err error) string {
	if re, ok := errors.AsType[*azcore.ResponseError](err); ok {
		return re.ErrorCode
	}
	return ""
}

func notFound(err error) bool {
	return errors.Is(err, storage.ErrObjectNotExist) || httpStatus(err) == 404
}

// absent reports whether err says that an object does not exist. Azure's
// ContainerNotFound says the container does not: a store not provisioned
// (fail). GCS answers a read in a removed bucket as a missing object, which
// only an extra request could tell apart (docs/gcs.md).
func absent(err error) bool {
	return (gcerrors.Code(err) == gcerrors.NotFound || notFound(err)) && azureCode(err) != "ContainerNotFound"
}

// preconditionFailed reports whether err is a failed precondition: 412,
// or Azure's 409 BlobAlreadyExists for If-None-Match: *.
func preconditionFailed(err error) bool {
	s := httpStatus(err)
	return s == 412 || s == 409 && azureCode(err) == "BlobAlreadyExists"
}

// denied reports whether the service refused the credentials or the
// permission.
func denied(err error) bool {
	s := httpStatus(err)
	return s == 401 || s == 403 || gcerrors.Code(err) == gcerrors.PermissionDenied
}

// throttled reports whether the service refused for load.
func throttled(err error) bool {
	s := httpStatus(err)
	return s == 429 || s == 503 && azureCode(err) == "ServerBusy"
}
