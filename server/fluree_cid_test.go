package server_test

import (
	"testing"

	"nameservice.dev/nameservice/internal/cid"
)

// The content IDs Fluree's wire carries: canonical base32 CIDv1 only.
func TestCheckCID(t *testing.T) {
	good := "bafyreibnoelefnzgwbcacyt4vh52ymxvzbjq7mmqhtcnwarfq4lzegsiqe"
	if err := cid.Parse(good); err != nil {
		t.Fatalf("cid.Parse(%s): %v", good, err)
	}
	for _, bad := range []string{"", "b", "Qmfoo", "bafy", good[:len(good)-2], good + "a", "B" + good[1:], "fluree:file://x"} {
		if cid.Parse(bad) == nil {
			t.Errorf("cid.Parse(%q) accepted", bad)
		}
	}
}
