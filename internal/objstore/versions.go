package objstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"sync"

	"nameservice.dev/nameservice/driver"
)

// DefaultVersionsPageSize is the page size of Versions when none is asked
// for: a list call's worth of keys, since a page costs no reads.
const DefaultVersionsPageSize = 1000

var _ driver.Versioner = (*Records)(nil)

// Versions implements driver.Versioner with the listing of List (same
// order, same page tokens, same Failed entries), reading no record: a
// record's version is a digest of the keys and tags (ETags, generations)
// the listing shows for its files, the defining file and the other files
// present, so it changes when any file is written, created or removed.
// A defining file whose key fits several IDs is read once to learn its ID,
// and not again while its tag stays the same. The version is "" when the
// listing gives no tag for one of the files.
func (r *Records) Versions(ctx context.Context, opts driver.VersionsOptions) (*driver.VersionPage, error) {
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultVersionsPageSize
	}
	src := &versionSource{recordsSource: recordsSource{r}, v: map[driver.ID]string{}}
	lo := driver.ListOptions{Prefix: opts.Prefix, IncludeRetracted: true, PageSize: opts.PageSize, PageToken: opts.PageToken}
	page, err := ListPage(ctx, src, ListConfig{Name: r.cfg.Name, Layout: r.cfg.Layout, Parallel: r.cfg.ListParallel}, lo)
	if err != nil {
		return nil, err
	}
	out := &driver.VersionPage{Failed: page.Failed, NextPageToken: page.NextPageToken}
	out.Versions = make([]driver.RecordVersion, len(page.Records))
	for i, rec := range page.Records {
		out.Versions[i] = driver.RecordVersion{ID: rec.ID, Version: src.version(rec.ID)}
	}
	return out, nil
}

// versionSource is the Source of Records for Versions: ListPage's read of
// a listed record notes the record's version instead, and hands back a
// record holding only the ID (which every ListOptions of Versions matches).
type versionSource struct {
	recordsSource
	mu sync.Mutex
	v  map[driver.ID]string
}

func (s *versionSource) ReadListed(_ context.Context, id driver.ID, key, tag string, present map[string]string) (*driver.Record, error) {
	v := listedVersion(key, tag, present)
	s.mu.Lock()
	s.v[id] = v
	s.mu.Unlock()
	return &driver.Record{ID: id}, nil
}

func (s *versionSource) version(id driver.ID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v[id]
}

// listedVersion digests the defining file's key and tag and the other
// files' keys and tags in key order; "" when a tag is unknown or the
// other files are (present is nil).
func listedVersion(key, tag string, present map[string]string) string {
	if tag == "" || present == nil {
		return ""
	}
	h := sha256.New()
	add := func(k, t string) {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(t))
		h.Write([]byte{0})
	}
	add(key, tag)
	keys := make([]string, 0, len(present))
	for k, t := range present {
		if t == "" {
			return ""
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		add(k, present[k])
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}
