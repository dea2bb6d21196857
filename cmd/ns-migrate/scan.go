package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"

	"nameservice.dev/nameservice"
)

// item is one selected source record, or the error that kept it from being
// read (then id is the record the error names, if any).
type item struct {
	id  string
	rec *nameservice.Record
	err error
}

// selector says which source records to migrate.
type selector struct {
	ids           []string // --id, in order
	idsFrom       string   // --ids-from file
	prefix        string
	kind          nameservice.Kind
	skipRetracted bool
	pageSize      int
	done          map[string]bool // --resume: records a previous run finished
}

func (s *selector) explicit() bool { return len(s.ids) > 0 || s.idsFrom != "" }

// keep reports whether rec passes the filters (an explicit ID is also
// filtered, so --id and --kind combine).
func (s *selector) keep(rec *nameservice.Record) bool {
	return (s.kind == "" || rec.Kind == s.kind) &&
		strings.HasPrefix(rec.ID.String(), s.prefix) &&
		!(s.skipRetracted && rec.Retracted)
}

// scan sends the selected records of src to out, then closes out. It stops
// early when ctx is done. A record that cannot be read is sent as an item
// with an error; the scan goes on past it when it can (see lister).
func (s *selector) scan(ctx context.Context, src *nameservice.NameService, out chan<- item) {
	defer close(out)
	send := func(it item) bool {
		if it.id != "" && s.done[it.id] {
			return true
		}
		if it.rec != nil && !s.keep(it.rec) {
			return true
		}
		select {
		case out <- it:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if s.explicit() {
		s.scanIDs(ctx, src, send)
		return
	}
	l := &lister{ns: src, opts: nameservice.ListOptions{
		Kind: s.kind, Prefix: s.prefix, IncludeRetracted: !s.skipRetracted, PageSize: s.pageSize,
	}}
	if err := l.run(ctx, send); err != nil && ctx.Err() == nil {
		send(item{err: err})
	}
}

// scanIDs looks up the --id records, then those of --ids-from one line at a
// time (blank lines and # comments ignored), so a long file is never held
// in memory.
func (s *selector) scanIDs(ctx context.Context, src *nameservice.NameService, send func(item) bool) {
	for _, id := range s.ids {
		if !send(lookupItem(ctx, src, id)) {
			return
		}
	}
	if s.idsFrom == "" {
		return
	}
	f, err := os.Open(s.idsFrom)
	if err != nil {
		send(item{err: fmt.Errorf("--ids-from: %w", err)})
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !send(lookupItem(ctx, src, line)) {
			return
		}
	}
	if err := sc.Err(); err != nil {
		send(item{err: fmt.Errorf("--ids-from %s: %w", s.idsFrom, err)})
	}
}

func lookupItem(ctx context.Context, src *nameservice.NameService, raw string) item {
	id, err := nameservice.ParseID(raw)
	if err != nil {
		return item{id: raw, err: err}
	}
	rec, err := src.Lookup(ctx, id.String())
	if err != nil {
		return item{id: id.String(), err: fmt.Errorf("source: %w", err)}
	}
	return item{id: id.String(), rec: rec}
}

// lister lists a nameservice page by page through its driver, going on past
// records that cannot be read. nameservice.List stops at the first error, so
// it cannot be used for that.
//
// When a page fails with ErrInternal (what a driver returns for stored data
// it cannot decode), the lister lists again from the same page token one
// record at a time, which finds the last readable record before the bad one.
// The bad record is the one the error names (an ID, or an ns@v2 file path,
// checked with a Lookup that must fail too); it is reported, and listing
// resumes after it with a page token made for it. Page tokens are opaque, so
// the lister learns how the driver makes them from the pages it has seen
// (every built-in driver uses the page's last ID, base64url-encoded), tries
// the usual encodings when it has seen none, and checks that the page after
// a made token starts after the bad record. When all that fails, the listing
// stops with an error. A ListOptions.StartAfter ID in the portable API would
// make this exact.
type lister struct {
	ns   *nameservice.NameService
	opts nameservice.ListOptions
	enc  func(string) string // the driver's token encoding, once learned
	// reported is the last error reported as a bad record.
	reported string
}

var tokenEncodings = []func(string) string{
	func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
	func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) },
	func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	func(s string) string { return s },
}

func (l *lister) run(ctx context.Context, send func(item) bool) error {
	opts := l.opts
	last := ""
	for {
		page, err := l.ns.Driver().List(ctx, opts)
		if err != nil {
			if !errors.Is(err, nameservice.ErrInternal) {
				return fmt.Errorf("listing the source: %w", err)
			}
			opts.PageToken, last, err = l.stepOver(ctx, opts.PageToken, last, send)
			if err != nil || opts.PageToken == "" {
				return err
			}
			continue
		}
		for _, r := range page.Records {
			if !send(item{id: r.ID.String(), rec: r}) {
				return nil
			}
			last = r.ID.String()
		}
		l.learn(last, page.NextPageToken)
		if page.NextPageToken == "" {
			return nil
		}
		if page.NextPageToken == opts.PageToken {
			return fmt.Errorf("listing the source: the driver returned page token %q twice", opts.PageToken)
		}
		opts.PageToken = page.NextPageToken
	}
}

// learn records the token encoding that turns the last ID of a page into
// its next page token.
func (l *lister) learn(lastID, token string) {
	if l.enc != nil || token == "" || lastID == "" {
		return
	}
	for _, enc := range tokenEncodings {
		if enc(lastID) == token {
			l.enc = enc
			return
		}
	}
}

// stepOver lists from tok one record at a time up to the record that
// cannot be read, reports it, and returns a page token after it (""
// when the listing is complete) and the last ID passed.
func (l *lister) stepOver(ctx context.Context, tok, last string, send func(item) bool) (string, string, error) {
	opts := l.opts
	opts.PageSize, opts.PageToken = 1, tok
	for {
		page, err := l.ns.Driver().List(ctx, opts)
		if err == nil {
			for _, r := range page.Records {
				if !send(item{id: r.ID.String(), rec: r}) {
					return "", last, nil
				}
				last = r.ID.String()
			}
			l.learn(last, page.NextPageToken)
			if page.NextPageToken == "" || page.NextPageToken == opts.PageToken {
				return "", last, nil
			}
			opts.PageToken = page.NextPageToken
			continue
		}
		if !errors.Is(err, nameservice.ErrInternal) {
			return "", last, fmt.Errorf("listing the source: %w", err)
		}
		bad := l.badRecord(ctx, err, last)
		switch {
		case bad == "" && err.Error() == l.reported:
			return "", last, fmt.Errorf("listing the source stopped: it fails on that record whatever the page token, so the records after it cannot be listed: %w", err)
		case bad == "":
			return "", last, fmt.Errorf("listing the source stopped after %q: %w (the error names no record to go past)", last, err)
		}
		// A path can stand for several IDs: when the error is the one just
		// reported, this is another reading of the same file.
		if err.Error() != l.reported {
			l.reported = err.Error()
			if !send(item{id: bad, err: fmt.Errorf("source: %w", err)}) {
				return "", last, nil
			}
		}
		next, ok := l.tokenAfter(ctx, bad)
		if !ok {
			return "", last, fmt.Errorf("listing the source stopped at %s: cannot make a page token past it for this driver: %w", bad, err)
		}
		return next, bad, nil
	}
}

// badRecord returns the smallest ID after last that err names and that
// cannot be looked up either, or "".
func (l *lister) badRecord(ctx context.Context, err error, last string) string {
	best := ""
	for _, id := range namedIDs(err.Error()) {
		if id <= last || (best != "" && id >= best) {
			continue
		}
		if _, gerr := l.ns.Lookup(ctx, id); gerr != nil && !errors.Is(gerr, nameservice.ErrNotFound) {
			best = id
		}
	}
	return best
}

// tokenAfter makes a page token for the records after id, and checks it.
func (l *lister) tokenAfter(ctx context.Context, id string) (string, bool) {
	encs := tokenEncodings
	if l.enc != nil {
		encs = []func(string) string{l.enc}
	}
	for _, enc := range encs {
		opts := l.opts
		opts.PageSize, opts.PageToken = 1, enc(id)
		page, err := l.ns.Driver().List(ctx, opts)
		if errors.Is(err, nameservice.ErrInvalidArgument) {
			continue // not this driver's encoding
		}
		if err == nil && len(page.Records) > 0 && page.Records[0].ID.String() <= id {
			continue // accepted, but not as "after id"
		}
		return opts.PageToken, true
	}
	return "", false
}

// reservedSuffixes are the file suffixes of the ns@v2 layouts before .json.
var reservedSuffixes = []string{".index", ".head", ".status", ".config"}

// namedIDs returns the record IDs an error message names: words that parse
// as name:branch, and the IDs an ns@v2/{name}/{branch}[.suffix].json path
// can stand for (a name or branch may contain '/', so a path can name
// several).
func namedIDs(msg string) []string {
	var ids []string
	for _, w := range strings.Fields(msg) {
		w = strings.Trim(w, "\"'`()[]{},;:")
		if i := strings.Index(w, "ns@v2/"); i >= 0 {
			ids = append(ids, pathIDs(w[i+len("ns@v2/"):])...)
			continue
		}
		if strings.Contains(w, ":") {
			if id, err := nameservice.ParseID(w); err == nil {
				ids = append(ids, id.String())
			}
		}
	}
	return ids
}

func pathIDs(p string) []string {
	stem, ok := strings.CutSuffix(p, ".json")
	if !ok {
		return nil
	}
	for _, s := range reservedSuffixes {
		if st, ok := strings.CutSuffix(stem, s); ok {
			stem = st
			break
		}
	}
	var ids []string
	for i := range len(stem) {
		if stem[i] != '/' {
			continue
		}
		if id, err := nameservice.ParseID(stem[:i] + ":" + stem[i+1:]); err == nil {
			ids = append(ids, id.String())
		}
	}
	return ids
}
