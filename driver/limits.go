package driver

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
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
	// is checked on its own where a whole record is written (Import).
	MaxRecordBytes = 192 << 10
)

// LimitError returns an error wrapping ErrInvalidArgument that names the
// field, its value (a size or a depth) and the limit it breaks.
func LimitError(field, what string, value, limit int) error {
	return fmt.Errorf("%w: %s is %d %s, over the limit of %d", ErrInvalidArgument, field, value, what, limit)
}

// CheckPayload returns an error wrapping ErrInvalidArgument, naming field,
// when p nests deeper than MaxPayloadDepth, encodes to more than
// MaxPayloadBytes, or holds a string or key that is not valid UTF-8 (which
// JSON encoding would silently rewrite).
func CheckPayload(field string, p Object) error {
	if p == nil {
		return nil
	}
	if d := depth(map[string]any(p), 1); d > MaxPayloadDepth {
		return fmt.Errorf("%w: %s nests more than %d levels deep, over the limit of %d", ErrInvalidArgument, field, MaxPayloadDepth, MaxPayloadDepth)
	}
	if s, ok := invalidUTF8(map[string]any(p)); !ok {
		return fmt.Errorf("%w: %s holds a string that is not valid UTF-8: %q", ErrInvalidArgument, field, Clip(s, 40))
	}
	b, err := p.MarshalJSON()
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalidArgument, field, err)
	}
	if len(b) > MaxPayloadBytes {
		return LimitError(field, "bytes of JSON", len(b), MaxPayloadBytes)
	}
	return nil
}

// CheckAddress returns an error wrapping ErrInvalidArgument when address is
// longer than MaxAddressBytes or not valid UTF-8.
func CheckAddress(field, address string) error {
	if len(address) > MaxAddressBytes {
		return LimitError(field, "bytes", len(address), MaxAddressBytes)
	}
	if !utf8.ValidString(address) {
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidArgument, field)
	}
	return nil
}

// CheckLimits returns an error wrapping ErrInvalidArgument naming the first
// limit r breaks: any payload (CheckPayload), address (CheckAddress), the
// source type, the number of dependencies, or the whole record's size.
func CheckLimits(r *Record) error {
	if n := len(r.SourceType); n > MaxSourceTypeBytes {
		return LimitError("source type", "bytes", n, MaxSourceTypeBytes)
	}
	if !utf8.ValidString(r.SourceType) {
		return fmt.Errorf("%w: source type is not valid UTF-8", ErrInvalidArgument)
	}
	if n := len(r.Dependencies); n > MaxDependencies {
		return LimitError("dependencies", "entries", n, MaxDependencies)
	}
	if n := len(r.SourceBranch); n > MaxIDLength {
		return LimitError("source branch", "bytes", n, MaxIDLength)
	}
	if bp := r.BranchPoint; bp != nil {
		if err := CheckAddress("branch point address", bp.Address); err != nil {
			return err
		}
	}
	for _, c := range Concerns {
		v := r.Value(c)
		if v == nil {
			continue
		}
		if ref, ok := v.Ref(); ok && (c == Head || c == Index) {
			if err := CheckAddress(c.String()+" address", ref.Address); err != nil {
				return err
			}
		}
		if err := CheckPayload(c.String()+" payload", v.Payload); err != nil {
			return err
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("%w: record %s: %v", ErrInvalidArgument, r.ID, err)
	}
	if len(b) > MaxRecordBytes {
		return LimitError("record "+r.ID.String(), "bytes of JSON", len(b), MaxRecordBytes)
	}
	return nil
}

// depth returns the nesting depth of v at level d, stopping once it is over
// MaxPayloadDepth so that a hostile value costs no more than the limit.
func depth(v any, d int) int {
	switch v.(type) {
	case map[string]any, Object, []any:
	default:
		return d - 1 // a scalar adds no level
	}
	if d > MaxPayloadDepth {
		return d
	}
	m := d - 1
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			m = max(m, depth(e, d+1))
		}
	case Object:
		for _, e := range x {
			m = max(m, depth(e, d+1))
		}
	case []any:
		for _, e := range x {
			m = max(m, depth(e, d+1))
		}
	}
	return max(m, d)
}

// invalidUTF8 returns the first key or string in v that is not valid UTF-8.
func invalidUTF8(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, utf8.ValidString(x)
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) {
				return k, false
			}
			if s, ok := invalidUTF8(e); !ok {
				return s, false
			}
		}
	case Object:
		return invalidUTF8(map[string]any(x))
	case []any:
		for _, e := range x {
			if s, ok := invalidUTF8(e); !ok {
				return s, false
			}
		}
	}
	return "", true
}
