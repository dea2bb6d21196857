package driverutil

import (
	"encoding/base64"
	"fmt"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// EncodePageToken returns the token of a page that ended at after, opaque
// (base64url): the page token of every driver whose pages resume after the
// last ID or key returned (the HTTP API seals its own).
func EncodePageToken(after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(after))
}

// DecodePageToken returns the position a token resumes after ("" for the
// empty token), or an error wrapping model.ErrInvalidArgument for one not
// in EncodePageToken's form.
func DecodePageToken(tok string) (string, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(tok)
	// The decoder skips line breaks: only EncodePageToken's own form is a token.
	if err != nil || EncodePageToken(string(b)) != tok {
		return "", fmt.Errorf("%w: malformed page token", model.ErrInvalidArgument)
	}
	return string(b), nil
}

// PageStart returns where the page opts asks for begins (DecodePageToken)
// and how many entries it may hold (opts.PageSize, or def).
func PageStart(opts driver.ListOptions, def int) (after string, size int, err error) {
	after, err = DecodePageToken(opts.PageToken)
	return after, Positive(opts.PageSize, def), err
}
