// Package fs is the filesystem driver: records kept as ns@v2 JSON-LD files
// under a directory, in the layout of Fluree's file nameservice (Option B,
// the default) or one file per concern (Option C).
//
// # URLs
//
//	file:///abs/dir?layout=b|c&dialect=spec|fluree-v4&lock_timeout=10s
//	file://./relative/dir
//
// # Guarantees
//
// On a local POSIX filesystem every write is crash-safe and atomic for
// readers (a synced temp file renamed or hard-linked into place, then the
// directory synced), and writers of one file serialise on an flock of a
// sidecar lock file, with a bounded wait. NFS and other network
// filesystems are not safe. docs/fs.md has the details and docs/format.md
// the file format. The record protocol is internal/objstore's; a local
// write has no lost answer.
package fs

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// Scheme is the URL scheme of this driver.
const Scheme = "file"

func init() { drivers.Register(Scheme, drivers.Opens(ParseURL, Open)) }

// DefaultLockTimeout bounds the wait for another writer's lock.
const DefaultLockTimeout = 10 * time.Second

// Config says where Open keeps records and how. Only Dir is required; the
// rest defaults to layout B, spec dialect, DefaultLockTimeout.
type Config struct {
	// Dir is the directory holding ns@v2 (absolute, or relative to the
	// working directory). It need not exist yet: the first write creates it.
	Dir string
	// Layout is jsonld.LayoutB (the default) or jsonld.LayoutC, the same
	// for every process sharing a directory (another's files fail List).
	Layout jsonld.Layout
	// Dialect is the form of the files written (jsonld.Spec or
	// jsonld.FlureeV4); every dialect is read.
	Dialect jsonld.Dialect
	// LockTimeout bounds the wait for a lock held by another writer
	// (0: DefaultLockTimeout). A context deadline that comes sooner wins.
	LockTimeout time.Duration
	// ListParallel bounds the records List reads at once
	// (0: objstore.DefaultListParallel); URL parameter list_parallel.
	ListParallel int
}

// Driver is a filesystem nameservice. It is safe for concurrent use, and
// any number of Drivers, in any number of processes, may share a directory.
type Driver struct {
	*records           // the record operations, over store
	root        string // absolute
	real        atomic.Pointer[string]
	layout      jsonld.Layout
	lockTimeout time.Duration
	dirs        dirCache
}

var (
	_ driver.Driver   = (*Driver)(nil)
	_ driver.Brancher = (*Driver)(nil) // through objstore
)

// Open returns a driver keeping records in cfg.Dir/ns@v2, sending nothing
// to the filesystem but a stat of Dir. It returns an error wrapping
// model.ErrInvalidArgument when Dir is empty, exists and is not a
// directory, or an option is invalid.
func Open(_ context.Context, cfg Config) (*Driver, error) {
	if err := platformProblem(); err != nil {
		return nil, err
	}
	if cfg.Dir == "" {
		return nil, fmt.Errorf("fs: %w: empty directory", model.ErrInvalidArgument)
	}
	abs, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("fs: %w: directory %q: %v", model.ErrInvalidArgument, cfg.Dir, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("fs: %w: %s is not a directory", model.ErrInvalidArgument, abs)
	}
	oc, err := objstore.NewConfig("fs", objstore.FileOptions{Layout: cfg.Layout, Dialect: cfg.Dialect, ListParallel: cfg.ListParallel})
	if err != nil {
		return nil, err
	}
	d := &Driver{root: abs, layout: cfg.Layout, lockTimeout: driverutil.Positive(cfg.LockTimeout, DefaultLockTimeout),
		dirs: newDirCache()}
	oc.LocalReads, oc.Object = true, d.path
	d.records = objstore.New(store{d}, oc)
	return d, nil
}

// Dir returns the directory holding ns@v2.
func (d *Driver) Dir() string { return d.root }

var urlParams = append([]string{"lock_timeout"}, objstore.FileParams...)

// ParseURL returns the Config a file URL describes, or an error wrapping
// model.ErrInvalidArgument for a URL with no directory, an unknown
// parameter or a malformed value.
func ParseURL(u *url.URL) (Config, error) {
	dir, err := urlDir(u)
	if err != nil {
		return Config{}, err
	}
	q := u.Query()
	for k := range q {
		if !slices.Contains(urlParams, k) {
			return Config{}, fmt.Errorf("fs: %w: unknown URL parameter %q (want %s)", model.ErrInvalidArgument, k, strings.Join(urlParams, ", "))
		}
	}
	fo, err := objstore.ParseFileParams(q)
	if err != nil {
		return Config{}, fmt.Errorf("fs: %w", err)
	}
	cfg := Config{Dir: dir, Layout: fo.Layout, Dialect: fo.Dialect, ListParallel: fo.ListParallel}
	if s := q.Get("lock_timeout"); s != "" {
		if cfg.LockTimeout, err = time.ParseDuration(s); err != nil || cfg.LockTimeout <= 0 {
			return Config{}, fmt.Errorf("fs: %w: lock_timeout %q is not a positive duration", model.ErrInvalidArgument, s)
		}
	}
	return cfg, nil
}

// urlDir returns the directory of a file URL: file:///abs, file://localhost/abs,
// file://./rel (or file://../rel), file:rel.
func urlDir(u *url.URL) (string, error) {
	switch {
	case u.Opaque != "":
		return u.Opaque, nil
	case u.Host == "" || u.Host == "localhost":
		if u.Path == "" {
			return "", fmt.Errorf("fs: %w: file URL has no path", model.ErrInvalidArgument)
		}
		return u.Path, nil
	case u.Host == "." || u.Host == "..":
		return u.Host + u.Path, nil
	}
	return "", fmt.Errorf("fs: %w: file URL host %q: want file:///absolute/path or file://./relative/path", model.ErrInvalidArgument, u.Host)
}

func (d *Driver) path(key string) string {
	return filepath.Join(d.root, filepath.FromSlash(key))
}
