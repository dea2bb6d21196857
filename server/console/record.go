package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
)

type uiRecordPage struct {
	Row          uiRow
	SourceType   string
	Dependencies []string
	CreatedAt    string
	Source       string // the branch it was created from
	BranchPoint  string // "commit_t T  ADDRESS" when created at a commit
	Branches     int64
	Concerns     []uiConcern
	ChangeTimes  bool // the backend keeps when each concern changed
	// Ledger: BranchRows are its branches the caller may read, itself
	// included.
	Ledger     bool
	BranchRows []uiBranch
}

// uiBranch is one branch of a ledger on its record's page.
type uiBranch struct {
	Row      uiRow
	Branch   string
	Source   string
	Branches int64
}

const uiTime = "2006-01-02 15:04:05Z"

func (cs *Console) uiRecord(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := auth.FromContext(ctx)
	id, err := model.ParseID(r.PathValue("id"))
	if err != nil {
		cs.renderError(w, r, http.StatusBadRequest, "Bad ID", err.Error())
		return
	}
	var rec *model.Record
	if p.CanRead(id.String()) {
		rec, err = cs.NS.Get(ctx, id)
	} else {
		err = model.ErrNotFound // outside the scope: exactly as missing
	}
	if err != nil {
		// The message the API gives, never the backend's own text.
		status, msg := http.StatusInternalServerError, cs.Public.Error(ctx, "get "+id.String(), err).Error()
		if errors.Is(err, model.ErrNotFound) {
			status, msg = http.StatusNotFound, "no record "+id.String()
		}
		cs.renderError(w, r, status, "Record", msg)
		return
	}
	page := cs.pageFor(r, id.String())
	rp, err := cs.recordPage(ctx, p, rec)
	if err != nil {
		page.Error = err.Error()
	}
	page.Events, page.Record = "/ui/events?id="+url.QueryEscape(id.String()), rp
	cs.render(w, http.StatusOK, "record.html", page)
}

// recordPage gathers what rec's page shows. Its error is the one a client
// may be told; the page shows what was read.
func (cs *Console) recordPage(ctx context.Context, p *auth.Principal, rec *model.Record) (*uiRecordPage, error) {
	rp := &uiRecordPage{Row: rowOf(rec), SourceType: rec.SourceType, Dependencies: rec.Dependencies,
		CreatedAt: time.Unix(rec.CreatedAt, 0).UTC().Format(uiTime), Source: rec.SourceBranch, Branches: rec.Branches,
		Ledger: rec.Kind == model.Ledger}
	for _, c := range model.Concerns {
		if v := rec.Value(c); v != nil {
			rp.Concerns = append(rp.Concerns, concernOf(c, *v))
		}
	}
	if bp := rec.BranchPoint; bp != nil {
		rp.BranchPoint = "commit_t " + itoa(bp.T) + "  " + bp.Address
	}
	err := cs.changeTimes(ctx, rec.ID, rp)
	if rp.Ledger {
		var berr error
		rp.BranchRows, berr = cs.branchRows(ctx, p, rec.ID.Name)
		err = errors.Join(err, berr)
	}
	return rp, err
}

// changeTimes fills in when each concern last changed, if the backend keeps it.
func (cs *Console) changeTimes(ctx context.Context, id model.ID, rp *uiRecordPage) error {
	times, err := cs.NS.ChangedAt(ctx, id)
	switch {
	case errors.Is(err, model.ErrUnsupported):
		return nil
	case err != nil:
		return cs.Public.Error(ctx, "changed at "+id.String(), err)
	}
	rp.ChangeTimes = true
	for i, c := range rp.Concerns {
		if at, ok := times[c.concern]; ok {
			rp.Concerns[i].ChangedAt = at.UTC().Format(uiTime)
		}
	}
	return nil
}

func (cs *Console) branchRows(ctx context.Context, p *auth.Principal, name string) ([]uiBranch, error) {
	var out []uiBranch
	for rec, err := range cs.Lister.Scan(ctx, p, nameservice.ListOptions{Kind: model.Ledger, Prefix: name + ":", IncludeRetracted: true}) {
		var re *model.RecordError
		switch {
		case errors.As(err, &re):
			out = append(out, uiBranch{Row: cs.unreadableRow(ctx, re), Branch: re.ID.Branch})
			continue
		case err != nil:
			return out, cs.Public.Error(ctx, "list branches of "+name, err)
		}
		out = append(out, uiBranch{Row: rowOf(rec), Branch: rec.ID.Branch, Source: rec.SourceBranch, Branches: rec.Branches})
	}
	return out, nil
}
