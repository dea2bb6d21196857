package console

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
)

// uiRow is one record as the console shows it: rendered into the table by
// the templates, and sent as JSON to the page's script on every change, so
// that both show exactly the same thing.
type uiRow struct {
	ID        string `json:"id"`
	Href      string `json:"href"`
	Kind      string `json:"kind"`
	HeadT     string `json:"head_t"`
	IndexT    string `json:"index_t"`
	Gap       int64  `json:"gap"` // head t - index t; 0 when not a ledger
	GapText   string `json:"gap_text"`
	Status    string `json:"status"`
	Lease     string `json:"lease"`
	Retracted bool   `json:"retracted"`
	// Unreadable: the record could not be read; only ID (and Href when the
	// ID is known) and Status are set.
	Unreadable bool `json:"unreadable"`
}

// uiConcern is one concern on a record's page.
type uiConcern struct {
	Name    string `json:"concern"`
	V       int64  `json:"v"`
	Payload string `json:"payload"` // indented JSON, or "unborn"
	// ChangedAt is when it last changed, where the backend keeps it.
	ChangedAt string        `json:"-"`
	concern   model.Concern // for ChangedAt
}

func recordHref(id model.ID) string { return "/ui/record/" + nswire.PathID(id) }

func watermark(v *model.Value) string {
	if v == nil {
		return ""
	}
	if v.Unborn() {
		return "–"
	}
	return strconv.FormatInt(v.V, 10)
}

func rowOf(rec *model.Record) uiRow {
	r := uiRow{ID: rec.ID.String(), Href: recordHref(rec.ID), Kind: string(rec.Kind),
		HeadT: watermark(rec.Head), IndexT: watermark(rec.Index), Retracted: rec.Retracted}
	if rec.Status != nil {
		r.Status = rec.Status.State()
		r.Lease = leaseText(rec.Status.Payload)
	}
	r.Gap, r.GapText = gapOf(rec)
	return r
}

// gapOf returns the commits rec's index has not caught up with, and how
// to show them. A branch without an index of its own is not behind by its
// whole head: the commits up to where it branched are its source's to
// index. So its gap counts the commits made on it since it branched when
// that commit is known (a branch created at a commit), and is "no index
// yet" otherwise.
func gapOf(rec *model.Record) (int64, string) {
	switch {
	case rec.Head == nil || rec.Index == nil:
		return 0, ""
	case rec.Index.Unborn() && rec.SourceBranch != "" && rec.BranchPoint == nil:
		return 0, "no index yet"
	case rec.Index.Unborn() && rec.SourceBranch != "":
		gap := max(0, rec.Head.V-rec.BranchPoint.T)
		return gap, itoa(gap) + " since branching"
	}
	gap := max(0, rec.Head.V-rec.Index.V)
	return gap, itoa(gap)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// leaseText describes the leases held in a status payload, as package
// lease stores them (NAME_lock: {holder, expires_at, ...}).
func leaseText(p model.Object) string {
	var held []string
	for k, raw := range p {
		name, ok := strings.CutSuffix(k, "_lock")
		if !ok || raw == nil {
			continue
		}
		b, _ := json.Marshal(raw)
		var l struct {
			Holder    string `json:"holder"`
			ExpiresAt int64  `json:"expires_at"`
		}
		if json.Unmarshal(b, &l) != nil {
			held = append(held, name+": (unreadable)")
			continue
		}
		s := name + ": " + l.Holder
		if l.ExpiresAt > 0 {
			s += " until " + time.Unix(l.ExpiresAt, 0).UTC().Format(time.TimeOnly) + "Z"
		}
		held = append(held, s)
	}
	sort.Strings(held)
	return strings.Join(held, "; ")
}

func concernsOf(rec *model.Record) []uiConcern {
	var cs []uiConcern
	for _, c := range model.Concerns {
		if v := rec.Value(c); v != nil {
			cs = append(cs, concernOf(c, *v))
		}
	}
	return cs
}

func concernOf(c model.Concern, v model.Value) uiConcern {
	p := "unborn"
	if !v.Unborn() {
		b, err := json.MarshalIndent(v.Payload, "", "  ")
		if err == nil {
			p = string(b)
		}
	}
	return uiConcern{Name: c.String(), V: v.V, Payload: p, concern: c}
}

// uiBar is one bar of the index-lag chart.
type uiBar struct {
	Row   uiRow
	Y     int
	Width int // of the bar, out of chartWidth
}

const (
	chartWidth = 600
	barHeight  = 22
	maxBars    = 50
)
