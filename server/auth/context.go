package auth

import "context"

type principalKey struct{}

// NewContext returns ctx carrying p, the principal of the request ctx
// belongs to. The server sets it once it has authenticated a request;
// every handler behind the authentication finds it there.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal NewContext put in ctx, or nil: a
// request the server did not authenticate (a probe, the console's login).
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
