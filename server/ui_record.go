package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server/auth"
)

// uiRecordPage is a record's page: its facts, its concerns (with when each
// last changed, where the backend keeps it), and for a ledger its
// branches.
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
	// Ledger: the record is a ledger, and BranchRows its branches (every
	// ledger NAME:*, itself included, that the caller may read).
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

func (s *Server) uiRecord(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := principalOf(ctx)
	id, err := model.ParseID(r.PathValue("id"))
	if err != nil {
		page := s.pageFor(r, "Bad ID")
		page.Error = err.Error()
		s.render(w, http.StatusBadRequest, "error.html", page)
		return
	}
	var rec *model.Record
	if p.CanRead(id.String()) {
		rec, err = s.ns.Get(ctx, id)
	} else {
		err = model.ErrNotFound // outside the scope: exactly as missing
	}
	if err != nil {
		// The message the API gives, never the backend's own text.
		status, msg := http.StatusInternalServerError, s.public(ctx, "get "+id.String(), err).Error()
		if errors.Is(err, model.ErrNotFound) {
			status, msg = http.StatusNotFound, "no record "+id.String()
		}
		page := s.pageFor(r, "Record")
		page.Error = msg
		s.render(w, status, "error.html", page)
		return
	}
	page := s.pageFor(r, id.String())
	rp, err := s.recordPage(ctx, p, rec)
	if err != nil {
		page.Error = err.Error()
	}
	page.Events, page.Record = "/ui/events?id="+url.QueryEscape(id.String()), rp
	s.render(w, http.StatusOK, "record.html", page)
}

// recordPage gathers what rec's page shows. Its error (reading the change
// times or the branches) is the one a client may be told; the page shows
// what was read.
func (s *Server) recordPage(ctx context.Context, p *auth.Principal, rec *model.Record) (*uiRecordPage, error) {
	rp := &uiRecordPage{Row: rowOf(rec), SourceType: rec.SourceType, Dependencies: rec.Dependencies,
		CreatedAt: time.Unix(rec.CreatedAt, 0).UTC().Format(uiTime), Source: rec.SourceBranch, Branches: rec.Branches,
		Concerns: concernsOf(rec), Ledger: rec.Kind == model.Ledger}
	if bp := rec.BranchPoint; bp != nil {
		rp.BranchPoint = "commit_t " + itoa(bp.T) + "  " + bp.Address
	}
	err := s.changeTimes(ctx, rec.ID, rp)
	if rp.Ledger {
		var berr error
		rp.BranchRows, berr = s.branchRows(ctx, p, rec.ID.Name)
		err = errors.Join(err, berr)
	}
	return rp, err
}

// changeTimes fills in when each concern of id last changed, when the
// backend keeps it (driver.ChangeTimer).
func (s *Server) changeTimes(ctx context.Context, id model.ID, rp *uiRecordPage) error {
	times, err := s.ns.ChangedAt(ctx, id)
	switch {
	case errors.Is(err, model.ErrUnsupported):
		return nil
	case err != nil:
		return s.public(ctx, "changed at "+id.String(), err)
	}
	rp.ChangeTimes = true
	for i, c := range rp.Concerns {
		if at, ok := times[c.concern]; ok {
			rp.Concerns[i].ChangedAt = at.UTC().Format(uiTime)
		}
	}
	return nil
}

// branchRows lists the branches of ledger name that p may read, in ID
// order; one that cannot be read gets a row saying so.
func (s *Server) branchRows(ctx context.Context, p *auth.Principal, name string) ([]uiBranch, error) {
	var out []uiBranch
	for rec, err := range s.scan(ctx, p, listQuery{kind: model.Ledger, prefix: name + ":", includeRetracted: true}) {
		var re *model.RecordError
		switch {
		case errors.As(err, &re):
			row := s.unreadableRow(ctx, re)
			out = append(out, uiBranch{Row: row, Branch: re.ID.Branch})
			continue
		case err != nil:
			return out, s.public(ctx, "list branches of "+name, err)
		}
		out = append(out, uiBranch{Row: rowOf(rec), Branch: rec.ID.Branch, Source: rec.SourceBranch, Branches: rec.Branches})
	}
	return out, nil
}
