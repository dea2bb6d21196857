package objstore

import (
	"cmp"
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
// absent), and an error wrapping model.ErrInvalidArgument for a bad one.
func ParseFileParams(q url.Values) (FileOptions, error) {
	l, errL := jsonld.ParseLayout(q.Get("layout"))
	_, errD := jsonld.ParseDialect(q.Get("dialect"))
	n, errN := ParseListParallel(q.Get("list_parallel"))
	return FileOptions{Layout: l, Dialect: jsonld.Dialect(q.Get("dialect")), ListParallel: n}, cmp.Or(errL, errD, errN)
}

// NewConfig checks o and returns the Config of a driver called name, or an
// error wrapping model.ErrInvalidArgument.
func NewConfig(name string, o FileOptions) (Config, error) {
	dialect, err := jsonld.ParseDialect(string(o.Dialect))
	if err = cmp.Or(o.Layout.Valid(), err); err != nil {
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
