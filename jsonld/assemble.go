package jsonld

import (
	"cmp"
	"fmt"
	"slices"

	"nameservice.dev/nameservice/model"
)

// Assemble builds record id from its files: def is the file whose existence
// defines the record and that carries its identity (the main file of layout
// B, the status file of layout C); others are the record's other files (the
// index sidecar, concern files), nil entries meaning absent.
//
// Each concern comes from the first of others holding it, else from def,
// else takes its default: head, index and config unborn, status v1 ready.
// The index is the exception: an index in others (the sidecar) wins over an
// index inside def (inline) when its t is equal or higher. A record is
// retracted when def says so explicitly, else when its status state is
// "retracted". Assemble returns an error wrapping ErrMalformed when the files
// name another record than id or the result breaks an invariant of
// model.Record.Validate.
func Assemble(id model.ID, def *File, others ...*File) (*model.Record, error) {
	switch {
	case def.ID != "" && def.ID != id.String():
		return nil, fmt.Errorf("%w: @id %q is not %s", ErrMalformed, def.ID, id)
	case def.Name != "" && def.Name != id.Name:
		return nil, fmt.Errorf("%w: name %q disagrees with %s", ErrMalformed, def.Name, id)
	case def.Branch != "" && def.Branch != id.Branch:
		return nil, fmt.Errorf("%w: branch %q disagrees with %s", ErrMalformed, def.Branch, id)
	}
	kind := cmp.Or(def.Kind, model.Ledger)
	rec := &model.Record{ID: id, Meta: model.Meta{
		Kind: kind, SourceType: def.SourceType, Dependencies: slices.Clone(def.Dependencies),
		CreatedAt: def.CreatedAt, SourceBranch: def.SourceBranch, Branches: def.Branches,
	}}
	if bp := def.BranchPoint; bp != nil {
		rec.BranchPoint = new(*bp)
	}
	// A concern comes from the first of others that holds it, else from def.
	first := func(get func(*File) *model.Value) *model.Value {
		for _, f := range others {
			if f != nil && get(f) != nil {
				return get(f)
			}
		}
		return nil
	}
	pick := func(get func(*File) *model.Value) *model.Value { return cmp.Or(first(get), get(def)) }
	status := cmp.Or(pick(func(f *File) *model.Value { return f.Status }), new(model.ReadyStatus()))
	rec.Status = new(status.Clone())
	rec.Config = orUnborn(pick(func(f *File) *model.Value { return f.Config }))
	// The merge rule: the sidecar's index wins at equal or higher t.
	index := first(func(f *File) *model.Value { return f.Index })
	if index == nil || (def.Index != nil && def.Index.V > index.V) {
		index = def.Index
	}
	rec.Index = orUnborn(index)
	if kind == model.Ledger {
		rec.Head = orUnborn(pick(func(f *File) *model.Value { return f.Head }))
	}
	rec.Retracted = status.State() == model.StateRetracted
	if def.Retracted != nil {
		rec.Retracted = *def.Retracted
	}
	if err := rec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return rec, nil
}

// orUnborn returns a copy of v, or an unborn value when v is nil.
func orUnborn(v *model.Value) *model.Value { return new(cmp.Or(v, &model.Value{}).Clone()) }
