package blob

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	azblobblob "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	gblob "gocloud.dev/blob"

	"nameservice.dev/nameservice/internal/objstore"
)

// azure is the Azure Blob Storage backend. A tag is an ETag without quotes.
type azure struct {
	client *container.Client
}

func (*azure) name() string { return SchemeAzure }

func (*azure) tag(as func(any) bool) string {
	var read azblobblob.DownloadStreamResponse
	var item container.BlobItem
	var stat azblobblob.GetPropertiesResponse
	var etag *azcore.ETag
	switch {
	case as(&read):
		etag = read.ETag
	case as(&item) && item.Properties != nil:
		etag = item.Properties.ETag
	case as(&stat):
		etag = stat.ETag
	}
	if etag == nil {
		return ""
	}
	return objstore.NormTag(string(*etag))
}

// noRetry turns the SDK's retries off for one call: a retried conditional
// request after an attempt that landed would meet its own ETag with a 412.
func noRetry(ctx context.Context) context.Context {
	return policy.WithRetryOptions(ctx, policy.RetryOptions{MaxRetries: -1})
}

// writeOptions sets If-Match on the upload options in BeforeWrite
// (IfNotExist is gocloud's If-None-Match: *), sizes the block so the upload
// is one Put Blob, and captures the response for the new ETag.
func (*azure) writeOptions(ctx context.Context, pc objstore.Precondition, n int) (context.Context, *gblob.WriterOptions, func() string, error) {
	var resp *http.Response
	ctx = policy.WithCaptureResponse(ctx, &resp)
	if pc.Conditional() {
		ctx = noRetry(ctx)
	}
	opts := &gblob.WriterOptions{ContentType: jsonType, IfNotExist: pc.Absent, BufferSize: max(n+1, 4096), MaxConcurrency: 1}
	if pc.Tag != "" {
		etag := azcore.ETag(`"` + pc.Tag + `"`)
		opts.BeforeWrite = func(as func(any) bool) error {
			var o *azblob.UploadStreamOptions
			if !as(&o) {
				return errors.New("azblob: BeforeWrite gave no upload options")
			}
			o.AccessConditions = &azblob.AccessConditions{ModifiedAccessConditions: &azblobblob.ModifiedAccessConditions{IfMatch: &etag}}
			return nil
		}
	}
	tag := func() string {
		if resp == nil {
			return ""
		}
		return objstore.NormTag(resp.Header.Get("ETag"))
	}
	return ctx, opts, tag, nil
}

// deleteIf deletes key with If-Match through the container client.
func (a *azure) deleteIf(ctx context.Context, key, tag string) error {
	etag := azcore.ETag(`"` + tag + `"`)
	_, err := a.client.NewBlobClient(escapeAzure(key)).Delete(noRetry(ctx), &azblobblob.DeleteOptions{
		AccessConditions: &azblobblob.AccessConditions{ModifiedAccessConditions: &azblobblob.ModifiedAccessConditions{IfMatch: &etag}},
	})
	return err
}

// escapeAzure escapes a key as gocloud's azureblob does (its HexEscape
// rule), so that a request through the container client names the same
// blob: backslash, control characters, '"', '#', '%', '?', DEL, a trailing
// '/' and the '/' of "../" become "__0x<hex>__".
func escapeAzure(key string) string {
	runes := []rune(key)
	var b strings.Builder
	for i, c := range runes {
		esc := c == '\\' || c < 32 || c == '"' || c == '#' || c == '%' || c == '?' || c == 127 ||
			i == len(key)-1 && c == '/' ||
			i > 1 && c == '/' && runes[i-1] == '.' && runes[i-2] == '.'
		if esc {
			fmt.Fprintf(&b, "__%#x__", c)
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}
