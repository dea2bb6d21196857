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

// Start returns where the page opts asks for begins (its token decoded, as
// Decode) and how many entries it may hold (opts.PageSize, or def when that
// is not positive).
func Start(opts driver.ListOptions, def int) (after string, size int, err error) {
	if after, err = Decode(opts.PageToken); err != nil {
		return "", 0, err
	}
	if size = opts.PageSize; size <= 0 {
		size = def
	}
	return after, size, nil
}
