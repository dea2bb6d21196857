package guard

import (
	"iter"
	"maps"
	"slices"

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
	var elems iter.Seq[any]
	switch x := v.(type) {
	case map[string]any:
		elems = maps.Values(x)
	case model.Object:
		elems = maps.Values(x)
	case []any:
		elems = slices.Values(x)
	default:
		return d - 1 // a scalar adds no level
	}
	if d > MaxPayloadDepth {
		return d
	}
	m := d
	for e := range elems {
		m = max(m, depth(e, d+1))
	}
	return m
}
