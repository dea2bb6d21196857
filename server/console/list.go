package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
)

// uiPageSize is the entries of one page of the records table, which links
// to the next with a sealed page token as the API's listing does.
const uiPageSize = 1000

// uiFilter is what the records page lists, from its query string.
type uiFilter struct {
	Prefix    string
	Kind      string // "", ledger or graph_source
	State     string // a status state; "" is any
	Retracted bool   // include retracted records
	Page      string // the sealed token of the page; "" the first
	N         int    // the page's number, from 1 (shown only)
}

// parseFilter reads a filter from r's query string; the listing checks it.
func parseFilter(r *http.Request) uiFilter {
	q := r.URL.Query()
	f := uiFilter{Prefix: q.Get("prefix"), Kind: q.Get("kind"), State: q.Get("state"), Retracted: q.Get("retracted") == "1",
		Page: q.Get("page"), N: 1}
	if n, err := strconv.Atoi(q.Get("n")); err == nil && n > 1 {
		f.N = n
	}
	return f
}

// query returns the query string of f for page token tok (number n).
func (f uiFilter) query(tok string, n int) string {
	v := nswire.Query(map[string]string{"prefix": f.Prefix, "kind": f.Kind, "state": f.State, "page": tok})
	if f.Retracted {
		v.Set("retracted", "1")
	}
	if n > 1 {
		v.Set("n", strconv.Itoa(n))
	}
	return v.Encode()
}

// uiList is a page of the records table.
type uiList struct {
	Filter     uiFilter
	Rows       []uiRow
	Unreadable int    // rows of records that could not be read
	First      int    // the number of the page's first entry, from 1
	Next, Top  string // the next page's and the first page's links; "" for none
}

func (cs *Console) uiRecords(w http.ResponseWriter, r *http.Request) {
	list, err := cs.listRows(r.Context(), auth.FromContext(r.Context()), parseFilter(r))
	if errors.Is(err, model.ErrInvalidArgument) { // a malformed filter, a page token of another filter or key
		cs.renderError(w, r, http.StatusBadRequest, "Records", err.Error())
		return
	}
	page := cs.pageFor(r, "Records")
	if err != nil {
		page.Error = err.Error()
	}
	page.Events, page.List = "/ui/events", list
	cs.render(w, http.StatusOK, "records.html", page)
}

// listRows reads the page of f that p may read, in ID order. Its error is
// the one a client may be told.
func (cs *Console) listRows(ctx context.Context, p *auth.Principal, f uiFilter) (*uiList, error) {
	list := &uiList{Filter: f, First: (f.N-1)*uiPageSize + 1}
	// The backend selects the state, so that a page is full and its token
	// bound to it.
	q := nameservice.ListOptions{Kind: model.Kind(f.Kind), Prefix: f.Prefix, IncludeRetracted: f.Retracted, State: f.State}
	page, err := cs.Lister.Page(ctx, p, q, f.Page, uiPageSize)
	if err != nil {
		return list, cs.Public.Error(ctx, "list", err)
	}
	for _, rec := range page.Records {
		list.Rows = append(list.Rows, rowOf(rec))
	}
	for _, fail := range page.Failed {
		list.Rows = append(list.Rows, cs.unreadableRow(ctx, fail))
		list.Unreadable++
	}
	sort.SliceStable(list.Rows, func(i, j int) bool { return list.Rows[i].ID < list.Rows[j].ID })
	if page.Next != "" {
		list.Next = "/ui?" + f.query(page.Next, f.N+1)
	}
	if f.Page != "" {
		list.Top = "/ui?" + f.query("", 1)
	}
	return list, nil
}

// unreadableRow is the row of a record a listing could not read, as the API
// names it (web.Public.Failure), never with the backend's text.
func (cs *Console) unreadableRow(ctx context.Context, re *model.RecordError) uiRow {
	f := cs.Public.Failure(ctx, re)
	row := uiRow{ID: f.Object, Status: uiUnreadable, Unreadable: true}
	if !re.ID.IsZero() {
		row.Href = recordHref(re.ID)
	}
	return row
}

// uiUnreadable is the status the console shows for a record it cannot read.
const uiUnreadable = "cannot be read"

// uiLag is the index-lag chart of the ledgers most behind.
type uiLag struct {
	Bars   []uiBar
	ChartH int
}

func (cs *Console) uiLag(w http.ResponseWriter, r *http.Request) {
	page := cs.pageFor(r, "Index lag")
	rows, err := cs.lagging(r.Context(), auth.FromContext(r.Context()))
	if err != nil {
		page.Error = err.Error()
	}
	lag := &uiLag{ChartH: max(barHeight, len(rows)*barHeight)}
	for i, row := range rows {
		width := max(2, int(chartWidth*row.Gap/rows[0].Gap))
		lag.Bars = append(lag.Bars, uiBar{Row: row, Y: i * barHeight, Width: width})
	}
	page.Events, page.Lag = "/ui/events", lag
	cs.render(w, http.StatusOK, "lag.html", page)
}

// lagging returns the rows of the ledgers p may read whose index is most
// behind, at most maxBars, holding a few pages at a time. Its error is the
// one a client may be told.
func (cs *Console) lagging(ctx context.Context, p *auth.Principal) ([]uiRow, error) {
	var rows []uiRow
	trim := func() {
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].Gap > rows[j].Gap })
		rows = rows[:min(len(rows), maxBars)]
	}
	for rec, err := range cs.Lister.Scan(ctx, p, nameservice.ListOptions{Kind: model.Ledger}) {
		var re *model.RecordError
		switch {
		case errors.As(err, &re):
			continue
		case err != nil:
			trim()
			return rows, cs.Public.Error(ctx, "list", err)
		}
		if row := rowOf(rec); row.Gap > 0 && !row.Retracted {
			rows = append(rows, row)
		}
		if len(rows) >= 4*maxBars {
			trim()
		}
	}
	trim()
	return rows, nil
}

// uiRow is one record as the console shows it, by the templates and as
// JSON to the page's script alike.
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
	// Unreadable: only ID, Status and (for a known ID) Href are set.
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
	return itoa(v.V)
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

// gapOf returns the commits rec's index has not caught up with, and how to
// show them. A branch without an index of its own counts only the commits
// since it branched (those before are its source's to index), when known.
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

// leaseText describes the leases in a status payload (package lease's
// NAME_lock: {holder, expires_at, ...}).
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
