package remote_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/mem"
	"nameservice.dev/nameservice/model"
	"nameservice.dev/nameservice/server"
	"nameservice.dev/nameservice/server/auth"
)

// TestTokenFromEnvironmentIsTrimmed: $NAMESERVICE_TOKEN with a trailing
// newline (a secret mounted into the environment keeps its file's) is the
// token, as a token_file's contents are; a token holding a character no
// header can carry is refused when the URL is opened, without repeating it,
// rather than failing every request as "unavailable".
func TestTokenFromEnvironmentIsTrimmed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	authn, err := auth.NewAuthenticator(auth.Config{Tokens: []auth.TokenEntry{
		{Name: "t1-writer", SHA256: auth.HashToken("secret-t1"), Read: []string{"t1/"}, Write: []string{"t1/"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	backend := mem.NewStore().Open()
	direct := nameservice.New(backend)
	if err := direct.Init(ctx, "t1/db"); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.PublishCommit(ctx, "t1/db", 3, "c3"); err != nil {
		t.Fatal(err)
	}
	s := serve(t, backend, server.Options{Auth: authn})
	t.Setenv("NAMESERVICE_TOKEN", "secret-t1\n")
	ns, err := nameservice.Open(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	if rec, err := ns.Lookup(ctx, "t1/db"); err != nil || rec.Head.V != 3 {
		t.Fatalf("lookup with $NAMESERVICE_TOKEN ending in a newline: %v, %v", rec, err)
	}
	t.Setenv("NAMESERVICE_TOKEN", "secret\x01t1")
	_, err = nameservice.Open(ctx, s.URL)
	if !errors.Is(err, model.ErrInvalidArgument) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a token with a control character: %v, want an invalid argument that does not repeat it", err)
	}
}
