package conformance

import "testing"

func runAll(t *testing.T, h Harness) {}
