package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/driverutil"
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

// keep reports whether rec passes the filters (an explicit ID is also
// filtered, so --id and --kind combine).
func (s *selector) keep(rec *nameservice.Record) bool {
	return (s.kind == "" || rec.Kind == s.kind) &&
		strings.HasPrefix(rec.ID.String(), s.prefix) &&
		!(s.skipRetracted && rec.Retracted)
}

// scan sends the selected records of src to out, then closes out. It stops
// early when ctx is done. A record that cannot be read is sent as an item
// with an error (naming the record when its object does): the listing goes
// on past it. Any other listing error ends the scan, sent as an item.
func (s *selector) scan(ctx context.Context, src *nameservice.NameService, out chan<- item) {
	defer close(out)
	send := func(it item) bool {
		if (it.id != "" && s.done[it.id]) || (it.rec != nil && !s.keep(it.rec)) {
			return true // done by a previous run, or filtered out
		}
		return driverutil.Send(ctx, out, it)
	}
	if len(s.ids) > 0 || s.idsFrom != "" {
		s.scanIDs(ctx, src, send)
		return
	}
	opts := nameservice.ListOptions{Kind: s.kind, Prefix: s.prefix, IncludeRetracted: !s.skipRetracted, PageSize: s.pageSize}
	for rec, err := range src.List(ctx, opts) {
		var it item
		var re *nameservice.RecordError
		switch {
		case errors.As(err, &re):
			it.err = fmt.Errorf("source: %w", err)
			if !re.ID.IsZero() {
				it.id = re.ID.String()
			}
		case err != nil:
			if ctx.Err() == nil {
				send(item{err: fmt.Errorf("listing the source: %w", err)})
			}
			return
		default:
			it = item{id: rec.ID.String(), rec: rec}
		}
		if !send(it) {
			return
		}
	}
}

// checkIDs refuses, as usage errors, an --id that is no ID and an
// --ids-from file that cannot be opened. An ID in the file that is none is
// the failure of its line alone, as a record that cannot be read.
func (s *selector) checkIDs() error {
	for _, id := range s.ids {
		if _, err := nameservice.ParseID(id); err != nil {
			return usagef("--id %q: %v", id, err)
		}
	}
	if s.idsFrom == "" {
		return nil
	}
	f, err := os.Open(s.idsFrom)
	if err != nil {
		return usagef("--ids-from: %v", err)
	}
	return f.Close()
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
