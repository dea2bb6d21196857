package objstore

import (
	"context"
	"time"

	"nameservice.dev/nameservice/internal/branching"
	"nameservice.dev/nameservice/model"
)

// EditBook rewrites the branch bookkeeping of id's defining file as edit
// says, without settling anything: it stands for a writer that stopped
// half-way through a step.
func EditBook(ctx context.Context, r *Records, id model.ID, edit func(b *branching.Book)) error {
	s := branchStore{r}
	b, err := s.ReadBook(ctx, id)
	if err != nil {
		return err
	}
	edit(b)
	_, err = s.WriteBook(ctx, b, nil)
	return err
}

// CreateAs creates rec with incarnation tok as a branch create does, as a
// creator held up since recording its step would.
func CreateAs(ctx context.Context, r *Records, rec *model.Record, tok string) error {
	files, err := r.files(rec.ID)
	if err != nil {
		return err
	}
	return r.writeDefining(ctx, rec, files[0], tok, time.Now().Add(branching.CreateWindow))
}
