package objstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// Collection relies on deletes that no writer can race, not on conditional
// deletes (which some stores ignore). A collector first replaces the
// defining file of a purged ID by a mark of its own, conditional on what
// it read (IfAbsent when only orphans are left), holding f:collectUntil:
// until then no create replaces it and no push writes the ID's other files
// (a push needs a live defining file). It then deletes the other files and
// last the mark, one request each, within collectWindow. A collector that
// stops half-way leaves its mark, which creates and collectors take over
// once collectUntil has passed.
const (
	// collectWindow bounds the time from the collector's mark to its last
	// delete of an ID; a delete not sent by then is left to the next run.
	collectWindow = 10 * time.Second
	// collectHold is how long writers leave a collector's mark alone; the
	// margin absorbs clocks that disagree and deletes held up on the way.
	collectHold = 2 * time.Minute
)

// collectingNow reports whether doc is a collector's mark still in force.
func collectingNow(doc *jsonld.File) bool {
	return doc.CollectUntil != 0 && time.Now().UnixMilli() < doc.CollectUntil
}

type stemFiles struct {
	stem   string
	def    string   // key of the defining file, "" when not listed
	others []string // keys of the other files
}

// Collect implements driver.Collector: it removes the files of every
// purged ID under opts.Prefix (its mark and sealed files) and orphan files
// whose defining file is gone, once purged opts.OlderThan ago. A live
// record's files, debris included, are never touched.
func (r *Records) Collect(ctx context.Context, opts driver.CollectOptions) (driver.CollectStats, error) {
	if err := r.begin(ctx); err != nil {
		return driver.CollectStats{}, err
	}
	groups, err := r.collectGroups(ctx, opts.Prefix)
	if err != nil {
		return driver.CollectStats{}, err
	}
	c := &collector{r: r, opts: opts}
	if c.opts.Now == nil {
		c.opts.Now = time.Now
	}
	for _, g := range groups {
		if err := c.collect(ctx, g); err != nil {
			return c.stats, err
		}
	}
	return c.stats, nil
}

// collectGroups lists the record files under prefix's key prefix grouped
// by stem, in stem order.
func (r *Records) collectGroups(ctx context.Context, prefix string) ([]*stemFiles, error) {
	byStem := map[string]*stemFiles{}
	err := r.store.List(ctx, IDKeyPrefix(prefix), "", func(e Entry) error {
		if e.Err != nil {
			return e.Err
		}
		role, st := layout.Classify(r.cfg.Layout, e.Key)
		if role != layout.Defining && role != layout.Secondary {
			return nil
		}
		g := byStem[st]
		if g == nil {
			g = &stemFiles{stem: st}
			byStem[st] = g
		}
		if role == layout.Defining {
			g.def = e.Key
		} else {
			g.others = append(g.others, e.Key)
		}
		return nil
	})
	order := func(a, b *stemFiles) int { return strings.Compare(a.stem, b.stem) }
	return slices.SortedFunc(maps.Values(byStem), order), err
}

type collector struct {
	r     *Records
	opts  driver.CollectOptions
	stats driver.CollectStats
}

func (c *collector) report(key, id string, removed bool, reason string) {
	driverutil.Report(c.opts, &c.stats, driver.Collected{Object: c.r.object(key), ID: id, Removed: removed, Reason: reason})
}

// reportAll reports every listed file of g (the defining file first).
func (c *collector) reportAll(g *stemFiles, id string, removed bool, reason string) {
	if g.def != "" {
		c.report(g.def, id, removed, reason)
	}
	for _, k := range g.others {
		c.report(k, id, removed, reason)
	}
}

// collect decides about one stem: a live record (or one that does not
// decode) is left alone silently; a purged ID or orphans are removed when
// old enough.
func (c *collector) collect(ctx context.Context, g *stemFiles) error {
	def, err := c.r.get(ctx, c.defKey(g))
	if err != nil {
		return err
	}
	var doc *jsonld.File
	switch {
	case def == nil && len(g.others) == 0:
		return nil // removed since the listing
	case def != nil:
		if doc, err = jsonld.Decode(def.data); err != nil || !doc.Purged {
			return nil // a record (readable or not) is not garbage: purge it first
		}
	}
	id, purgedAt, err := c.identify(ctx, g, doc)
	switch {
	case err != nil:
		return err
	case id == "" && c.opts.Prefix == "":
		c.reportAll(g, id, false, "no ID maps to these files")
		return nil
	case !strings.HasPrefix(id, c.opts.Prefix):
		return nil
	}
	switch age := c.opts.Now().Sub(time.UnixMilli(purgedAt)); {
	case doc != nil && collectingNow(doc):
		c.reportAll(g, id, false, "another collector is removing it")
	case c.opts.OlderThan > 0 && purgedAt != 0 && age < c.opts.OlderThan:
		c.reportAll(g, id, false, fmt.Sprintf("purged %s ago, younger than %s", age.Round(time.Second), c.opts.OlderThan))
	case c.opts.DryRun:
		c.reportAll(g, id, true, purgedReason(doc, purgedAt, age))
	default:
		return c.remove(ctx, g, id, def, doc, purgedAt)
	}
	return nil
}

func purgedReason(doc *jsonld.File, purgedAt int64, age time.Duration) string {
	switch {
	case doc == nil:
		return "orphan of a purged record"
	case purgedAt == 0:
		return "purged"
	}
	return fmt.Sprintf("purged %s ago", age.Round(time.Second))
}

func (c *collector) defKey(g *stemFiles) string {
	if g.def != "" {
		return g.def
	}
	return layout.StemFiles(c.r.cfg.Layout, g.stem)[0].Key
}

// identify returns the ID g's files belong to and when it was purged (0:
// unknown), from the mark doc or, when there is none, from the orphans.
func (c *collector) identify(ctx context.Context, g *stemFiles, doc *jsonld.File) (string, int64, error) {
	if doc != nil && doc.ID != "" {
		return doc.ID, doc.PurgedAt, nil
	}
	id, purgedAt := "", int64(0)
	if pid, ok := layout.PathDefault(g.stem); ok {
		id = pid.String()
	}
	if doc != nil {
		purgedAt = doc.PurgedAt
	}
	for _, k := range g.others {
		obj, err := c.r.get(ctx, k)
		if err != nil {
			return "", 0, err
		}
		if obj == nil {
			continue
		}
		if f, err := jsonld.Decode(obj.data); err == nil {
			if f.ID != "" {
				id = f.ID
			}
			purgedAt = max(purgedAt, f.PurgedAt)
		}
	}
	return id, purgedAt, nil
}

// remove replaces g's defining file (def, nil when absent) by a
// collector's mark, then deletes the other files and the mark within
// collectWindow.
func (c *collector) remove(ctx context.Context, g *stemFiles, id string, def *cached, doc *jsonld.File, purgedAt int64) error {
	start := time.Now()
	key := c.defKey(g)
	pc := IfAbsent()
	if def != nil {
		pc = IfMatch(def.tag)
	}
	tag, err := c.hold(ctx, key, id, pc, purgedAt, start)
	if err != nil || tag == "" {
		return err
	}
	dctx, cancel := context.WithDeadline(ctx, start.Add(collectWindow))
	defer cancel()
	reason := purgedReason(doc, purgedAt, c.opts.Now().Sub(time.UnixMilli(purgedAt)))
	for _, k := range g.others {
		// Unconditional: while the mark holds nothing writes these keys.
		if err := c.removeOne(dctx, k, Precondition{}, id, reason); err != nil {
			return c.stopped(ctx, key, id, err)
		}
	}
	if def == nil {
		reason = "" // the mark is this collector's own: not reported
	}
	if err := c.removeOne(dctx, key, IfMatch(tag), id, reason); err != nil {
		return c.stopped(ctx, key, id, err)
	}
	return nil
}

// errLeft stops the collection of one record, left to the next run.
var errLeft = errors.New("left for the next run")

const lostReason = "the store's answer was lost; the next run removes it"

// hold writes the collector's mark at key under pc and returns its tag; ""
// when the key changed meanwhile or the outcome is unknown (reported as
// kept).
func (c *collector) hold(ctx context.Context, key, id string, pc Precondition, purgedAt int64, start time.Time) (string, error) {
	pid, err := model.ParseID(id)
	if err != nil {
		return "", fmt.Errorf("%s: collect %s: %w", c.r.cfg.Name, c.r.object(key), err)
	}
	data, err := jsonld.Encode(&model.Record{ID: pid}, jsonld.EncodeOptions{Dialect: c.r.cfg.Dialect, Tombstone: true,
		PurgedAt: purgedAt, CollectUntil: start.Add(collectHold).UnixMilli()})
	if err != nil {
		return "", fmt.Errorf("%s: collect %s: %w", c.r.cfg.Name, c.r.object(key), err)
	}
	tag, err := c.r.store.Put(ctx, key, data, pc)
	switch {
	case err == nil:
		return tag, nil
	case errors.Is(err, ErrPrecondition), errors.Is(err, ErrMissing):
		c.report(key, id, false, "written by another process while being collected")
		return "", nil
	case c.r.store.MaybeApplied(err) && ctx.Err() == nil:
		c.report(key, id, false, lostReason)
		return "", nil
	}
	return "", err
}

// removeOne deletes key under pc with one request, and reports it unless
// reason is "".
func (c *collector) removeOne(ctx context.Context, key string, pc Precondition, id, reason string) error {
	err := c.r.store.Delete(ctx, key, pc)
	switch {
	case err == nil && reason == "":
	case err == nil:
		c.report(key, id, true, reason)
	case errors.Is(err, ErrMissing):
	case errors.Is(err, ErrPrecondition):
		c.report(key, id, false, "written by another process while being collected")
	case c.r.store.MaybeApplied(err) && ctx.Err() == nil:
		c.report(key, id, false, lostReason)
		return errLeft
	default:
		return err
	}
	return nil
}

// stopped reports the collection of id cut short by err: past the window
// it is left to the next run, otherwise err is returned.
func (c *collector) stopped(ctx context.Context, key, id string, err error) error {
	if errors.Is(err, errLeft) {
		return nil
	}
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		c.report(key, id, false, fmt.Sprintf("not removed within %s; the next run removes it", collectWindow))
		return nil
	}
	return fmt.Errorf("%s: collect %s: %w", c.r.cfg.Name, id, err)
}
