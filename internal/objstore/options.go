package objstore

import (
	"fmt"
	"net/url"
	"strings"

	"nameservice.dev/nameservice/jsonld"
)

// FileParams are the URL parameters every file-based driver takes.
var FileParams = []string{"layout", "dialect", "list_parallel"}

// FileOptions are the options every file-based driver takes.
type FileOptions struct {
	Layout       jsonld.Layout
	Dialect      jsonld.Dialect
	ListParallel int
}

// ParseFileParams returns the FileOptions q's FileParams give (zero when
// absent), or an error wrapping model.ErrInvalidArgument.
func ParseFileParams(q url.Values) (FileOptions, error) {
	var o FileOptions
	var err error
	if o.Layout, err = jsonld.ParseLayout(q.Get("layout")); err != nil {
		return FileOptions{}, err
	}
	o.Dialect = jsonld.Dialect(q.Get("dialect"))
	if _, err := jsonld.ParseDialect(string(o.Dialect)); err != nil {
		return FileOptions{}, err
	}
	if o.ListParallel, err = ParseListParallel(q.Get("list_parallel")); err != nil {
		return FileOptions{}, err
	}
	return o, nil
}

// NewConfig checks o and returns the Config of a driver called name, or an
// error wrapping model.ErrInvalidArgument.
func NewConfig(name string, o FileOptions) (Config, error) {
	if err := o.Layout.Valid(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	dialect, err := jsonld.ParseDialect(string(o.Dialect))
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	return Config{Name: name, Layout: o.Layout, Dialect: dialect, ListParallel: o.ListParallel}, nil
}

// KeyPrefix returns prefix as a key prefix: "" or "a/b/" (slashes at either
// end trimmed, one added).
func KeyPrefix(prefix string) string {
	p := strings.Trim(prefix, "/")
	if p == "" {
		return ""
	}
	return p + "/"
}
