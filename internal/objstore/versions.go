package objstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
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

// Versions implements driver.Versioner with the listing of List (same
// order, same page tokens, same Failed entries). A record's version is a
// digest of the keys and tags (ETags, generations) the listing shows for
// its files, the defining file and the other files present, so it changes
// when any of them is written, created or removed; "" when the listing
// gives no tag. A record at its known version is not read; another is read
// as List reads it: only the files whose listed tag is not the one this
// process last read or wrote, so a poll reads the files that changed.
func (r *Records) Versions(ctx context.Context, opts driver.VersionsOptions) (*driver.VersionPage, error) {
	if err := r.begin(ctx); err != nil {
		return nil, err
	}
	opts.PageSize = driverutil.Positive(opts.PageSize, DefaultVersionsPageSize)
	src := &versionSource{recordsSource: recordsSource{r}, known: opts.Known, v: map[model.ID]string{}, kept: map[model.ID]bool{}}
	lo := driver.ListOptions{Prefix: opts.Prefix, IncludeRetracted: true, PageSize: opts.PageSize, PageToken: opts.PageToken}
	page, err := ListPage(ctx, src, ListConfig{Name: r.cfg.Name, Layout: r.cfg.Layout, Parallel: r.cfg.ListParallel}, lo)
	if err != nil {
		return nil, err
	}
	out := &driver.VersionPage{Failed: page.Failed, NextPageToken: page.NextPageToken}
	out.Versions = make([]driver.RecordVersion, len(page.Records))
	src.mu.Lock()
	defer src.mu.Unlock()
	for i, rec := range page.Records {
		out.Versions[i] = driver.RecordVersion{ID: rec.ID, Version: src.v[rec.ID], Record: rec}
		if src.kept[rec.ID] {
			out.Versions[i].Record = nil
		}
	}
	return out, nil
}

// versionSource is the Source of Records for Versions: ListPage's read of
// a listed record notes the record's version, and reads the record only
// when the version is not the known one, handing back otherwise a record
// holding only the ID (which every ListOptions of Versions matches).
type versionSource struct {
	recordsSource
	known map[model.ID]string
	mu    sync.Mutex
	v     map[model.ID]string
	kept  map[model.ID]bool // at the known version: not read
}

func (s *versionSource) ReadListed(ctx context.Context, id model.ID, key, tag string, present map[string]string) (*model.Record, error) {
	v := listedVersion(key, tag, present)
	kept := v != "" && s.known[id] == v
	s.mu.Lock()
	s.v[id], s.kept[id] = v, kept
	s.mu.Unlock()
	if kept {
		return &model.Record{ID: id}, nil
	}
	return s.recordsSource.ReadListed(ctx, id, key, tag, present)
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
