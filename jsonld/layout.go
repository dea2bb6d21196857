package jsonld

import (
	"fmt"
	"strings"

	"nameservice.dev/nameservice/internal/text"
	"nameservice.dev/nameservice/model"
)

// Layout is how a file-based driver (fs, s3etag, blob) splits a record into
// files, one of LayoutB and LayoutC. Every client of one directory or
// bucket must use the same layout.
type Layout int

// The layouts of the ns@v2 file format.
const (
	// LayoutB: {branch}.json holds identity, head, status and config;
	// {branch}.index.json holds the index. Fluree's own layout, the default.
	LayoutB Layout = iota
	// LayoutC: one file per concern, {branch}.head.json, .index.json,
	// .status.json and .config.json.
	LayoutC
)

// ParseLayout returns the layout named s: "b" (or "") or "c", in either
// case. It returns an error wrapping model.ErrInvalidArgument otherwise.
func ParseLayout(s string) (Layout, error) {
	switch strings.ToLower(s) {
	case "", "b":
		return LayoutB, nil
	case "c":
		return LayoutC, nil
	}
	return 0, fmt.Errorf("%w: unknown layout %q (want b or c)", model.ErrInvalidArgument, text.Clip(s, 64))
}

// String returns "b" or "c" ("layout(N)" for a value that is neither).
func (l Layout) String() string {
	if l.Valid() != nil {
		return fmt.Sprintf("layout(%d)", int(l))
	}
	return [...]string{"b", "c"}[l]
}

// Valid returns an error wrapping model.ErrInvalidArgument when l is not LayoutB
// or LayoutC.
func (l Layout) Valid() error {
	if l != LayoutB && l != LayoutC {
		return fmt.Errorf("%w: unknown layout %d", model.ErrInvalidArgument, int(l))
	}
	return nil
}
