package drivers_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice/drivers"
	_ "nameservice.dev/nameservice/drivers/all"
	"nameservice.dev/nameservice/model"
)

// noNetwork makes the SDKs fail fast instead of looking for credentials on
// the network (instance metadata) while a URL is opened.
func noNetwork(tb interface{ Setenv(k, v string) }) {
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_MAX_ATTEMPTS": "1",
		"GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent/credentials.json", "GCE_METADATA_HOST": "127.0.0.1:1",
	} {
		tb.Setenv(k, v)
	}
}

// openQuickly opens raw with every driver registered, bounded by a short
// context, and closes what opened. With read, a driver that opened is asked
// for a record, and that error is returned.
func openQuickly(raw string, read bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	d, err := drivers.Open(ctx, raw)
	if err != nil {
		return err
	}
	defer d.Close()
	if read {
		_, err = d.Get(ctx, model.ID{Name: "a", Branch: "main"})
	}
	return err
}

// TestOpenErrorsHoldNoSecret: the URLs of issue 14, item 3, whose secrets
// used to reach the message through a wrapped error. No error in the chain
// may hold one.
func TestOpenErrorsHoldNoSecret(t *testing.T) {
	noNetwork(t)
	for raw, secrets := range map[string][]string{
		"docstore+dynamodb://tbl?password=PWxyz1&token=TOKxyz2":                {"PWxyz1", "TOKxyz2"},
		"docstore+mem://coll?secret_key=SKxyz3":                                {"SKxyz3"},
		"s3://b/p?endpoint=http://u:PWxyz4@127.0.0.1:1":                        {"PWxyz4"},
		"docstore+dynamodb://tbl?endpoint=http://u:PWxyz5@127.0.0.1:1":         {"PWxyz5"},
		"dynamodb://table?endpoint=http://u:PWxyz6@127.0.0.1:1&timeout=100ms":  {"PWxyz6"},
		"gs://b/p?private_key_path=/secret/PKxyz7.json":                        {"PKxyz7"},
		"azblob://c/p?endpoint=http://u:PWxyz8@127.0.0.1:1":                    {"PWxyz8"},
		"file:///nonexistent/x?layout=zz&access_key=AKxyz10":                   {"AKxyz10"},
		"s3://u:PWxyz11@b/p?endpoint=" + url.QueryEscape("http://v:PWxyz12@h"): {"PWxyz11", "PWxyz12"},
	} {
		err := openQuickly(raw, true)
		if err == nil {
			t.Errorf("Open(%q) and a read succeeded, want an error", raw)
			continue
		}
		for e := err; e != nil; e = errors.Unwrap(e) {
			for _, s := range secrets {
				if strings.Contains(e.Error(), s) {
					t.Errorf("Open(%q): an error in the chain holds the secret %q: %v", raw, s, e)
				}
			}
		}
	}
}

// TestMalformedEndpointIsInvalidAtOpen: an endpoint that is no URL (here a
// host with an unclosed bracket, after a password) is an invalid argument
// at Open, before any request, and no error in the chain holds the
// password (the SDK's parse error repeats the whole endpoint).
func TestMalformedEndpointIsInvalidAtOpen(t *testing.T) {
	noNetwork(t)
	for _, raw := range []string{
		"s3://b/p?endpoint=http://u:PWxyz20@[::1",
		"dynamodb://table?endpoint=http://u:PWxyz20@[::1",
		"docstore+dynamodb://table?endpoint=http://u:PWxyz20@[::1",
		"s3://b/p?lock=" + url.QueryEscape("dynamodb://locks?endpoint=http://u:PWxyz20@[::1"),
		"s3://b/p?endpoint=ftp://host",
		"dynamodb://table?endpoint=http://",
	} {
		err := openQuickly(raw, false)
		if !errors.Is(err, model.ErrInvalidArgument) || !strings.Contains(err.Error(), "endpoint") {
			t.Errorf("Open(%q): %v, want an invalid argument naming the endpoint", raw, err)
		}
		for e := err; e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), "PWxyz20") {
				t.Errorf("Open(%q): an error in the chain holds the password: %v", raw, e)
			}
		}
	}
}

// TestMissingAWSCredentialsAreLasting: with no credentials anywhere in the
// SDK's chain, Open of every AWS-backed URL fails at once with a lasting
// ErrPermissionDenied that says where credentials come from, not with a
// retryable ErrUnavailable at the first request.
func TestMissingAWSCredentialsAreLasting(t *testing.T) {
	noNetwork(t)
	dir := t.TempDir()
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_SHARED_CREDENTIALS_FILE": dir + "/credentials", "AWS_CONFIG_FILE": dir + "/config", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": ""} {
		t.Setenv(k, v)
	}
	for _, raw := range []string{
		"s3://b/p?endpoint=http://127.0.0.1:1",
		"dynamodb://table?endpoint=http://127.0.0.1:1",
		"docstore+dynamodb://table?endpoint=http://127.0.0.1:1",
	} {
		err := openQuickly(raw, true)
		if !errors.Is(err, model.ErrPermissionDenied) || errors.Is(err, model.ErrUnavailable) ||
			!strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
			t.Errorf("Open(%q) with no credentials: %v, want a permission denied saying where credentials come from", raw, err)
		}
	}
}

// TestRepeatedParameterIsRefused: a parameter given twice is an error naming
// it, not a silent choice of one value (issue 14, item 6).
func TestRepeatedParameterIsRefused(t *testing.T) {
	for _, raw := range []string{"file:///tmp/x?layout=b&layout=c", "mem://x?a=1&a=1", "dynamodb://table?region=a&region=b"} {
		err := openQuickly(raw, false)
		if !errors.Is(err, model.ErrInvalidArgument) || !strings.Contains(err.Error(), "twice") && !strings.Contains(err.Error(), "2 times") {
			t.Errorf("Open(%q) = %v, want ErrInvalidArgument naming the repeated parameter", raw, err)
		}
	}
}

// FuzzOpenSecrets opens arbitrary URLs with every driver registered: no
// error may hold a secret value of the input (see drivers.Secrets), at any
// depth of its chain, and no open may panic or hang.
func FuzzOpenSecrets(f *testing.F) {
	noNetwork(f)
	for _, s := range drivers.Schemes() {
		f.Add(s + "://tbl/p?password=PWxyz&token=TOKxyz&endpoint=http://u:EPxyz@127.0.0.1:1")
		f.Add(s + "://u:PWxyz@bucket/p?secret_key=SKxyz&layout=q")
	}
	f.Add("gs://b/p?private_key_path=/secret/PKxyz.json")
	f.Fuzz(func(t *testing.T, raw string) {
		if len(raw) > 4096 {
			return
		}
		if u, err := url.Parse(raw); err == nil && strings.EqualFold(u.Scheme, "file") && u.Path != "" && !strings.HasPrefix(u.Path, "/nonexistent") {
			return // fs writes nothing on open, but keep the fuzzer away from real directories
		}
		err := openQuickly(raw, false)
		if err == nil {
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil {
			return
		}
		// A secret that the redacted URL shows anyway (it is also part of
		// the host, say) cannot be told apart in a message: skip it.
		shown := strings.ReplaceAll(drivers.Redact(u), "REDACTED", "")
		for e := err; e != nil; e = errors.Unwrap(e) {
			msg := strings.ReplaceAll(e.Error(), "REDACTED", "")
			for _, s := range drivers.Secrets(u) {
				if len(s) >= 4 && !strings.Contains("REDACTED", s) && !strings.Contains(shown, s) && strings.Contains(msg, s) {
					t.Fatalf("Open(%q): error holds the secret %q: %v", raw, s, e)
				}
			}
		}
	})
}
