package objstore

import (
	"context"
	"time"

	"nameservice.dev/nameservice/model"
)

// Book is a record's branch bookkeeping; StaleAfter and CreateWindow are
// the branch protocol's times.
type Book = book

const (
	StaleAfter   = staleAfter
	CreateWindow = createWindow
)

// EditBook rewrites the branch bookkeeping of id's defining file as edit
// says, without settling anything: it stands for a writer that stopped
// half-way through a step.
func EditBook(ctx context.Context, r *Records, id model.ID, edit func(b *Book)) error {
	b, err := r.readBook(ctx, id)
	if err != nil {
		return err
	}
	edit(b)
	_, err = r.writeBook(ctx, b, nil)
	return err
}

// CreateAs creates rec with incarnation tok as a branch create does, as a
// creator held up since recording its step would.
func CreateAs(ctx context.Context, r *Records, rec *model.Record, tok string) error {
	return r.createAs(ctx, rec, tok, time.Now().Add(createWindow))
}
