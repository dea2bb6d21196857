package fs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"nameservice.dev/nameservice/driver"
	nsfs "nameservice.dev/nameservice/drivers/fs"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// The helper process: the test binary re-executed with helperEnv set to a
// mode, working on the directory in helperDir.
const (
	helperEnv    = "NS_FS_HELPER"
	helperDir    = "NS_FS_HELPER_DIR"
	helperLayout = "NS_FS_HELPER_LAYOUT"
	helperN      = "NS_FS_HELPER_N"
)

// TestHelperProcess is not a test: it is the child of the process tests.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	l, _ := jsonld.ParseLayout(os.Getenv(helperLayout))
	d, err := nsfs.Open(context.Background(), nsfs.Config{Dir: os.Getenv(helperDir), Layout: l})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	n, _ := strconv.Atoi(os.Getenv(helperN))
	switch mode {
	case "contend":
		ok, err := casIncrements(d, n)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(ok)
	case "push":
		if err := pushForever(d, n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(0)
}

var sharedID = model.ID{Name: "shared", Branch: "main"}

// casIncrements tries n times to move status_v up by one by compare-and-set
// and returns how many attempts were applied.
func casIncrements(d driver.Driver, n int) (int, error) {
	ctx := context.Background()
	applied := 0
	for range n {
		rec, err := d.Get(ctx, sharedID)
		if err != nil {
			return 0, err
		}
		cur := *rec.Status
		next := model.Value{V: cur.V + 1, Payload: model.Object{"state": "ready", "by": strconv.Itoa(os.Getpid())}}
		out, err := d.Update(ctx, sharedID, model.Status, driver.IfEquals(cur), next)
		if err != nil {
			return 0, err
		}
		if out.Applied {
			applied++
		}
	}
	return applied, nil
}

func spawn(t *testing.T, mode, dir string, l jsonld.Layout, n int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDir+"="+dir, helperLayout+"="+l.String(), helperN+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	return cmd
}

// TestCrossProcessContention: this process and a child CAS-increment the
// same status at once; the final status_v is every applied push plus one.
func TestCrossProcessContention(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			dir := t.TempDir()
			d := open(t, dir, nsfs.Config{Layout: l})
			mustCreate(t, d, sharedID.String())
			const n = 150
			child := spawn(t, "contend", dir, l, n)
			out, err := child.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			var mine int
			var wg sync.WaitGroup
			var mu sync.Mutex
			for range 2 { // two goroutines here, each its own client
				wg.Add(1)
				go func() {
					defer wg.Done()
					k, err := casIncrements(open(t, dir, nsfs.Config{Layout: l}), n)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					mine += k
					mu.Unlock()
				}()
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			wg.Wait()
			if err := child.Wait(); err != nil {
				t.Fatalf("child: %v", err)
			}
			theirs, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatalf("child said %q", line)
			}
			rec, err := d.Get(context.Background(), sharedID)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status.V != int64(mine+theirs+1) {
				t.Fatalf("status_v %d, want %d applied + 1 (%d here, %d in the child)", rec.Status.V, mine+theirs, mine, theirs)
			}
			if theirs == 0 || mine == 0 {
				t.Logf("no interleaving: %d here, %d in the child", mine, theirs)
			}
		})
	}
}

// pushForever alternates status and head pushes, printing each
// acknowledged one ("status 5", "head 7") before the next, until killed or
// n are done.
func pushForever(d driver.Driver, n int) error {
	ctx := context.Background()
	for i := range n {
		rec, err := d.Get(ctx, sharedID)
		if err != nil {
			return err
		}
		c, next := model.Status, model.Value{V: rec.Status.V + 1, Payload: model.Object{"state": "ready", "i": strconv.Itoa(i)}}
		if i%2 == 1 {
			c, next = model.Head, model.RefValue("commit-"+strconv.Itoa(i), rec.Head.V+1)
		}
		out, err := d.Update(ctx, sharedID, c, driver.IfEquals(*rec.Value(c)), next)
		if err != nil {
			return err
		}
		if !out.Applied {
			return fmt.Errorf("push %d not applied, no one else writes", i)
		}
		fmt.Printf("%s %d\n", c, next.V)
	}
	return nil
}

// TestCrashSafety SIGKILLs a child at random moments while it pushes, 200
// pushes in all. After each kill every record file parses and every
// watermark is at least the last one the child acknowledged.
func TestCrashSafety(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			dir := t.TempDir()
			d := open(t, dir, nsfs.Config{Layout: l})
			mustCreate(t, d, sharedID.String())
			acked := map[string]int64{}
			total, kills := 0, 0
			for round := 0; total < 200 && round < 100; round++ {
				n, killed := crashRound(t, dir, l, 200-total, acked)
				total += n
				if killed {
					kills++
				}
				checkAfterCrash(t, d, dir, acked)
			}
			if total < 200 {
				t.Fatalf("only %d pushes acknowledged", total)
			}
			t.Logf("%d pushes, %d kills", total, kills)
		})
	}
}

// crashRound runs one child and kills it a random moment (0-500µs) after
// its k-th acknowledgement, k random from 1 to 15, so kills land while it
// writes; it records what the child acknowledged.
func crashRound(t *testing.T, dir string, l jsonld.Layout, n int, acked map[string]int64) (int, bool) {
	t.Helper()
	child := spawn(t, "push", dir, l, n)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	k := 1 + rand.IntN(15)
	got, killed := 0, false
	for line := range lines {
		c, v, _ := strings.Cut(line, " ")
		acked[c], _ = strconv.ParseInt(v, 10, 64)
		if got++; got == k && !killed {
			time.AfterFunc(time.Duration(rand.IntN(500))*time.Microsecond, func() {
				_ = child.Process.Signal(syscall.SIGKILL)
			})
			killed = true
		}
	}
	_ = child.Wait()
	return got, killed
}

func checkAfterCrash(t *testing.T, d *nsfs.Driver, dir string, acked map[string]int64) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(dir, "ns@v2"), func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if _, err := jsonld.Decode(b); err != nil || !json.Valid(b) {
			t.Errorf("%s does not parse after a crash: %v\n%s", p, err, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := d.Get(context.Background(), sharedID)
	if err != nil {
		t.Fatalf("get after a crash: %v", err)
	}
	if rec.Status.V < acked["status"] || rec.Head.V < acked["head"] {
		t.Fatalf("after a crash: status_v %d head %d, but %v acknowledged", rec.Status.V, rec.Head.V, acked)
	}
}
