package guard

import (
	"errors"

	"nameservice.dev/nameservice/internal/cid"
	"nameservice.dev/nameservice/internal/jsonx"
	"nameservice.dev/nameservice/internal/text"
	"nameservice.dev/nameservice/model"
)

// CheckPayload returns an error wrapping ErrInvalidArgument, naming field,
// when p nests deeper than MaxPayloadDepth, encodes to more than
// MaxPayloadBytes, or holds a string or key that is not valid UTF-8 (which
// JSON encoding would silently rewrite).
func CheckPayload(field string, p model.Object) error {
	if p == nil {
		return nil
	}
	if d := depth(map[string]any(p), 1); d > MaxPayloadDepth {
		return invalid("%s nests more than %d levels deep, over the limit of %d", field, MaxPayloadDepth, MaxPayloadDepth)
	}
	if s, ok := jsonx.InvalidUTF8(map[string]any(p)); !ok {
		return invalid("%s holds a string that is not valid UTF-8: %q", field, text.Clip(s, 40))
	}
	b, err := p.MarshalJSON()
	if err != nil {
		return invalid("%s: %v", field, err)
	}
	if len(b) > MaxPayloadBytes {
		return limitError(field, "bytes of JSON", len(b), MaxPayloadBytes)
	}
	return nil
}

// depth returns the nesting depth of v at level d, stopping once it is over
// MaxPayloadDepth so that a hostile value costs no more than the limit.
func depth(v any, d int) int {
	switch v.(type) {
	case map[string]any, model.Object, []any:
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
	case model.Object:
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

// errorsIsNotCID reports whether err says its text is no content ID.
func errorsIsNotCID(err error) bool { return errors.Is(err, cid.ErrNotCID) }
