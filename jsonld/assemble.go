package jsonld

import (
	"fmt"
	"slices"

	"nameservice.dev/nameservice/driver"
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
// driver.Record.Validate.
func Assemble(id driver.ID, def *File, others ...*File) (*driver.Record, error) {
	if err := checkNames(id, def); err != nil {
		return nil, err
	}
	kind := def.Kind
	if kind == "" {
		kind = driver.Ledger
	}
	rec := &driver.Record{ID: id, Meta: driver.Meta{
		Kind: kind, SourceType: def.SourceType, Dependencies: slices.Clone(def.Dependencies),
		CreatedAt: def.CreatedAt, SourceBranch: def.SourceBranch, Branches: def.Branches,
	}}
	if bp := def.BranchPoint; bp != nil {
		c := *bp
		rec.BranchPoint = &c
	}
	pick := func(get func(*File) *driver.Value) *driver.Value {
		for _, f := range others {
			if f != nil && get(f) != nil {
				return get(f)
			}
		}
		return get(def)
	}
	status := pick(func(f *File) *driver.Value { return f.Status })
	if status == nil {
		s := driver.ReadyStatus()
		status = &s
	}
	rec.Status = clone(status)
	rec.Config = orUnborn(pick(func(f *File) *driver.Value { return f.Config }))
	rec.Index = orUnborn(mergeIndex(def.Index, pickOthers(others)))
	if kind == driver.Ledger {
		rec.Head = orUnborn(pick(func(f *File) *driver.Value { return f.Head }))
	}
	rec.Retracted = status.State() == driver.StateRetracted
	if def.Retracted != nil {
		rec.Retracted = *def.Retracted
	}
	if err := rec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return rec, nil
}

func pickOthers(others []*File) *driver.Value {
	for _, f := range others {
		if f != nil && f.Index != nil {
			return f.Index
		}
	}
	return nil
}

// mergeIndex applies the merge rule: the sidecar wins at equal or higher t.
func mergeIndex(inline, sidecar *driver.Value) *driver.Value {
	if sidecar == nil || (inline != nil && inline.V > sidecar.V) {
		return inline
	}
	return sidecar
}

func clone(v *driver.Value) *driver.Value {
	c := v.Clone()
	return &c
}

func orUnborn(v *driver.Value) *driver.Value {
	if v == nil {
		return &driver.Value{}
	}
	return clone(v)
}

// checkNames returns an error when def's @id, name or branch members name
// another record than id.
func checkNames(id driver.ID, def *File) error {
	if def.ID != "" && def.ID != id.String() {
		return fmt.Errorf("%w: @id %q is not %s", ErrMalformed, def.ID, id)
	}
	if def.Name != "" && def.Name != id.Name {
		return fmt.Errorf("%w: name %q disagrees with %s", ErrMalformed, def.Name, id)
	}
	if def.Branch != "" && def.Branch != id.Branch {
		return fmt.Errorf("%w: branch %q disagrees with %s", ErrMalformed, def.Branch, id)
	}
	return nil
}
