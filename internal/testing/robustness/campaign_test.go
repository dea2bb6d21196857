package robustness

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// The campaigns (TestFaults*, TestReplicated*) run NS_ROBUSTNESS_RUNS runs
// each (default 1), one after the other, each a subtest named after its
// seed. NS_ROBUSTNESS_SEED=N seeds the first run with N and the next ones
// with N+1, N+2...; unset or "random", every campaign draws fresh seeds. A
// failure is replayed with its seed:
//
//	NS_ROBUSTNESS_RUNS=200 NS_ROBUSTNESS_SEED=random go test -timeout 0 -run TestFaultsDynamoDB ./internal/testing/robustness/
//	NS_ROBUSTNESS_SEED=1234 go test -run 'TestFaultsDynamoDB/seed=1234$' ./internal/testing/robustness/
const (
	runsEnv = "NS_ROBUSTNESS_RUNS"
	seedEnv = "NS_ROBUSTNESS_SEED"
)

// campaign runs run once per seed of the campaign, each as a subtest
// "seed=N", and logs the seed and how to replay it.
func campaign(t *testing.T, run func(t *testing.T, seed uint64)) {
	t.Helper()
	runs, first := campaignSeeds(t)
	for i := range uint64(runs) {
		seed := first + i
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("seed %d; replay: %s=%d go test -run '%s$' ./internal/testing/robustness/", seed, seedEnv, seed, t.Name())
			run(t, seed)
		})
	}
}

// campaignSeeds reads the number of runs and the first seed from the
// environment.
func campaignSeeds(t *testing.T) (runs int, first uint64) {
	t.Helper()
	runs = 1
	if s := os.Getenv(runsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q is not a positive number", runsEnv, s)
		}
		runs = n
	}
	switch s := os.Getenv(seedEnv); s {
	case "", "random":
		var b [4]byte
		_, _ = rand.Read(b[:])
		first = uint64(binary.LittleEndian.Uint32(b[:])) // short enough to type
	default:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q is neither a number nor \"random\"", seedEnv, s)
		}
		first = n
	}
	return runs, first
}
