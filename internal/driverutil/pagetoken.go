package driverutil

import (
	"encoding/base64"
	"fmt"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/model"
)

// EncodePageToken returns the token of a page that ended at after: that
// string, base64url-encoded so callers treat it as opaque. It is the page
// token of every driver whose pages resume after the last ID (or key)
// returned; the HTTP API seals its own (package server).
func EncodePageToken(after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(after))
}

// DecodePageToken returns the position a token resumes after: "" for the
// empty token. A token that does not decode, or is not in the one form
// EncodePageToken gives, is an error wrapping model.ErrInvalidArgument.
func DecodePageToken(tok string) (string, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(tok)
	// The decoder skips line breaks: only EncodePageToken's own form is a token.
	if err != nil || EncodePageToken(string(b)) != tok {
		return "", fmt.Errorf("%w: malformed page token", model.ErrInvalidArgument)
	}
	return string(b), nil
}

// PageStart returns where the page opts asks for begins (its token decoded,
// as DecodePageToken) and how many entries it may hold (opts.PageSize, or
// def when that is not positive).
func PageStart(opts driver.ListOptions, def int) (after string, size int, err error) {
	after, err = DecodePageToken(opts.PageToken)
	return after, Positive(opts.PageSize, def), err
}

// PageStart returns where the page opts asks for begins (DecodePageToken)
// and how many entries it may hold (opts.PageSize, or def).
// DecodePageToken returns the position a token resumes after ("" for the
// empty token), or an error wrapping model.ErrInvalidArgument for one not
// EncodePageToken returns the token of a page that ended at after, opaque
// (base64url): the page token of every driver whose pages resume after the
// last ID or key returned.