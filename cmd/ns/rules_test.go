package main

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/guard"
)

// TestCLIKeepsTheRules: the CLI writes through the NameService: a 30-deep
// config, a watermark at 2^63-1, a content ID Fluree cannot read and a lone
// surrogate are usage errors (exit 2) naming the rule, and nothing is
// written.
func TestCLIKeepsTheRules(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "db")
	ns, err := nameservice.Open(context.Background(), c.url)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	top := nameservice.StatusValue(guard.MaxWatermark, "ready", nil)
	if _, err := ns.PushStatus(context.Background(), "db", nameservice.StatusValue(1, "ready", nil), top); err != nil {
		t.Fatal(err)
	}
	before := c.want(exitOK, "lookup", "db", "--json")
	sum := sha256.Sum256([]byte("x"))
	nonMinimal := "b" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(append([]byte{0x81, 0, 0x71, 0x12, 0x20}, sum[:]...)))
	deep := strings.Repeat(`{"a":`, 29) + `{}` + strings.Repeat(`}`, 29)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"push-config", "db", deep, "--expect-v", "0"}, "limit of 20"},
		{[]string{"push-status", "db", "x", "--expect-v", "9223372036854775806"}, "status_v"},
		{[]string{"publish-commit", "db", "1", nonMinimal}, "shortest form"},
		{[]string{"push-status", "db", "x", "--expect-v", "9223372036854775806", "--meta", `{"n":"\udcff"}`}, `\udcff`},
		{[]string{"create-graph-source", "gs", "--type", "db:Bm25Index", "--config", deep}, "limit of 20"},
	} {
		code, out, errs := c.run(tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("ns %s: exit %d, stderr %q, stdout %q; want exit %d naming %q", strings.Join(tc.args, " ")[:min(60, len(strings.Join(tc.args, " ")))],
				code, errs, out, exitUsage, tc.want)
		}
	}
	if got := c.want(exitOK, "lookup", "db", "--json"); got != before {
		t.Errorf("a refused write changed the record:\n%s\n%s", before, got)
	}
	c.want(exitNotFound, "lookup", "gs")
}
