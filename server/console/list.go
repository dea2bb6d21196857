package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
)

// The records page lists what a filter selects (ID prefix, kind, state,
// retracted ones or not), one page at a time: a page holds uiPageSize
// entries and links to the next with a sealed page token, as the API's
// listing does, so any number of records can be gone through.

// uiPageSize is the entries (records, and records that could not be read)
// of one page of the records table.
const uiPageSize = 1000

// uiFilter is what the records page lists, from its query string.
type uiFilter struct {
	Prefix    string
	Kind      string // "", ledger or graph_source
	State     string // a status state; "" is any (see consoleQuery)
	Retracted bool   // include retracted records
	Page      string // the sealed token of the page; "" the first
	N         int    // the page's number, from 1 (shown only)
}

// parseFilter reads a filter from r's query string; the listing checks it
// (web.Lister.Page).
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
	v := url.Values{}
	for k, s := range map[string]string{"prefix": f.Prefix, "kind": f.Kind, "state": f.State, "page": tok} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if f.Retracted {
		v.Set("retracted", "1")
	}
	if n > 1 {
		v.Set("n", strconv.Itoa(n))
	}
	return v.Encode()
}

// consoleQuery is the listing a filter asks the backend for: the state is
// selected by the backend (ListOptions.State), so that a page holds a full
// page of records in that state and its token is bound to it.
func consoleQuery(f uiFilter) nameservice.ListOptions {
	return nameservice.ListOptions{Kind: model.Kind(f.Kind), Prefix: f.Prefix, IncludeRetracted: f.Retracted, State: f.State}
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
	page := cs.pageFor(r, "Records")
	list, err := cs.listRows(r.Context(), auth.FromContext(r.Context()), parseFilter(r))
	if errors.Is(err, model.ErrInvalidArgument) {
		page.Error = err.Error() // a malformed filter, a page token of another filter or key
		cs.render(w, http.StatusBadRequest, "error.html", page)
		return
	}
	if err != nil {
		page.Error = err.Error()
	}
	page.Events, page.List = "/ui/events", list
	cs.render(w, http.StatusOK, "records.html", page)
}

// listRows reads the page of f that p may read, a row for each entry, in ID
// order. Its error is the one a client may be told.
func (cs *Console) listRows(ctx context.Context, p *auth.Principal, f uiFilter) (*uiList, error) {
	list := &uiList{Filter: f, First: (f.N-1)*uiPageSize + 1}
	page, err := cs.Lister.Page(ctx, p, consoleQuery(f), f.Page, uiPageSize)
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

// unreadableRow is the row of a record a listing could not read: its ID (or
// the digest the API names an object by) and "cannot be read", never the
// backend's text, which goes to the server's log as the API's does.
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

// uiLag is the index-lag chart: the ledgers most behind of every record
// the caller may read.
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
		lag.Bars = append(lag.Bars, uiBar{Row: row, Y: i * barHeight, Width: max(2, int(chartWidth*row.Gap/rows[0].Gap))})
	}
	page.Events, page.Lag = "/ui/events", lag
	cs.render(w, http.StatusOK, "lag.html", page)
}

// lagging returns the rows of the ledgers whose index is behind, at most
// maxBars of them, most behind first, from every record p may read, holding
// no more than a few pages of them at a time. Its error is the one a client
// may be told.
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
