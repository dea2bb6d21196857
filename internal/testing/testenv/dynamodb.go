package testenv

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// DynamoDB2EndpointEnv names a second DynamoDB Local, which
// scripts/testservers.sh starts beside the first: DynamoDB Local runs every
// request to a database on one thread, which held the test processes that
// share one for minutes.
const DynamoDB2EndpointEnv = "NAMESERVICE_TEST_DYNAMODB2_ENDPOINT"

// DynamoDBEndpoint returns the DynamoDB Local this test process uses, the
// same for every call: when DynamoDB2EndpointEnv is set too, whichever of
// the two fewer live test processes use. A process that starts another (ns
// serve) passes it the endpoint it got here.
func DynamoDBEndpoint(t testing.TB) string {
	t.Helper()
	first := endpoint(t, DynamoDBEndpointEnv, "DynamoDB Local")
	if os.Getenv(DynamoDB2EndpointEnv) == "" {
		return first
	}
	second := endpoint(t, DynamoDB2EndpointEnv, "the second DynamoDB Local")
	dynamoOnce.Do(func() { dynamoChoice = leastUsed([]string{first, second}) })
	return dynamoChoice
}

var (
	dynamoOnce   sync.Once
	dynamoChoice string
)

// leastUsed returns the endpoint of servers that the fewest live processes
// chose, and records this process's choice: a file named after the
// server's index and this PID, in a directory of the servers' own.
func leastUsed(servers []string) string {
	dir := filepath.Dir(choiceFile(servers, 0, 0))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return servers[0]
	}
	unlock := lockDir(dir)
	defer unlock()
	users := make([]int, len(servers))
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		var i, pid int
		_, err := fmt.Sscanf(e.Name(), "%d-%d", &i, &pid) // see choiceFile
		switch {
		case err != nil || i >= len(servers):
		case alive(pid):
			users[i]++
		default:
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	best := slices.Index(users, slices.Min(users))
	_ = os.WriteFile(choiceFile(servers, best, os.Getpid()), nil, 0o644)
	return servers[best]
}

// choiceFile names the file that records process pid's choice of servers[index].
func choiceFile(servers []string, index, pid int) string {
	h := fnv.New32a()
	h.Write([]byte(strings.Join(servers, " ")))
	return filepath.Join(os.TempDir(), fmt.Sprintf("nameservice-test-servers-%08x", h.Sum32()), fmt.Sprintf("%d-%d", index, pid))
}

// alive reports whether process pid runs (on Windows, never: every process
// then takes the first server).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

// lockDir makes a lock file in dir, so that two processes choosing at once
// do not both see the same counts, waiting up to a second for another
// process's (one that died holding it costs that second, once).
func lockDir(dir string) (unlock func()) {
	lock := filepath.Join(dir, "lock")
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
			f.Close()
			break
		}
	}
	return func() { _ = os.Remove(lock) }
}
