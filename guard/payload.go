package guard

import (
	"errors"
	"unicode/utf8"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/cid"
)

// CheckPayload returns an error wrapping ErrInvalidArgument, naming field,
// when p nests deeper than MaxPayloadDepth, encodes to more than
// MaxPayloadBytes, or holds a string or key that is not valid UTF-8 (which
// JSON encoding would silently rewrite).
func CheckPayload(field string, p driver.Object) error {
	if p == nil {
		return nil
	}
	if d := depth(map[string]any(p), 1); d > MaxPayloadDepth {
		return invalid("%s nests more than %d levels deep, over the limit of %d", field, MaxPayloadDepth, MaxPayloadDepth)
	}
	if s, ok := invalidUTF8(map[string]any(p)); !ok {
		return invalid("%s holds a string that is not valid UTF-8: %q", field, driver.Clip(s, 40))
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
	case map[string]any, driver.Object, []any:
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
	case driver.Object:
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
	case driver.Object:
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

// errorsIsNotCID reports whether err says its text is no content ID.
func errorsIsNotCID(err error) bool { return errors.Is(err, cid.ErrNotCID) }
