package conformance

import "testing"

// Run runs the whole suite against the stores h makes.
func Run(t *testing.T, h Harness) {
	t.Helper()
	runAll(t, h)
}
