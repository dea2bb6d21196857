package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
)

var _ driver.Brancher = (*Driver)(nil)

// CreateBranch implements driver.Brancher with POST /ns/v1/branches/{id}.
// The server creates the branch from rec's source (at rec's branch point,
// when it has one) in its backend's atomic step, and answers with the
// record it created (its head is the source's when the server read it).
func (d *Driver) CreateBranch(ctx context.Context, rec *model.Record) (*model.Record, error) {
	req := nswire.BranchRequest{From: rec.SourceBranch}
	if bp := rec.BranchPoint; bp != nil {
		req.At = &nswire.Ref{Address: bp.Address, T: bp.T}
	}
	body, _ := json.Marshal(req) // strings and integers: it cannot fail
	op := "create branch " + rec.ID.String()
	resp, err := d.call(ctx, op, http.MethodPost, "/branches/"+nswire.PathID(rec.ID), body,
		http.StatusCreated)
	if err != nil {
		return nil, err
	}
	var created model.Record
	if err := created.UnmarshalJSON(resp.body); err != nil || created.ID != rec.ID {
		return nil, fmt.Errorf("remote: %s: %w: the server's record does not decode or is another's (%v)", op, model.ErrInternal, err)
	}
	return &created, nil
}

// DropBranch implements driver.Brancher with DELETE /ns/v1/branches/{id}.
func (d *Driver) DropBranch(ctx context.Context, id model.ID) error {
	op := "drop branch " + id.String()
	_, err := d.call(ctx, op, http.MethodDelete, "/branches/"+nswire.PathID(id), nil, http.StatusNoContent)
	return err
}

// ResetHead implements driver.Brancher with POST /ns/v1/reset-head/{id},
// which the server allows only to tokens with the admin scope on id.
func (d *Driver) ResetHead(ctx context.Context, id model.ID, head model.Value, index *model.Value) (*model.Record, error) {
	op := "reset head " + id.String()
	h, ok := head.Ref()
	if !ok {
		return nil, fmt.Errorf("remote: %s: %w: the head to set must be a commit {address, t}", op, model.ErrInvalidArgument)
	}
	req := nswire.ResetHeadRequest{Commit: nswire.Ref{Address: h.Address, T: h.T}}
	if index != nil {
		ix, ok := index.Ref()
		switch {
		case index.Unborn():
			req.ClearIndex = true
		case !ok || ix.Graphs != nil:
			return nil, fmt.Errorf("remote: %s: %w: the index to set must be {address, t}", op, model.ErrInvalidArgument)
		default:
			req.Index = &nswire.Ref{Address: ix.Address, T: ix.T}
		}
	}
	body, _ := json.Marshal(req) // strings, integers and a bool: it cannot fail
	return d.record(ctx, op, http.MethodPost, "/reset-head/"+nswire.PathID(id), body)
}
