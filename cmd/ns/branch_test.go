package main

import (
	"strings"
	"testing"
)

// TestBranchCommands runs ns branch create, list and drop and ns
// reset-head with their exit codes: 4 not found, 5 already exists, 3 a
// drop refused while branches exist (the error naming the count), 2 usage.
func TestBranchCommands(t *testing.T) {
	c := newCLI(t)
	c.want(exitOK, "init", "mydb")
	c.want(exitOK, "publish-commit", "mydb", "5", "c5")
	if out := c.want(exitOK, "branch", "create", "mydb:dev"); out != "created mydb:dev from main at commit_t 5\n" {
		t.Fatalf("create: %q", out)
	}
	c.want(exitExists, "branch", "create", "mydb:dev")
	c.want(exitNotFound, "branch", "create", "mydb:x", "--from", "nosuch")
	c.want(exitNotFound, "branch", "create", "other:dev")
	c.want(exitOK, "branch", "create", "mydb:old", "--at", "fluree:s3://b/c@2@2")
	if out := c.want(exitOK, "lookup", "mydb:old", "--json"); !strings.Contains(out, `"branch_point":{"address":"fluree:s3://b/c@2","t":2}`) {
		t.Fatalf("lookup of a branch created at a commit: %s", out)
	}
	c.want(exitOK, "branch", "create", "mydb:feature/x", "--from", "dev")
	for _, bad := range [][]string{
		{"branch", "create", "mydb:bad", "--at", "c9"}, {"branch", "create", "mydb:bad", "--at", "c0@0"},
		{"branch", "create", "mydb:v1@t:3"}, {"branch", "frob", "mydb"}, {"branch", "list", "mydb", "--from", "dev"},
		{"branch", "list", "mydb:dev"}, {"branch", "create"},
	} {
		c.want(exitUsage, bad...)
	}
	c.want(exitUsage, "branch", "create", "mydb:future", "--at", "c9@9") // beyond the source's head

	t.Setenv(outputEnv, "human")
	want := "BRANCH     SOURCE  COMMIT_T  BRANCHES  RETRACTED\n" +
		"dev        main    5         1         false\n" +
		"feature/x  dev     5         0         false\n" +
		"main       -       5         2         false\n" +
		"old        main    2         0         false\n"
	if out := c.want(exitOK, "branch", "list", "mydb"); out != want {
		t.Fatalf("list:\n%s\nwant:\n%s", out, want)
	}
	code, _, errs := c.run("branch", "drop", "mydb:dev")
	if code != exitNotApplied || !strings.Contains(errs, "has 1 branch") {
		t.Fatalf("drop of a branch with a branch: exit %d, stderr %q; want %d naming the count", code, errs, exitNotApplied)
	}
	c.want(exitOK, "branch", "drop", "mydb:feature/x")
	c.want(exitOK, "branch", "drop", "mydb:dev")
	c.want(exitNotFound, "branch", "drop", "mydb:dev")

	c.want(exitOK, "publish-index", "mydb", "4", "i4")
	if out := c.want(exitOK, "reset-head", "mydb", "--commit", "c2@2", "--index", "i1@1"); !strings.Contains(out, "head was v5") || !strings.Contains(out, "index was v4") {
		t.Fatalf("reset-head: %q", out)
	}
	if out := c.want(exitOK, "lookup", "mydb", "--json"); !strings.Contains(out, `"head":{"v":2,`) || !strings.Contains(out, `"index":{"v":1,`) {
		t.Fatalf("after reset-head: %s", out)
	}
	c.want(exitOK, "reset-head", "mydb", "--commit", "c1@1", "--no-index")
	if out := c.want(exitOK, "lookup", "mydb", "--json"); !strings.Contains(out, `"index":{"v":0}`) {
		t.Fatalf("after reset-head --no-index: %s", out)
	}
	c.want(exitUsage, "reset-head", "mydb")
	c.want(exitUsage, "reset-head", "mydb", "--commit", "c1@1", "--index", "i1@1", "--no-index")
	c.want(exitNotFound, "reset-head", "ghost", "--commit", "c1@1")
}
