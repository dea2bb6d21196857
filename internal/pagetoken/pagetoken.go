// Package pagetoken is the one page-token codec of the drivers whose pages
// resume after the last ID (or key) returned: the token is that string,
// base64url-encoded so callers treat it as opaque.
package pagetoken

import (
	"encoding/base64"
	"fmt"

	"nameservice.dev/nameservice/driver"
)

// Encode returns the token of a page that ended at after.
func Encode(after string) string { return base64.RawURLEncoding.EncodeToString([]byte(after)) }

// Decode returns the position a token resumes after: "" for the empty token.
// A token that does not decode, or is not in the one form Encode gives, is
// an error wrapping driver.ErrInvalidArgument.
func Decode(tok string) (string, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(tok)
	// The decoder skips line breaks: only Encode's own form is a token.
	if err != nil || Encode(string(b)) != tok {
		return "", fmt.Errorf("%w: malformed page token", driver.ErrInvalidArgument)
	}
	return string(b), nil
}
