package objstore

import (
	"context"
	"time"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/jsonld"
)

// EditBook rewrites the branch bookkeeping of id's defining file as edit
// says, without settling anything: it stands for a writer that stopped
// half-way through a step.
func EditBook(ctx context.Context, r *Records, id driver.ID, edit func(b *Book)) error {
	files, err := r.files(id)
	if err != nil {
		return err
	}
	b, err := r.readBook(ctx, id, files[0].Key)
	if err != nil {
		return err
	}
	bb := &Book{Ops: b.ops, Branches: b.n, Incarnation: b.c.doc.Incarnation}
	edit(bb)
	b.ops, b.n = bb.Ops, bb.Branches
	_, err = r.writeBook(ctx, b, files[0], nil)
	return err
}

// Book is what EditBook edits.
type Book struct {
	Ops         []jsonld.BranchOp
	Branches    int64
	Incarnation string // the record's, read only
}

// CreateAs creates rec with incarnation tok as a branch create does, as a
// creator held up since recording its step would.
func CreateAs(ctx context.Context, r *Records, rec *driver.Record, tok string) error {
	files, err := r.files(rec.ID)
	if err != nil {
		return err
	}
	return r.writeDefining(ctx, rec, files[0], tok, time.Now().Add(createWindow))
}
