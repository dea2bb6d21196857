package server

import "testing"

func TestCheckCID(t *testing.T) {
	good := "bafyreibnoelefnzgwbcacyt4vh52ymxvzbjq7mmqhtcnwarfq4lzegsiqe"
	if err := checkCID(good); err != nil {
		t.Fatalf("checkCID(%s): %v", good, err)
	}
	for _, bad := range []string{"", "b", "Qmfoo", "bafy", good[:len(good)-2], good + "a", "B" + good[1:], "fluree:file://x"} {
		if checkCID(bad) == nil {
			t.Errorf("checkCID(%q) accepted", bad)
		}
	}
}
