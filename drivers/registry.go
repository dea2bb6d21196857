// Package drivers maps URL schemes to driver openers. Each driver package
// registers its scheme in an init function; importing the driver (or
// drivers/all) makes its URLs openable with Open.
//
// Every driver package under drivers/ has the same shape, as gocloud.dev's
// blob drivers do: Scheme (or one constant per scheme it registers), a
// Config of every option, Open(ctx, Config) (*Driver, error),
// ParseURL(*url.URL) (Config, error), and the opener Opens(ParseURL, Open)
// registered. A package may add a constructor over a client the caller
// already holds (docstore.OpenCollection, mem.NewStore, ...); a driver
// whose backend needs resources created first implements
// driver.Provisioner.
package drivers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/text"
	"nameservice.dev/nameservice/model"
)

// Opener opens a driver for a parsed URL whose scheme it registered. It
// returns an error wrapping model.ErrInvalidArgument for a malformed URL; its
// errors must not contain the URL's credentials.
type Opener func(ctx context.Context, u *url.URL) (driver.Driver, error)

// Opens returns the Opener of a driver package of the common shape (see
// the package doc): parse the URL into the package's Config, then open it.
// Every built-in driver registers its schemes with it, so that opening by
// URL and opening by Config can never disagree.
func Opens[C any, D driver.Driver](parse func(*url.URL) (C, error), open func(context.Context, C) (D, error)) Opener {
	return func(ctx context.Context, u *url.URL) (driver.Driver, error) {
		cfg, err := parse(u)
		if err != nil {
			return nil, err
		}
		d, err := open(ctx, cfg)
		if err != nil {
			return nil, err // not a nil *Driver in a non-nil interface
		}
		return d, nil
	}
}

var (
	mu      sync.RWMutex
	openers = map[string]Opener{}
)

// Register makes opener handle URLs of scheme (matched case-insensitively).
// It panics when scheme is empty or already registered: that is a programming
// error in the process's set of drivers.
func Register(scheme string, opener Opener) {
	s := strings.ToLower(scheme)
	mu.Lock()
	defer mu.Unlock()
	if s == "" || opener == nil {
		panic("drivers: Register needs a scheme and an opener")
	}
	if _, dup := openers[s]; dup {
		panic(fmt.Sprintf("drivers: scheme %q registered twice", s))
	}
	openers[s] = opener
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Sorted(maps.Keys(openers))
}

// Open parses rawURL and opens it with the opener registered for its scheme.
// It returns an error wrapping model.ErrInvalidArgument when rawURL does not
// parse or has no scheme, and one wrapping model.ErrUnsupported, listing the
// registered schemes, when no driver handles the scheme, and one wrapping
// model.ErrInvalidArgument when a query parameter is given twice. No error
// it returns, wrapped ones included, contains a secret of rawURL (see
// Secrets): the opener's error is scrubbed of them.
func Open(ctx context.Context, rawURL string) (driver.Driver, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // url.Error repeats the whole URL, credentials included
		}
		return nil, fmt.Errorf("%w: nameservice URL does not parse: %v", model.ErrInvalidArgument, err)
	}
	if u.Scheme == "" {
		return nil, fmt.Errorf("%w: nameservice URL %q has no scheme (registered: %s)",
			model.ErrInvalidArgument, Redact(u), strings.Join(Schemes(), ", "))
	}
	mu.RLock()
	opener := openers[strings.ToLower(u.Scheme)]
	mu.RUnlock()
	if opener == nil {
		return nil, fmt.Errorf("%w: no driver for scheme %q in %q (registered: %s; import the driver package or nameservice.dev/nameservice/drivers/all)",
			model.ErrUnsupported, u.Scheme, Redact(u), strings.Join(Schemes(), ", "))
	}
	// A query that does not parse or names a parameter twice is refused:
	// every driver would otherwise take one of the values and drop the other.
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("%w: nameservice URL %q: query does not parse", model.ErrInvalidArgument, Redact(u))
	}
	for k, v := range q {
		if len(v) > 1 {
			return nil, fmt.Errorf("%w: nameservice URL %q gives the parameter %q %d times; give it once",
				model.ErrInvalidArgument, Redact(u), text.Clip(k, 64), len(v))
		}
	}
	d, err := opener(ctx, u)
	if err != nil {
		return nil, Scrub(err, Secrets(u)...)
	}
	return d, nil
}

// BadURL returns the error with which the driver called name refuses u:
// it wraps model.ErrInvalidArgument and shows u with its secrets redacted.
func BadURL(name string, u *url.URL, format string, args ...any) error {
	return fmt.Errorf("%s: %w: URL %q: %s", name, model.ErrInvalidArgument, Redact(u), fmt.Sprintf(format, args...))
}

// Secrets returns every secret value u holds: its password, the value of
// each query parameter whose name suggests a secret (see Redact), and the
// same, recursively, of every query value that is itself a URL (an
// endpoint=http://user:password@host).
func Secrets(u *url.URL) []string {
	var out []string
	if u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p)
		}
	}
	for k, vs := range u.Query() {
		for _, v := range vs {
			if v == "" {
				continue
			}
			if secretName(k) {
				out = append(out, v)
			} else if inner, err := url.Parse(v); err == nil && inner.Scheme != "" {
				out = append(out, Secrets(inner)...)
			} else if ui, ok := unparsedUserinfo(v); ok {
				out = append(out, ui)
			}
		}
	}
	return out
}

// Scrub returns err with every secret replaced by "REDACTED" in its
// message, in each of the forms a URL may spell it (as is, query- and
// path-escaped). The result matches the same sentinels as err with
// errors.Is, but does not unwrap to err: the errors inside may repeat a
// secret, and a caller printing one of them must not see it. With no
// secrets, err is returned as is.
func Scrub(err error, secrets ...string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	var forms []string
	for _, s := range secrets {
		forms = append(forms, s, url.QueryEscape(s), url.PathEscape(s), url.QueryEscape(url.QueryEscape(s)))
	}
	// Longest first, so that a secret inside another is not left half hidden.
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	msg := err.Error()
	for _, f := range forms {
		if f != "" {
			msg = strings.ReplaceAll(msg, f, "REDACTED")
		}
	}
	return &scrubbedError{msg: msg, err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }

// Is reports whether the scrubbed error matches target, as the original did.
func (e *scrubbedError) Is(target error) bool { return errors.Is(e.err, target) }

// secretWords mark query parameters whose values Redact hides, but for
// names ending in "_file", which hold paths, and docstore's field names.
var secretWords = []string{"secret", "password", "passwd", "pwd", "token", "key", "credential", "signature", "session", "auth", "sig"}

// Redact returns u as a string with its password, every query value whose
// name suggests a secret, and the password of a query value that is itself a
// URL replaced by "REDACTED", for use in messages.
func Redact(u *url.URL) string {
	c := *u
	// A nameservice URL has no use for a fragment, and a pasted one may
	// repeat a secret: it is never shown.
	c.Fragment, c.RawFragment = "", ""
	if c.User != nil {
		if _, has := c.User.Password(); has {
			c.User = url.UserPassword(c.User.Username(), "REDACTED")
		}
	}
	q := c.Query()
	changed := false
	for k, vs := range q {
		for i, v := range vs {
			if secretName(k) {
				vs[i], changed = "REDACTED", true
			} else if inner, err := url.Parse(v); err == nil && inner.Scheme != "" && len(Secrets(inner)) > 0 {
				vs[i], changed = Redact(inner), true
			} else if ui, ok := unparsedUserinfo(v); ok {
				vs[i], changed = strings.Replace(v, ui, "REDACTED", 1), true
			}
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return c.String()
}

func secretName(k string) bool {
	lk := strings.ToLower(k)
	if strings.HasSuffix(lk, "_file") || lk == "partition_key" || lk == "sort_key" {
		// token_file, ca_file: the path of a file, not its contents (shown,
		// a command a message names, ns check's cleanup, works when
		// pasted); docstore's partition_key and sort_key name fields.
		return false
	}
	return slices.ContainsFunc(secretWords, func(w string) bool { return strings.Contains(lk, w) })
}

// unparsedUserinfo returns the user:password part of v, a URL that does not
// parse (so url.URL cannot tell its parts), when it seems to have one: the
// text between "://" and the last "@" before the path.
func unparsedUserinfo(v string) (string, bool) {
	if _, err := url.Parse(v); err == nil {
		return "", false
	}
	_, rest, ok := strings.Cut(v, "://")
	if !ok {
		return "", false
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	at := strings.LastIndexByte(rest, '@')
	if at <= 0 {
		return "", false
	}
	return rest[:at], true
}
