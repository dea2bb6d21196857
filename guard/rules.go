package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/cid"
	"nameservice.dev/nameservice/internal/text"
	"nameservice.dev/nameservice/model"
)

// Limits on what a write may hold, the same on every backend (see
// docs/model.md). They are chosen so that a record at every limit at once
// still fits one DynamoDB item (400 KB) with room to spare, stays far inside
// every JSON codec's nesting limit, and can always be read back and printed.
const (
	// MaxPayloadDepth is the deepest nesting of a payload: the payload
	// object itself is level 1, each object or array inside it one more.
	// DynamoDB refuses documents nested over 32 levels; a record wraps a
	// payload in a few levels of its own.
	MaxPayloadDepth = 20
	// MaxPayloadBytes is the largest payload of one concern, as compact
	// JSON.
	MaxPayloadBytes = 64 << 10
	// MaxAddressBytes is the longest head or index address.
	MaxAddressBytes = 4 << 10
	// MaxSourceTypeBytes is the longest graph-source type.
	MaxSourceTypeBytes = 256
	// MaxDependencies is the most dependencies a graph source may list.
	MaxDependencies = 64
	// MaxRecordBytes is the largest whole record, in the record JSON form
	// (compact). It follows from the limits above (two payloads of
	// MaxPayloadBytes, two addresses, the dependencies, the identity) and
	// is checked on its own where a whole record is written.
	MaxRecordBytes = 192 << 10
	// MaxWatermark is the highest watermark (and t) a write may set: one
	// below the largest int64, so that a driver's increment of it (a
	// retract's status_v + 1) never wraps.
	MaxWatermark = math.MaxInt64 - 1
	// MaxBranches is the highest branch count: Fluree keeps it as a u32.
	MaxBranches = math.MaxUint32
	// MaxPageSize is the largest page a listing may ask for: drivers size
	// a page's buffers by it.
	MaxPageSize = 1_000_000
)

// invalid returns an error wrapping ErrInvalidArgument.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", model.ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// limitError names the field, its value (a size or a depth) and the limit
// it breaks.
func limitError(field, what string, value, limit int) error {
	return invalid("%s is %d %s, over the limit of %d", field, value, what, limit)
}

// CheckRecord returns an error wrapping ErrInvalidArgument (or
// ErrInvalidID) naming the first rule rec breaks: the invariants of
// model.Record.Validate, then every value's (CheckValue), the meta
// fields' and the whole record's size.
func CheckRecord(rec *model.Record) error {
	if rec == nil {
		return invalid("no record")
	}
	if err := rec.Validate(); err != nil {
		return err
	}
	if err := checkMeta(rec); err != nil {
		return fmt.Errorf("record %s: %w", rec.ID, err)
	}
	for _, c := range model.Concerns {
		if v := rec.Value(c); v != nil {
			if err := CheckValue(c, *v); err != nil {
				return fmt.Errorf("record %s: %w", rec.ID, err)
			}
		}
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return invalid("record %s: %v", rec.ID, err)
	}
	if len(b) > MaxRecordBytes {
		return limitError("record "+rec.ID.String(), "bytes of JSON", len(b), MaxRecordBytes)
	}
	return nil
}

// checkMeta checks the fields of rec beside its concerns.
func checkMeta(rec *model.Record) error {
	if n := len(rec.SourceType); n > MaxSourceTypeBytes {
		return limitError("source type", "bytes", n, MaxSourceTypeBytes)
	}
	if !utf8.ValidString(rec.SourceType) {
		return invalid("source type is not valid UTF-8")
	}
	if n := len(rec.Dependencies); n > MaxDependencies {
		return limitError("dependencies", "entries", n, MaxDependencies)
	}
	for _, d := range rec.Dependencies {
		if _, err := model.ParseID(d); err != nil {
			return fmt.Errorf("dependency: %w", err)
		}
	}
	if rec.SourceBranch != "" {
		if _, err := model.ParseID(rec.ID.Name + ":" + rec.SourceBranch); err != nil {
			return fmt.Errorf("source branch: %w", err)
		}
	}
	if bp := rec.BranchPoint; bp != nil {
		if err := CheckAddress("branch point address", bp.Address); err != nil {
			return err
		}
		if bp.T > MaxWatermark {
			return invalid("branch point t %d is over the limit of %d", bp.T, int64(MaxWatermark))
		}
	}
	if rec.Branches < 0 || rec.Branches > MaxBranches {
		return invalid("branches is %d, outside Fluree's range 0 to %d", rec.Branches, MaxBranches)
	}
	if rec.CreatedAt < 0 {
		return invalid("created_at %d is negative", rec.CreatedAt)
	}
	return nil
}

// CheckValue returns an error wrapping ErrInvalidArgument naming the
// field and the rule when v cannot be written as concern c: it breaks
// driver.ValidateValue, a watermark or t is over MaxWatermark, an address
// is too long, not UTF-8, or a content ID Fluree cannot read, or the
// payload breaks CheckPayload.
func CheckValue(c model.Concern, v model.Value) error {
	if err := (v).Validate(c); err != nil {
		return err
	}
	if v.V > MaxWatermark {
		return invalid("%s %d is over the limit of %d (an increment of it would overflow)", c.Watermark(), v.V, int64(MaxWatermark))
	}
	if ref, ok := v.Ref(); ok && (c == model.Head || c == model.Index) {
		if err := checkRef(c.String(), ref); err != nil {
			return err
		}
	}
	if c == model.Config {
		for _, k := range []string{"default_context", "config_id"} {
			if s, ok := v.Payload[k].(string); ok {
				if err := checkContentID("config "+k, s); err != nil {
					return err
				}
			}
		}
	}
	return CheckPayload(c.String()+" payload", v.Payload)
}

// checkRef checks a head's or index's address, and those of its named
// graphs.
func checkRef(what string, ref model.Ref) error {
	if err := CheckAddress(what+" address", ref.Address); err != nil {
		return err
	}
	for name, g := range ref.Graphs {
		if g == nil {
			continue
		}
		if err := CheckAddress(fmt.Sprintf("%s graph %q address", what, text.Clip(name, 40)), g.Address); err != nil {
			return err
		}
		if g.T > MaxWatermark || g.Rev > MaxWatermark {
			return invalid("%s graph %q: t or rev over the limit of %d", what, text.Clip(name, 40), int64(MaxWatermark))
		}
	}
	return nil
}

// CheckAddress returns an error wrapping ErrInvalidArgument, naming field,
// when address is longer than MaxAddressBytes, not valid UTF-8, or a
// content ID Fluree cannot read (see checkContentID).
func CheckAddress(field, address string) error {
	if len(address) > MaxAddressBytes {
		return limitError(field, "bytes", len(address), MaxAddressBytes)
	}
	if !utf8.ValidString(address) {
		return invalid("%s is not valid UTF-8", field)
	}
	return checkContentID(field, address)
}

// checkContentID refuses a content ID that Fluree, which reads every
// record of a snapshot or listing, could not parse: a varint not in its
// shortest form, or a digest over 64 bytes. Text that is no content ID at
// all (a file address) is left alone.
func checkContentID(field, s string) error {
	if err := cid.Parse(s); err != nil && !errors.Is(err, cid.ErrNotCID) {
		return invalid("%s %q: %v", field, text.Clip(s, 80), err)
	}
	return nil
}

// CheckUpdate returns an error wrapping ErrInvalidArgument when an update
// of concern c to next under cond breaks a rule: c is not a concern, next
// is unborn or fails CheckValue, at-least (the admin publish) is asked of
// another concern than the index, or a compare-and-set does not move the
// watermark forward (an index may stay at its t; every other concern must
// rise).
func CheckUpdate(c model.Concern, cond driver.Condition, next model.Value) error {
	if !c.Valid() {
		return invalid("concern %d is none of head, index, status, config", int(c))
	}
	if next.Unborn() {
		return invalid("%s: an update needs a payload (no update makes a concern unborn)", c)
	}
	switch cond.Kind {
	case driver.Above:
	case driver.AtLeast:
		if c != model.Index {
			return invalid("%s: condition at least (the admin publish) applies to the index only", c)
		}
	case driver.Equals:
		exp := cond.Expected
		if exp.V < 0 || exp.V > MaxWatermark {
			return invalid("expected %s %d is outside 0 to %d", c.Watermark(), exp.V, int64(MaxWatermark))
		}
		if next.V < exp.V {
			return invalid("new %s %d is below the expected %d", c.Watermark(), next.V, exp.V)
		}
		if next.V == exp.V && c != model.Index {
			return invalid("new %s %d is not above the expected %d", c.Watermark(), next.V, exp.V)
		}
	default:
		return invalid("condition kind %d is none of above, at least, equals", int(cond.Kind))
	}
	return CheckValue(c, next)
}

// CheckList returns an error wrapping ErrInvalidArgument when opts is
// malformed: an unknown kind, a negative page size or one over
// MaxPageSize, a prefix that is not
// valid UTF-8 or longer than any ID, a state or source type that is not
// valid UTF-8 or longer than any can be (a payload, MaxSourceTypeBytes).
func CheckList(opts driver.ListOptions) error {
	if k := opts.Kind; k != "" && !k.Valid() {
		return invalid("kind %q is neither ledger nor graph_source", text.Clip(string(k), 40))
	}
	if opts.PageSize < 0 {
		return invalid("page size %d is negative", opts.PageSize)
	}
	if opts.PageSize > MaxPageSize {
		return invalid("page size %d is over the limit of %d", opts.PageSize, MaxPageSize)
	}
	for _, f := range []struct {
		field, s string
		limit    int
	}{{"prefix", opts.Prefix, model.MaxIDLength}, {"state", opts.State, MaxPayloadBytes}, {"source type", opts.SourceType, MaxSourceTypeBytes}} {
		if !utf8.ValidString(f.s) {
			return invalid("%s is not valid UTF-8", f.field)
		}
		if len(f.s) > f.limit {
			return limitError(f.field, "bytes", len(f.s), f.limit)
		}
	}
	return nil
}

// CheckWatch returns an error wrapping ErrInvalidArgument when opts is
// malformed: an unknown concern or kind, or a prefix CheckList refuses.
func CheckWatch(opts driver.WatchOptions) error {
	for _, c := range opts.Concerns {
		if !c.Valid() {
			return invalid("concern %d is none of head, index, status, config", int(c))
		}
	}
	return CheckList(driver.ListOptions{Kind: opts.Kind, Prefix: opts.Prefix})
}
