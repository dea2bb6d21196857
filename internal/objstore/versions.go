package objstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"sync"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// DefaultVersionsPageSize is the page size of Versions when none is asked
// for: a list call's worth of keys.
const DefaultVersionsPageSize = 1000

var _ driver.Versioner = (*Records)(nil)

// Versions implements driver.Versioner with List's listing. A record's
// version is a digest of the keys and tags listed for its files, so it
// changes when any of them is written, created or removed ("" when the
// listing gives no tag). A record at its known version is not read.
func (r *Records) Versions(ctx context.Context, opts driver.VersionsOptions) (*driver.VersionPage, error) {
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	opts.PageSize = driverutil.Positive(opts.PageSize, DefaultVersionsPageSize)
	// A record at its known version is handed back holding only its ID.
	var mu sync.Mutex
	versions := map[model.ID]string{}
	known := func(id model.ID) bool { return versions[id] != "" && opts.Known[id] == versions[id] }
	read := func(ctx context.Context, id model.ID, key, tag string, present map[string]string) (*model.Record, error) {
		mu.Lock()
		versions[id] = listedVersion(key, tag, present)
		kept := known(id)
		mu.Unlock()
		if kept {
			return &model.Record{ID: id}, nil
		}
		return r.loadListed(ctx, id, key, tag, present)
	}
	lo := driver.ListOptions{Prefix: opts.Prefix, IncludeRetracted: true, PageSize: opts.PageSize, PageToken: opts.PageToken}
	page, err := r.listPage(ctx, lo, read)
	if err != nil {
		return nil, err
	}
	// listPage has stopped its readers: versions is no longer written.
	out := &driver.VersionPage{Failed: page.Failed, NextPageToken: page.NextPageToken}
	out.Versions = make([]driver.RecordVersion, len(page.Records))
	for i, rec := range page.Records {
		out.Versions[i] = driver.RecordVersion{ID: rec.ID, Version: versions[rec.ID], Record: rec}
		if known(rec.ID) {
			out.Versions[i].Record = nil
		}
	}
	return out, nil
}

// listedVersion digests the listed keys and tags of a record's files; ""
// when one is unknown.
func listedVersion(key, tag string, present map[string]string) string {
	if tag == "" || present == nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", key, tag)
	for _, k := range slices.Sorted(maps.Keys(present)) {
		if present[k] == "" {
			return ""
		}
		fmt.Fprintf(h, "%s\x00%s\x00", k, present[k])
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}
