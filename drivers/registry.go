// Package drivers maps URL schemes to driver openers. Each driver package
// registers its scheme in an init function; importing the driver (or
// drivers/all) makes its URLs openable with Open.
package drivers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"nameservice.dev/nameservice/driver"
)

// Opener opens a driver for a parsed URL whose scheme it registered. It
// returns an error wrapping driver.ErrInvalidArgument for a malformed URL; its
// errors must not contain the URL's credentials.
type Opener func(ctx context.Context, u *url.URL) (driver.Driver, error)

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
	s := make([]string, 0, len(openers))
	for k := range openers {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}

// Open parses rawURL and opens it with the opener registered for its scheme.
// It returns an error wrapping driver.ErrInvalidArgument when rawURL does not
// parse or has no scheme, and one wrapping driver.ErrUnsupported, listing the
// registered schemes, when no driver handles the scheme. No error it returns
// contains a password or secret query value of rawURL.
func Open(ctx context.Context, rawURL string) (driver.Driver, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the whole URL, credentials included
		}
		return nil, fmt.Errorf("%w: nameservice URL does not parse: %v", driver.ErrInvalidArgument, err)
	}
	if u.Scheme == "" {
		return nil, fmt.Errorf("%w: nameservice URL %q has no scheme (registered: %s)",
			driver.ErrInvalidArgument, Redact(u), strings.Join(Schemes(), ", "))
	}
	mu.RLock()
	opener := openers[strings.ToLower(u.Scheme)]
	mu.RUnlock()
	if opener == nil {
		return nil, fmt.Errorf("%w: no driver for scheme %q in %q (registered: %s; import the driver package or nameservice.dev/nameservice/drivers/all)",
			driver.ErrUnsupported, u.Scheme, Redact(u), strings.Join(Schemes(), ", "))
	}
	return opener(ctx, u)
}

// secretWords mark query parameters whose values Redact hides.
var secretWords = []string{"secret", "password", "passwd", "token", "key", "credential", "signature", "session", "auth"}

// Redact returns u as a string with its password and every query value whose
// name suggests a secret replaced by "REDACTED", for use in messages.
func Redact(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, has := c.User.Password(); has {
			c.User = url.UserPassword(c.User.Username(), "REDACTED")
		}
	}
	q := c.Query()
	changed := false
	for k := range q {
		lk := strings.ToLower(k)
		for _, w := range secretWords {
			if strings.Contains(lk, w) {
				q[k] = []string{"REDACTED"}
				changed = true
				break
			}
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	return c.String()
}
